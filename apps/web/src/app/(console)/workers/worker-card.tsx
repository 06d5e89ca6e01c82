'use client';

import type { inferRouterOutputs } from '@trpc/server';
import Link from 'next/link';
import { Fragment } from 'react';
import { Meter } from '@/components/charts';
import { formatDuration, relative } from '@/components/format';
import { Time } from '@/components/time';
import { Card } from '@/components/ui';
import { plural } from '@/lib/plural';
import type { AppRouter } from '@/server/routers/app';

export type WorkerView = inferRouterOutputs<AppRouter>['cluster']['workers']['workers'][number];

/**
 * One worker as the Workers page shows it: live or gone, what it offers (pool, labels, job
 * types), how busy its slots are, and each job it runs with its fence and lease times.
 */
export function WorkerCard({ worker, now, leaseTtlMs }: { worker: WorkerView; now: number; leaseTtlMs: number }) {
  return (
    <Card
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
        <span data-testid={`worker-types-${worker.id}`}>{worker.offer.types.length > 0 ? worker.offer.types.join(', ') : <span className="muted">not reported</span>}</span>
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
                      {l.leaseExpiresAt ? relative(new Date(new Date(l.leaseExpiresAt).getTime() - leaseTtlMs), now) : '–'}
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
  );
}
