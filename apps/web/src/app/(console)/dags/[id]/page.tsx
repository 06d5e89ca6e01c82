'use client';

import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams, usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useState } from 'react';
import { livePoll, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { scheduleText } from '@/components/format';
import { DagGraph } from '@/components/dag-graph';
import { NotFoundCard } from '@/components/not-found-card';
import { AuditTable } from '@/components/audit-table';
import { BackfillCard } from '@/components/backfill-card';
import { RunGridCard } from '@/components/run-grid';
import { canOperate, useRole } from '@/components/shell';
import { Card, Empty, LiveDot, PageHeader, StateBadge } from '@/components/ui';
import { isNotFound } from '@/lib/live-query';
import { TriggerForm } from './trigger-form';
import { VersionsCard } from './versions-card';
import { DagChips } from './dag-chips';
import { RunPager, RunTable } from '@/components/run-table';
import { runListHref } from '@/lib/run-links';
import { fingerprintOf, KEY_KEPT_MS, RequestKeys } from '@/lib/request-keys';

/** The DAG page's own URL parameters for its runs list, apart from the page's others. */
const RUNS_PREFIX = 'runs.';
const RUNS_PAGE = '20';

/** The id as the address gives it; a segment that is no percent-encoding of UTF-8 stays as it came, which names no DAG. */
function decodedSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export default function DagPage() {
  const { id: rawId } = useParams<{ id: string }>();
  const id = decodedSegment(rawId);
  const trpc = useTRPC();
  const role = useRole();
  const router = useRouter();
  const queryClient = useQueryClient();
  const dag = useQuery(trpc.dags.get.queryOptions({ id }, { refetchInterval: livePoll }));
  const missing = isNotFound(dag.error);
  // A DAG that stops existing while the page is open keeps its last answer in the cache; the page follows the store.
  const found = missing ? undefined : dag.data;
  const [selectedRun, setSelectedRun] = useState<string | null>(null);
  // The DAG's runs page by the store's cursor, kept in the URL (runs.cursor) so a page of
  // them can be linked to and reloaded.
  const path = usePathname();
  const search = useSearchParams();
  const runsCursor = search.get(`${RUNS_PREFIX}cursor`) ?? undefined;
  const runsPage = useQuery(
    trpc.runs.list.queryOptions({ dag: id, cursor: runsCursor, limit: RUNS_PAGE }, { enabled: !missing, refetchInterval: livePoll, placeholderData: keepPreviousData }),
  );
  const runs = missing ? [] : (runsPage.data?.rows ?? []);
  const runsHref = (cursor: string | null) => (cursor ? runListHref(path, { cursor }, search, RUNS_PREFIX) : null);
  const runId = selectedRun ?? runs[0]?.id ?? null;
  const timeline = useQuery(trpc.runs.timeline.queryOptions({ runId: runId ?? '0' }, { enabled: runId !== null, refetchInterval: livePoll }));
  const invalidate = () =>
    Promise.all([queryClient.invalidateQueries({ queryKey: trpc.dags.get.queryKey({ id }) }), queryClient.invalidateQueries({ queryKey: trpc.runs.list.pathKey() })]);
  const trigger = useMutation(
    trpc.dags.trigger.mutationOptions({
      onSuccess: (run) => {
        setSelectedRun(run.id);
        setFormOpen(false);
        void invalidate();
      },
    }),
  );
  // One run per click: the request key is kept while the request is out and for a while after
  // its answer, so a double click, an impatient second click or a retry asks for the same run.
  const [keys] = useState(() => new RequestKeys());
  // A DAG that declares params is triggered from a form made from the declaration.
  const [formOpen, setFormOpen] = useState(false);
  const triggerClicked = (paused: boolean, declaresParams: boolean) => {
    if (declaresParams && !formOpen) {
      trigger.reset();
      setFormOpen(true);
      return;
    }
    if (paused && !window.confirm(`${id} is paused: its schedule queues nothing. Queue a manual run now all the same?`)) return;
    queueRun(undefined);
  };
  const queueRun = (params: Record<string, unknown> | undefined) => {
    const requestKey = keys.keyFor(fingerprintOf({ id, params }));
    trigger.mutate({ id, requestKey, params }, { onSettled: () => keys.answered(requestKey) });
  };
  const catchupChosen = (policy: 'none' | 'latest' | 'all', current: string, version: number) => {
    if (policy === current) return;
    if (!window.confirm(`Change catch-up from ${current} to ${policy}? Catch-up is part of the spec: this saves version ${version + 1} of ${id}.`)) return;
    catchup.mutate({ id, catchup: { ...d!.spec.catchup, policy } });
  };
  const pause = useMutation(trpc.dags.setPaused.mutationOptions({ onSuccess: () => void invalidate() }));
  const catchup = useMutation(trpc.dags.setCatchup.mutationOptions({ onSuccess: () => void invalidate() }));

  const d = found?.dag;
  const states: Record<string, string> = {};
  const details: Record<string, string> = {};
  if (timeline.data && timeline.data.run.id === runId) {
    for (const j of timeline.data.jobs) {
      states[j.job.taskId] = j.job.state;
      // The attempt's number in the job's life, which a clear does not reset, as the run page numbers it.
      const tries = j.attempts.at(-1)?.number ?? 0;
      if (tries > 1) details[j.job.taskId] = `try ${tries}`;
    }
  }

  return (
    <>
      <PageHeader
        title={
          <>
            <span data-testid="dag-title">{id}</span> {d ? <LiveDot fetching={dag.isFetching} /> : null}
          </>
        }
        subtitle={d ? `${d.spec.name ?? 'Untitled'} · ${scheduleText(d.spec.schedule)} · version ${d.version} · shard ${d.shard}` : undefined}
        actions={
          d && canOperate(role) ? (
            <>
              <button
                className="primary"
                data-testid="trigger-run"
                disabled={trigger.isPending}
                onClick={() => triggerClicked(d.paused, Object.keys(d.spec.params ?? {}).length > 0)}
              >
                ▶ Trigger run
              </button>
              <button data-testid="toggle-pause" disabled={pause.isPending} onClick={() => pause.mutate({ id, paused: !d.paused })}>
                {d.paused ? 'Resume' : 'Pause'}
              </button>
              <button data-testid="edit-dag" onClick={() => router.push(`/editor?dag=${encodeURIComponent(id)}`)}>
                Edit
              </button>
            </>
          ) : null
        }
      />
      {missing ? (
        <NotFoundCard
          title={
            <>
              There is no DAG <code>{id}</code>.
            </>
          }
          error={dag.error}
          back={{ href: '/dags', label: 'All DAGs' }}
        />
      ) : (
        <ErrorBox error={dag.error} what={`Reading DAG ${id}`} />
      )}
      <ErrorBox error={trigger.error} what="Trigger" />
      {trigger.data && !trigger.isPending ? (
        <p className="small" role="status" data-testid="trigger-status">
          Queued <Link href={`/runs/${trigger.data.id}`}>run #{trigger.data.id}</Link>. Clicking again within {KEY_KEPT_MS / 1000} s asks for this same run.
        </p>
      ) : null}
      {d && formOpen && d.spec.params ? (
        <TriggerForm
          declared={d.spec.params}
          pending={trigger.isPending}
          error={trigger.error}
          onSubmit={(params) => {
            if (d.paused && !window.confirm(`${id} is paused: its schedule queues nothing. Queue a manual run now all the same?`)) return;
            queueRun(params);
          }}
          onCancel={() => setFormOpen(false)}
        />
      ) : null}
      <ErrorBox error={pause.error} what="Pause / resume" />
      {d ? (
        <>
          <DagChips dag={d} now={found!.now} canChange={canOperate(role) && !catchup.isPending} onCatchup={(policy) => catchupChosen(policy, d.spec.catchup.policy, d.version)} />
          <ErrorBox error={catchup.error} what="Changing catch-up" />
          <Card
            title={
              <>
                Graph {runId ? <span className="muted">· run #{runId}</span> : <span className="muted">· no run yet</span>}
                {timeline.data && timeline.data.run.id === runId ? (
                  <>
                    {' '}
                    <StateBadge state={timeline.data.run.state} testId="graph-run-state" />
                  </>
                ) : null}
              </>
            }
            actions={runId ? <Link href={`/runs/${runId}`}>Run detail →</Link> : null}
          >
            <DagGraph tasks={(timeline.data?.run.id === runId ? timeline.data.spec : d.spec).tasks} states={states} details={details} />
          </Card>
          <RunGridCard dagId={d.id} />
          <div className="grid-2">
            <Card
              title="Runs"
              actions={
                <>
                  <RunPager testId="dag-runs-pager" previous={runsHref(runsPage.data?.previous ?? null)} next={runsHref(runsPage.data?.next ?? null)} />
                  <Link href={runListHref('/runs', { dag: id })}>All runs →</Link>
                </>
              }
            >
              <ErrorBox error={runsPage.error} what="Listing the DAG's runs" />
              {runsPage.data && runs.length === 0 && !runsCursor ? (
                <Empty>No runs yet.</Empty>
              ) : (
                <RunTable testId="run-history" runs={runs} now={runsPage.data?.now ?? found!.now} showDag={false} selectedId={runId} onSelect={setSelectedRun} />
              )}
            </Card>
            <VersionsCard versions={found?.versions ?? []} current={d.version} />
          </div>
          <BackfillCard dagId={d.id} scheduled={d.spec.schedule.kind !== 'manual'} />
          <Card title="Changes" actions={<Link href="/audit">Audit log →</Link>}>
            <div data-testid="dag-audit">
              <AuditTable filter={{ dagId: d.id }} limit={20} showDag={false} />
            </div>
          </Card>
        </>
      ) : null}
    </>
  );
}
