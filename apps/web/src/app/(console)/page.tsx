'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { BarChart } from '@/components/charts';
import { ErrorBox } from '@/components/errors';
import { formatTime, percent, relative } from '@/components/format';
import { Time, useShownZone } from '@/components/time';
import { Card, LiveDot, PageHeader, Stat } from '@/components/ui';
import { plural } from '@/lib/plural';
import { runListHref } from '@/lib/run-links';

/** An hour before store time `now`, as the runs list's `from` takes it. */
function hourBefore(now: Date | string): string {
  return new Date(new Date(now).getTime() - 3_600_000).toISOString();
}

export default function OverviewPage() {
  const trpc = useTRPC();
  const q = useQuery(trpc.cluster.overview.queryOptions(undefined, { refetchInterval: LIVE_MS }));
  const o = q.data;
  const unled = o?.shards.filter((s) => !s.led) ?? [];
  const zone = useShownZone();
  return (
    <>
      <PageHeader
        title={
          <>
            Overview <LiveDot fetching={q.isFetching} />
          </>
        }
        subtitle={
          o ? (
            <>
              {plural(o.dagCountEstimate, 'DAG')} · {plural(o.runsActive, 'active run')} · store time <Time at={o.now} parts="time" testId="store-time" />
            </>
          ) : (
            'Loading…'
          )
        }
      />
      <ErrorBox error={q.error} what="Reading the overview" />
      {o ? (
        <>
          <div className="stats">
            <Stat testId="stat-running" label="Jobs running" value={o.jobsRunning} hint="leased to a worker now" />
            <Stat testId="stat-ready" label="Ready" value={o.jobsReady} hint="waiting for a slot" />
            <Stat
              testId="stat-capped"
              label="Waiting on the cap"
              value={o.jobsWaitingOnCap}
              tone={o.jobsWaitingOnCap > 0 ? 'warn' : undefined}
              hint={<Link href="/fair-share">see fair share</Link>}
            />
            <Stat testId="stat-started" label="Started, last hour" value={o.startedLastHour.toLocaleString()} hint="leases granted" />
            <Stat
              testId="stat-failed"
              label="Failed, last hour"
              value={o.failedLastHour}
              tone={o.failedLastHour > 0 ? 'bad' : 'good'}
              hint={
                <>
                  {o.succeededLastHour.toLocaleString()} succeeded ·{' '}
                  <Link href={runListHref('/runs', { state: 'failed', from: hourBefore(o.now) })} data-testid="failed-runs-link">
                    failed runs
                  </Link>
                </>
              }
            />
            <Stat
              testId="stat-fenced"
              label="Fenced writes refused"
              value={o.fencedWritesLastHour}
              tone={o.fencedWritesLastHour > 0 ? 'warn' : undefined}
              hint="last hour: stale or forged tokens"
            />
          </div>
          <div className="grid-2">
            <Card title="Worker pool" actions={<Link href="/workers">Workers →</Link>}>
              <div className="pool">
                <div className="pool-figure" data-testid="pool-size">
                  <strong>{o.poolSlots}</strong> slots on <strong>{o.liveWorkers}</strong> live workers
                </div>
                <div className="utilisation">
                  <div className="meter big">
                    <div className={`meter-fill ${o.utilisation >= 1 ? 'full' : ''}`} style={{ width: `${Math.min(1, o.utilisation) * 100}%` }} />
                  </div>
                  <span data-testid="utilisation">{percent(o.utilisation)} used</span>
                </div>
              </div>
            </Card>
            <Card
              title={
                <>
                  Shard health{' '}
                  {unled.length === 0 ? (
                    <span className="badge state-succeeded">all {o.shardCount} led</span>
                  ) : (
                    <span className="badge state-failed">{unled.length} without a leader</span>
                  )}
                </>
              }
              actions={<Link href="/shards">Shards →</Link>}
            >
              <div className="shard-grid" data-testid="shard-health">
                {o.shards.map((s) => (
                  <div
                    key={s.shard}
                    className={`shard-cell ${s.led ? 'led' : 'unled'}`}
                    data-testid={`shard-cell-${s.shard}`}
                    data-led={s.led}
                    title={s.led ? `led by ${s.holder}, epoch ${s.epoch}, lease ${relative(s.expiresAt, o.now)}` : 'no live leader'}
                  >
                    <span className="shard-no">{s.shard}</span>
                    <span className="shard-holder">{s.holder ?? 'no leader'}</span>
                    <span className="shard-epoch">epoch {s.epoch}</span>
                  </div>
                ))}
              </div>
            </Card>
          </div>
          <Card title="Throughput: jobs finished per minute, last 30 minutes">
            <BarChart
              testId="throughput-chart"
              label={`Jobs finished per minute over the last 30 minutes: ${o.throughput.reduce((n, t) => n + t.succeeded, 0)} succeeded, ${o.throughput.reduce((n, t) => n + t.failed, 0)} failed`}
              values={o.throughput.map((t) => t.succeeded)}
              secondary={o.throughput.map((t) => t.failed)}
              labels={o.throughput.map((t) => formatTime(t.at, zone, 'minutes'))}
            />
            <div className="chart-axis">
              <Time at={o.throughput[0]!.at} parts="minutes" />
              <span className="legend">
                <i className="swatch ok" /> succeeded <i className="swatch bad" /> failed
              </span>
              <span>now</span>
            </div>
          </Card>
        </>
      ) : null}
    </>
  );
}
