'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { Suspense, useState, type FormEvent } from 'react';
import { RUN_TRIGGER_NAMES } from '@fenceline/core';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { RunPager, RunTable } from '@/components/run-table';
import { LiveDot, PageHeader } from '@/components/ui';
import { runListHref, runListParams, type RunListParams } from '@/lib/run-links';

const RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
const PAGE = '50';

/** The filter form: its fields start from the URL, and applying them starts again at the first page. */
function RunFilters({ params, apply }: { params: RunListParams; apply: (next: RunListParams) => void }) {
  const [draft, setDraft] = useState<RunListParams>(params);
  const set = (key: keyof RunListParams) => (e: { target: { value: string } }) => setDraft({ ...draft, [key]: e.target.value });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply({ ...draft, dag: draft.dag?.trim(), from: draft.from?.trim(), to: draft.to?.trim(), cursor: undefined });
  };
  return (
    <form className="run-filters" onSubmit={submit} data-testid="run-filters">
      <label>
        State
        <select value={draft.state ?? ''} onChange={set('state')} data-testid="filter-state">
          <option value="">any</option>
          {RUN_STATES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <label>
        Trigger
        <select value={draft.trigger ?? ''} onChange={set('trigger')} data-testid="filter-trigger">
          <option value="">any</option>
          {RUN_TRIGGER_NAMES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <label>
        DAG
        <input value={draft.dag ?? ''} onChange={set('dag')} placeholder="any DAG" data-testid="filter-dag" />
      </label>
      <label>
        Scheduled from
        <input value={draft.from ?? ''} onChange={set('from')} placeholder="2026-01-31T09:00:00Z" data-testid="filter-from" />
      </label>
      <label>
        Scheduled before
        <input value={draft.to ?? ''} onChange={set('to')} placeholder="2026-01-31T10:00:00Z" data-testid="filter-to" />
      </label>
      <button type="submit" className="primary" data-testid="filter-apply">
        Apply
      </button>
    </form>
  );
}

function RunsList() {
  const trpc = useTRPC();
  const router = useRouter();
  const path = usePathname();
  const search = useSearchParams();
  const params = runListParams(search);
  const q = useQuery(trpc.runs.list.queryOptions({ limit: PAGE, ...params }, { refetchInterval: LIVE_MS, placeholderData: keepPreviousData }));
  const page = q.data;
  const order = params.order === 'oldest' ? 'oldest' : 'newest';
  const href = (next: RunListParams) => runListHref(path, next);
  const flip = href({ ...params, order: order === 'newest' ? 'oldest' : 'newest', cursor: undefined });
  return (
    <>
      <PageHeader
        title={
          <>
            Runs <LiveDot fetching={q.isFetching} />
          </>
        }
        subtitle={`every DAG's runs, ${order} first by scheduled time`}
      />
      <div className="toolbar">
        {/* Keyed by the URL, so following a link (the overview's counters, back) shows its filters. */}
        <RunFilters key={search.toString()} params={params} apply={(next) => router.push(href(next))} />
        <RunPager
          testId="runs-pager"
          previous={page?.previous ? href({ ...params, cursor: page.previous }) : null}
          next={page?.next ? href({ ...params, cursor: page.next }) : null}
        />
      </div>
      <ErrorBox error={q.error} what="Listing runs" />
      {page ? (
        <RunTable
          testId="runs-table"
          runs={page.rows}
          now={page.now}
          showDag
          sortHeader={
            <Link className="th-sort" href={flip} data-testid="sort-scheduled" data-order={order}>
              Scheduled {order === 'newest' ? '↓' : '↑'}
            </Link>
          }
        />
      ) : null}
    </>
  );
}

export default function RunsPage() {
  return (
    <Suspense>
      <RunsList />
    </Suspense>
  );
}
