'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { AuditAction } from '@fenceline/core/store';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { ErrorBox } from './errors';
import { Time } from './time';
import { Empty } from './ui';

export interface AuditFilter {
  actor?: string;
  action?: AuditAction;
  dagId?: string;
}

/** A details object as short "key: value" pairs, for one table cell. */
function detailText(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' · ');
}

/** The audit log's newest entries that match `filter`, live. */
export function AuditTable({ filter, limit = 100, showDag = true }: { filter: AuditFilter; limit?: number; showDag?: boolean }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.audit.list.queryOptions({ ...filter, limit }, { refetchInterval: LIVE_MS * 3 }));
  return (
    <>
      <ErrorBox error={q.error} what="Reading the audit log" />
      {q.data && q.data.length === 0 ? <Empty>No change recorded{filter.actor || filter.action || filter.dagId ? ' matches these filters' : ''}.</Empty> : null}
      {q.data && q.data.length > 0 ? (
        <div className="table-scroll">
          <table className="table compact" data-testid="audit-table">
            <thead>
              <tr>
                <th>When</th>
                <th>Who</th>
                <th>What</th>
                {showDag ? <th>DAG</th> : null}
                <th>Target</th>
                <th>Details</th>
                <th>From</th>
              </tr>
            </thead>
            <tbody>
              {q.data.map((e) => (
                <tr key={e.id} data-testid="audit-row" data-action={e.action} data-actor={e.actor}>
                  <td>
                    <Time at={e.at} />
                  </td>
                  <td>
                    {e.actor} <span className="muted">({e.actorKind})</span>
                  </td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  {showDag ? <td>{e.dagId ? <Link href={`/dags/${encodeURIComponent(e.dagId)}`}>{e.dagId}</Link> : '–'}</td> : null}
                  <td>{e.target ?? '–'}</td>
                  <td className="small">{detailText(e.details)}</td>
                  <td className="small" title={e.userAgent ?? undefined}>
                    {e.source}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
