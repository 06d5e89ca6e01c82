'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { DEFAULT_POOL } from '@fenceline/core';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { LineChart, Meter, seriesColor } from '@/components/charts';
import { ErrorBox } from '@/components/errors';
import { LimitsCard } from '@/components/limits-card';
import { Card, Empty, LiveDot, PageHeader } from '@/components/ui';
import { plural } from '@/lib/plural';

export default function FairSharePage() {
  const trpc = useTRPC();
  const q = useQuery(trpc.cluster.fairShare.queryOptions({ windowMs: 10 * 60_000 }, { refetchInterval: LIVE_MS }));
  const f = q.data;
  const pct = f ? Math.round(f.capFraction * 1000) / 10 : 0;
  // A DAG's swatch is its line's colour in the chart; DAGs without a line get none.
  const colorOf = (dagId: string) => {
    const i = f?.history.series.findIndex((s) => s.dagId === dagId) ?? -1;
    return i >= 0 ? seriesColor(i) : 'transparent';
  };
  return (
    <>
      <PageHeader
        title={
          <>
            Fair share <LiveDot fetching={q.isFetching} />
          </>
        }
        subtitle="No DAG may hold more than its cap of a worker pool at once; the cap adds no capacity, it decides who waits. Resource limits cap one external system across every DAG."
      />
      <ErrorBox error={q.error} what="Reading fair share" />
      {f ? (
        <>
          {f.pools.length === 0 ? (
            <div className="arithmetic" data-testid="cap-arithmetic">
              <span className="muted">No live worker: no pool has a slot, so every ready job waits.</span>
            </div>
          ) : null}
          {f.pools.map((p) => (
            // The default pool's line keeps the plain test ids: a cluster with one pool reads as before.
            <div className="arithmetic" key={p.pool} data-testid={p.pool === DEFAULT_POOL ? 'cap-arithmetic' : `cap-arithmetic-${p.pool}`}>
              <span>
                pool <code>{p.pool}</code> <strong data-testid={p.pool === DEFAULT_POOL ? 'pool-slots' : `pool-slots-${p.pool}`}>{p.slots}</strong> slots (
                {plural(p.liveWorkers, 'live worker')})
              </span>
              <span>×</span>
              <span>
                cap <strong>{pct}%</strong>
              </span>
              <span>=</span>
              <span>
                at most <strong data-testid={p.pool === DEFAULT_POOL ? 'cap-value' : `cap-value-${p.pool}`}>{p.cap}</strong> leases per DAG
              </span>
              {p.reserve === null ? (
                <span className="muted">· no lending: the cap is strict</span>
              ) : (
                <span>
                  · reserve <strong data-testid={p.pool === DEFAULT_POOL ? 'pool-reserve' : `pool-reserve-${p.pool}`}>{p.reserve}</strong> free slots, never lent ·{' '}
                  <strong data-testid={p.pool === DEFAULT_POOL ? 'pool-lent' : `pool-lent-${p.pool}`}>{p.lent}</strong> lent now
                </span>
              )}
            </div>
          ))}
          <p className="small muted">
            {f.leasedJobs} of {plural(f.poolSlots, 'slot')} busy.{' '}
            {f.lendReserve === null ? (
              <>The schedulers do not lend (FENCELINE_LEND=off): no DAG holds more than its cap.</>
            ) : (
              <>
                Leases beyond a DAG&apos;s cap are <strong>lent</strong>: borrowed from idle slots while more than the pool&apos;s reserve stays free (
                {Math.round(f.lendReserve.fraction * 1000) / 10}% of its slots, at least {plural(f.lendReserve.minSlots, 'slot')} but at most an eighth of the pool), and given back
                as they end; nothing running is stopped to give them back.
              </>
            )}
          </p>
          <LimitsCard />
          <Card title="Per DAG and pool, now">
            {f.dags.length === 0 ? (
              <Empty>No DAG has work in flight.</Empty>
            ) : (
              <div className="table-scroll">
                <table className="table" data-testid="share-table">
                  <thead>
                    <tr>
                      <th>DAG</th>
                      <th>Pool</th>
                      <th className="num">Leases held</th>
                      <th className="num">Lent</th>
                      <th style={{ width: '28%' }}>Against its cap</th>
                      <th className="num">Ready, waiting on cap</th>
                      <th className="num">Ready</th>
                      <th className="num">In backoff</th>
                      <th className="num">Waiting on deps</th>
                    </tr>
                  </thead>
                  <tbody>
                    {f.dags.map((d) => (
                      <tr
                        key={`${d.dagId}@${d.pool}`}
                        data-testid={d.pool === DEFAULT_POOL ? `share-${d.dagId}` : `share-${d.dagId}@${d.pool}`}
                        data-pool={d.pool}
                        data-held={d.held}
                        data-lent={d.lent}
                        data-cap={d.cap}
                        data-capped={d.waitingOnCap}
                      >
                        <td>
                          <i className="swatch" style={{ background: colorOf(d.dagId) }} /> <Link href={`/dags/${encodeURIComponent(d.dagId)}`}>{d.dagId}</Link>
                          {d.capOverridden ? <span className="muted small"> · own cap {Math.round(d.capFraction * 1000) / 10}%</span> : null}
                        </td>
                        <td>
                          <code>{d.pool}</code>
                        </td>
                        <td className="num" data-testid={d.pool === DEFAULT_POOL ? `share-${d.dagId}-held` : `share-${d.dagId}@${d.pool}-held`}>
                          {d.held - d.lent} / {d.cap}
                        </td>
                        <td className="num" data-testid={d.pool === DEFAULT_POOL ? `share-${d.dagId}-lent` : `share-${d.dagId}@${d.pool}-lent`}>
                          {d.lent > 0 ? <strong title="held beyond the cap, borrowed from idle slots">+{d.lent}</strong> : 0}
                        </td>
                        <td>
                          <Meter value={d.held - d.lent} max={d.cap} />
                          <div className="small muted">
                            {d.lent > 0 ? (
                              <span>at cap, {d.lent} more lent</span>
                            ) : d.held >= d.cap ? (
                              <span className="warn-text">
                                at cap: floor({Math.round(d.capFraction * 1000) / 10}% × {d.poolSlots}) = {d.cap}
                              </span>
                            ) : (
                              `${d.cap - d.held} more allowed`
                            )}
                          </div>
                        </td>
                        <td className="num">{d.waitingOnCap > 0 ? <strong className="warn-text">{d.waitingOnCap}</strong> : 0}</td>
                        <td className="num">{d.ready}</td>
                        <td className="num">{d.inBackoff}</td>
                        <td className="num">{d.waitingOnDeps}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
          <Card title="Leases held over the last 10 minutes">
            <LineChart
              testId="share-chart"
              label="Leases each DAG held over the last 10 minutes, with the cap"
              series={f.history.series.map((s) => ({ name: s.dagId, values: s.held }))}
              capLine={f.cap}
            />
            <p className="small muted">Each line sums a DAG&apos;s leases over its pools; the cap line is the default pool&apos;s.</p>
            <div className="legend small">
              {f.history.series.map((s, i) => (
                <span key={s.dagId}>
                  <i className="swatch" style={{ background: seriesColor(i) }} /> {s.dagId}
                </span>
              ))}
              <span>
                <i className="swatch cap" /> cluster cap
              </span>
            </div>
          </Card>
        </>
      ) : null}
    </>
  );
}
