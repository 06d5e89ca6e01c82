'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { Time } from '@/components/time';
import { Card, Empty, LiveDot, PageHeader } from '@/components/ui';
import { plural } from '@/lib/plural';
import { WorkerCard } from './worker-card';

export default function WorkersPage() {
  const trpc = useTRPC();
  const q = useQuery(trpc.cluster.workers.queryOptions(undefined, { refetchInterval: LIVE_MS }));
  const w = q.data;
  const now = w ? new Date(w.now).getTime() : Date.now();
  const live = w?.workers.filter((x) => x.live) ?? [];
  return (
    <>
      <PageHeader
        title={
          <>
            Workers <LiveDot fetching={q.isFetching} />
          </>
        }
        subtitle={
          w
            ? `${live.length} live · ${plural(
                live.reduce((s, x) => s + x.slots, 0),
                'slot',
              )} · ${plural(
                live.reduce((s, x) => s + x.leases.length, 0),
                'job',
              )} running`
            : 'Loading…'
        }
      />
      <ErrorBox error={q.error} what="Reading workers" />
      {w ? (
        <>
          <Card title="Pools, live workers">
            {w.pools.length === 0 ? (
              <Empty>No live worker: every job waits, ready, until one serves its pool.</Empty>
            ) : (
              <div className="table-scroll">
                <table className="table compact" data-testid="pools">
                  <thead>
                    <tr>
                      <th>Pool</th>
                      <th className="num">Live workers</th>
                      <th className="num">Slots</th>
                      <th>Labels</th>
                      <th>Job types</th>
                    </tr>
                  </thead>
                  <tbody>
                    {w.pools.map((p) => (
                      <tr key={p.pool} data-testid={`pool-${p.pool}`} data-workers={p.liveWorkers} data-slots={p.slots}>
                        <td>
                          <code>{p.pool}</code>
                        </td>
                        <td className="num">{p.liveWorkers}</td>
                        <td className="num">{p.slots}</td>
                        <td className="small">{p.labels.length > 0 ? p.labels.join(', ') : <span className="muted">none</span>}</td>
                        <td className="small">{p.types.length > 0 ? p.types.join(', ') : <span className="muted">not reported</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
          <div className="worker-grid">
            {w.workers.length === 0 ? <Empty>No worker has been seen in the last hour.</Empty> : null}
            {w.workers.map((worker) => (
              <WorkerCard key={worker.id} worker={worker} now={now} leaseTtlMs={w.leaseTtlMs} />
            ))}
          </div>
          <Card title="Revoked leases and refused writes, last hour">
            {w.revoked.length === 0 ? (
              <Empty>No lease was revoked and no fenced write refused in the last hour.</Empty>
            ) : (
              <div className="table-scroll">
                <table className="table compact" data-testid="revoked">
                  <thead>
                    <tr>
                      <th>When</th>
                      <th>What</th>
                      <th>Worker</th>
                      <th>Job</th>
                      <th className="num">Fence</th>
                      <th>Reason</th>
                    </tr>
                  </thead>
                  <tbody>
                    {w.revoked.map((r, i) => (
                      <tr key={i}>
                        <td className="small">
                          <Time at={r.at} />
                        </td>
                        <td>{r.type === 'lease:expired' ? 'lease expired, revoked' : 'write refused'}</td>
                        <td>
                          <code>{r.workerId ?? '–'}</code>
                        </td>
                        <td>
                          {r.runId ? (
                            <Link href={`/runs/${r.runId}`}>
                              {r.dagId ?? ''} job {r.jobId}
                            </Link>
                          ) : (
                            (r.jobId ?? '–')
                          )}
                        </td>
                        <td className="num">{r.fence ?? '–'}</td>
                        <td className="small prose">{r.reason ?? (r.type === 'lease:expired' ? 'not renewed within the TTL' : '–')}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
        </>
      ) : null}
    </>
  );
}
