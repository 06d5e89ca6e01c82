'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { percent, relative, scheduleText } from '@/components/format';
import { LiveDot, PageHeader, StateBadge, Empty } from '@/components/ui';
import { canOperate, useRole } from '@/components/shell';
import { plural } from '@/lib/plural';

type Sort = 'id' | 'nextRunAt' | 'updatedAt';
const PAGE = 50;

export default function DagsPage() {
  const trpc = useTRPC();
  const role = useRole();
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<Sort>('id');
  const [direction, setDirection] = useState<'asc' | 'desc'>('asc');
  const [offset, setOffset] = useState(0);

  // Searching waits for a pause in typing, so each keystroke does not cost a query.
  useEffect(() => {
    const timer = setTimeout(() => {
      setSearch(typed.trim());
      setOffset(0);
    }, 250);
    return () => clearTimeout(timer);
  }, [typed]);

  const q = useQuery(
    trpc.dags.list.queryOptions({ search: search || undefined, sort, direction, limit: PAGE, offset }, { refetchInterval: 3_000, placeholderData: keepPreviousData }),
  );
  const data = q.data;
  const sortBy = (column: Sort) => {
    if (column === sort) setDirection(direction === 'asc' ? 'desc' : 'asc');
    else {
      setSort(column);
      setDirection('asc');
    }
    setOffset(0);
  };
  const arrow = (column: Sort) => (sort === column ? (direction === 'asc' ? ' ↑' : ' ↓') : '');
  const last = data ? Math.min(offset + PAGE, data.total) : 0;

  return (
    <>
      <PageHeader
        title={
          <>
            DAGs <LiveDot fetching={q.isFetching} />
          </>
        }
        subtitle={
          data ? (
            <span data-testid="dag-list-total">
              {data.totalIsEstimate ? '≈ ' : ''}
              {plural(data.total, 'DAG')}
              {search ? ` matching "${search}"` : ''} · page answered in <span data-testid="dag-list-query-ms">{data.queryMs.toFixed(0)}</span> ms
            </span>
          ) : (
            'Loading…'
          )
        }
        actions={
          canOperate(role) ? (
            <Link className="button primary" href="/editor" data-testid="new-dag">
              New DAG
            </Link>
          ) : null
        }
      />
      <div className="toolbar">
        <input className="search" data-testid="dag-search" placeholder="Search DAG ids…" value={typed} onChange={(e) => setTyped(e.target.value)} />
        <div className="pager">
          <button data-testid="page-prev" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            ← Prev
          </button>
          <span className="muted" data-testid="page-range">
            {data && data.total > 0 ? `${offset + 1}–${last}` : '0'}
          </span>
          <button data-testid="page-next" disabled={!data || offset + PAGE >= data.total} onClick={() => setOffset(offset + PAGE)}>
            Next →
          </button>
        </div>
      </div>
      <ErrorBox error={q.error} what="Listing DAGs" />
      <div className="table-wrap">
        <table className="table" data-testid="dag-table">
          <thead>
            <tr>
              <th>
                <button className="th-sort" onClick={() => sortBy('id')} data-testid="sort-id">
                  DAG{arrow('id')}
                </button>
              </th>
              <th>Schedule</th>
              <th>
                <button className="th-sort" onClick={() => sortBy('nextRunAt')} data-testid="sort-next">
                  Next run{arrow('nextRunAt')}
                </button>
              </th>
              <th>Last run</th>
              <th>Paused</th>
              <th className="num">Share of pool</th>
              <th>
                <button className="th-sort" onClick={() => sortBy('updatedAt')} data-testid="sort-updated">
                  Updated{arrow('updatedAt')}
                </button>
              </th>
            </tr>
          </thead>
          <tbody>
            {data?.rows.map((d) => (
              <tr key={d.id} data-testid={`dag-row-${d.id}`}>
                <td>
                  <Link href={`/dags/${encodeURIComponent(d.id)}`} className="strong">
                    {d.id}
                  </Link>
                  <div className="muted small">
                    {d.name ?? ''} {d.name ? '·' : ''} {plural(d.taskCount, 'task')} · v{d.version} · shard {d.shard}
                  </div>
                </td>
                <td>{scheduleText(d.schedule)}</td>
                <td data-testid={`next-run-${d.id}`}>
                  {d.paused ? <span className="muted">paused</span> : d.nextRunAt ? relative(d.nextRunAt) : <span className="muted">–</span>}
                </td>
                <td>
                  {d.lastRun ? (
                    <Link href={`/runs/${d.lastRun.id}`}>
                      <StateBadge state={d.lastRun.state} /> <span className="muted small">{relative(d.lastRun.scheduledAt)}</span>
                    </Link>
                  ) : (
                    <span className="muted">never ran</span>
                  )}
                </td>
                <td>{d.paused ? <span className="badge state-paused">paused</span> : <span className="muted">no</span>}</td>
                <td className="num">
                  {d.held > 0 ? (
                    <span title={`${plural(d.held, 'lease')} of ${plural(data.poolSlots, 'pool slot')}; cap ${d.cap}`}>
                      {percent(d.shareOfPool)}{' '}
                      <span className="muted small">
                        ({d.held}/{d.cap} cap)
                      </span>
                    </span>
                  ) : (
                    <span className="muted">0%</span>
                  )}
                </td>
                <td className="muted small">{relative(d.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {data && data.rows.length === 0 ? <Empty>No DAG matches. {canOperate(role) ? <Link href="/editor">Create one in the editor.</Link> : null}</Empty> : null}
      </div>
    </>
  );
}
