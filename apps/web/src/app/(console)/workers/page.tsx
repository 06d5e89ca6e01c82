'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { Fragment } from 'react';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { Meter } from '@/components/charts';
import { ErrorBox } from '@/components/errors';
import { formatDuration, relative } from '@/components/format';
import { Time } from '@/components/time';
import { Card, Empty, LiveDot, PageHeader } from '@/components/ui';
import { plural } from '@/lib/plural';

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
              <Card
                key={worker.id}
                className={worker.live ? '' : 'gone'}
                title={
                  <span data-testid={`worker-${worker.id}`}>
                    {worker.id} {worker.live ? <span className="badge state-succeeded">live</span> : <span className="badge state-failed">gone</span>}
                  </span>
                }
              >
                <div className="kv small">
                  <span>Pool</span>
                  <span data-testid={`worker-pool-${worker.id}`}>
                    <code>{worker.offer.pool}</code>
                    {worker.offerReported ? null : <span className="muted"> (assumed: this worker sent no offer)</span>}
                  </span>
                  <span>Labels</span>
                  <span data-testid={`worker-labels-${worker.id}`}>{worker.offer.labels.length > 0 ? worker.offer.labels.join(', ') : <span className="muted">none</span>}</span>
                  <span>Job types</span>
                  <span data-testid={`worker-types-${worker.id}`}>
                    {worker.offer.types.length > 0 ? worker.offer.types.join(', ') : <span className="muted">not reported</span>}
                  </span>
                  <span>Slots</span>
                  <span>
                    {worker.leases.length} / {worker.slots} busy <Meter value={worker.leases.length} max={worker.slots} />
                  </span>
                  <span>Scheduler</span>
                  <code>{worker.nodeId ?? '–'}</code>
                  <span>Last seen</span>
                  <span>{relative(worker.lastSeen, now)}</span>
                  <span>Up since</span>
                  <span>
                    <Time at={worker.startedAt} />
                  </span>
                  <span>Running</span>
                  <span data-testid={`worker-running-${worker.id}`}>{worker.leases.length > 0 ? plural(worker.leases.length, 'job') : 'nothing: idle'}</span>
                </div>
                {worker.leases.length > 0 ? (
                  <div className="table-scroll">
                    <table className="table compact">
                      <thead>
                        <tr>
                          <th className="num">Fence</th>
                          <th className="num">Lease age</th>
                          <th className="num">Last renewal</th>
                          <th className="num">Expires</th>
                        </tr>
                      </thead>
                      <tbody>
                        {/* Each job's name has a row of its own above its figures: beside four columns in a card it was squeezed to a few letters. */}
                        {worker.leases.map((l) => (
                          <Fragment key={l.jobId}>
                            <tr className="job-name-row">
                              <td className="job-cell" colSpan={4}>
                                <Link href={`/runs/${l.runId}`} title={`${l.dagId} / ${l.taskId}`} data-testid={`worker-job-${l.jobId}`}>
                                  <span className="job-task">{l.taskId}</span>
                                  <span className="job-dag muted small">{l.dagId}</span>
                                </Link>
                              </td>
                            </tr>
                            <tr className="job-figures">
                              <td className="num">
                                <code>{l.fence}</code>
                              </td>
                              <td className="num">{l.leasedAt ? formatDuration(now - new Date(l.leasedAt).getTime()) : '–'}</td>
                              <td className="num" title="the lease's expiry minus the lease TTL: when it was last granted or renewed">
                                {l.leaseExpiresAt ? relative(new Date(new Date(l.leaseExpiresAt).getTime() - w.leaseTtlMs), now) : '–'}
                              </td>
                              <td className="num">{relative(l.leaseExpiresAt, now)}</td>
                            </tr>
                          </Fragment>
                        ))}
                      </tbody>
                    </table>
                  </div>
                ) : null}
              </Card>
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
