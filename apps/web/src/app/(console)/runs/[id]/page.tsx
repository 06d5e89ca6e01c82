'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useParams, useSearchParams } from 'next/navigation';
import { Fragment, useState } from 'react';
import { LIVE_MS, livePoll, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { formatDuration, relative } from '@/components/format';
import { Time } from '@/components/time';
import { DagGraph } from '@/components/dag-graph';
import { NotFoundCard } from '@/components/not-found-card';
import { Card, LiveDot, PageHeader, StateBadge } from '@/components/ui';
import { isNotFound } from '@/lib/live-query';
import { Gantt } from './gantt';
import { AttemptLogs } from './attempt-logs';
import { LastError } from './last-error';
import { JobActions, RunActionBar } from './run-actions';
import { LiveLog } from './live-log';
import { RunDurationCard } from './run-duration';
import { EffectsCard } from './effects-card';
import { effectSummary } from '@/lib/effect-summary';
import { plural } from '@/lib/plural';
import { attemptsText } from '@fenceline/core';

export default function RunPage() {
  const { id } = useParams<{ id: string }>();
  const trpc = useTRPC();
  const q = useQuery(trpc.runs.timeline.queryOptions({ runId: id }, { refetchInterval: livePoll }));
  const missing = isNotFound(q.error);
  // The job shown in the side panel is addressed by its task (?task=extract), so a link (the
  // DAG page's grid) can open the run with a job selected; choosing another keeps the URL in step.
  const search = useSearchParams();
  const [selected, setSelectedTask] = useState<string | null>(search.get('task'));
  const setSelected = (taskId: string | null) => {
    setSelectedTask(taskId);
    const url = new URL(window.location.href);
    if (taskId === null) url.searchParams.delete('task');
    else url.searchParams.set('task', taskId);
    window.history.replaceState(window.history.state, '', url);
  };
  const t = missing ? undefined : q.data;
  const job = t?.jobs.find((j) => j.job.taskId === selected) ?? null;
  const result = useQuery(
    trpc.runs.result.queryOptions(
      { jobId: job?.job.id ?? '0' },
      { enabled: job !== null, refetchInterval: job && !['succeeded', 'failed'].includes(job.job.state) ? LIVE_MS : false },
    ),
  );
  // Read until the job has ended and its last attempt is in the list: the answer read while
  // it ran would otherwise be kept after it ended.
  const ended = job !== null && ['succeeded', 'failed'].includes(job.job.state);
  const attempts = useQuery(
    trpc.runs.attempts.queryOptions(
      { jobId: job?.job.id ?? '0' },
      { enabled: job !== null, refetchInterval: (query) => (ended && query.state.data?.some((a) => a.fence === job.job.fence) ? false : LIVE_MS) },
    ),
  );
  const states = Object.fromEntries(t?.jobs.map((j) => [j.job.taskId, j.job.state]) ?? []);
  const counts = new Map<string, number>();
  for (const j of t?.jobs ?? []) counts.set(j.job.state, (counts.get(j.job.state) ?? 0) + 1);
  const end = t ? (t.run.endedAt ? new Date(t.run.endedAt).getTime() : new Date(t.now).getTime()) : 0;

  return (
    <>
      <PageHeader
        title={
          <>
            Run #{id} {t ? <StateBadge state={t.run.state} testId="run-state" /> : null} {t ? <LiveDot fetching={q.isFetching} /> : null}
          </>
        }
        subtitle={
          t ? (
            <>
              <Link href={`/dags/${encodeURIComponent(t.run.dagId)}`}>{t.run.dagId}</Link> v{t.run.dagVersion} · {t.run.trigger} · scheduled{' '}
              <Time at={t.run.scheduledAt} testId="run-scheduled" /> · shard {t.run.shard}
              {t.run.startedAt ? ` · ${t.run.endedAt ? 'took' : 'running for'} ${formatDuration(end - new Date(t.run.startedAt).getTime())}` : ''}
            </>
          ) : undefined
        }
      />
      {missing ? (
        <NotFoundCard title={<>There is no run #{id}.</>} error={q.error} back={{ href: '/dags', label: 'All DAGs (each lists its runs)' }} />
      ) : (
        <ErrorBox error={q.error} what={`Reading run ${id}`} />
      )}
      {t ? (
        <>
          <div className="chips">
            {[...counts].map(([state, n]) => (
              <span key={state} className="chip">
                <span className={`dot state-${state}`} /> {n} {state.replace('_', ' ')}
              </span>
            ))}
            {t.fencedWrites.length > 0 ? <span className="chip warn">{plural(t.fencedWrites.length, 'fenced write')} refused</span> : null}
          </div>
          <RunActionBar runId={t.run.id} runState={t.run.state} failed={(counts.get('failed') ?? 0) + (counts.get('upstream_failed') ?? 0)} />
          {Object.keys(t.run.params).length > 0 ? (
            <Card title="Params">
              <div className="kv" data-testid="run-params">
                {Object.keys(t.run.params)
                  .sort()
                  .map((name) => (
                    <Fragment key={name}>
                      <span>{name}</span>
                      <code data-testid={`run-param-${name}`}>{JSON.stringify(t.run.params[name])}</code>
                    </Fragment>
                  ))}
              </div>
            </Card>
          ) : null}
          <RunDurationCard runId={t.run.id} />
          <Card title="Graph">
            <DagGraph tasks={t.spec.tasks} states={states} onSelect={setSelected} height={300} />
          </Card>
          <EffectsCard runId={t.run.id} jobs={t.jobs.map((j) => ({ id: j.job.id, taskId: j.job.taskId }))} onSelect={setSelected} />
          <div className="run-layout">
            <Card title="Timeline of every attempt">
              <Gantt timeline={t} selected={selected} onSelect={setSelected} />
            </Card>
            <Card title={job ? `Job ${job.job.taskId}` : 'Job'} className="side">
              {job ? (
                <div className="job-detail" data-testid="job-detail">
                  <div className="kv">
                    <span>State</span>
                    <StateBadge state={job.job.state} testId="job-state" />
                    <span>Job id</span>
                    <code>{job.job.id}</code>
                    <span>Fence</span>
                    <code>{job.job.fence}</code>
                    <span>Attempts</span>
                    <span data-testid="job-attempts" data-seen={job.attempts.length} data-budget={job.job.attempt}>
                      {attemptsText({ seen: job.attempts.length, attempt: job.job.attempt, maxAttempts: job.job.maxAttempts, lastClear: job.clears.at(-1) ?? null })}
                    </span>
                    <span>Effect</span>
                    <JobEffect effects={result.data?.effects} />
                    <span>Depends on</span>
                    <span>{job.dependsOn.join(', ') || 'nothing (a root)'}</span>
                    {job.job.holder ? (
                      <>
                        <span>Holder</span>
                        <code>{job.job.holder}</code>
                      </>
                    ) : null}
                    {job.job.state === 'leased' && job.job.leaseExpiresAt ? (
                      <>
                        <span>Lease</span>
                        <span>expires {relative(job.job.leaseExpiresAt, t.now)}</span>
                      </>
                    ) : null}
                  </div>
                  {job.waitingReason ? (
                    <div className="why" data-testid="waiting-reason">
                      <strong>Why it waits:</strong> {job.waitingReason}
                    </div>
                  ) : null}
                  <LastError job={job} />
                  <JobActions key={job.job.taskId} runId={t.run.id} taskId={job.job.taskId} state={job.job.state} />
                  <h3>Attempts</h3>
                  <div className="table-scroll">
                    <table className="table compact">
                      <thead>
                        <tr>
                          <th>#</th>
                          <th>Worker</th>
                          <th>Fence</th>
                          <th>Outcome</th>
                          <th className="num">Took</th>
                        </tr>
                      </thead>
                      <tbody>
                        {job.attempts.map((a) => (
                          <Fragment key={a.fence}>
                            {a.afterClear ? <ClearRow clear={a.afterClear} /> : null}
                            <tr data-testid={`attempt-row-${a.number}`}>
                              <td>{a.number}</td>
                              <td>
                                <code>{a.workerId ?? '–'}</code>
                              </td>
                              <td>
                                <code>{a.fence}</code>
                              </td>
                              <td>
                                <StateBadge state={a.outcome} />
                                {a.error ? <div className="small muted">{a.error}</div> : null}
                              </td>
                              <td className="num">{formatDuration((a.endedAt ? new Date(a.endedAt).getTime() : new Date(t.now).getTime()) - new Date(a.grantedAt).getTime())}</td>
                            </tr>
                          </Fragment>
                        ))}
                        {job.pendingClear ? <ClearRow clear={job.pendingClear} /> : null}
                      </tbody>
                    </table>
                  </div>
                  {job.job.state === 'leased' ? <LiveLog key={`${job.job.id}:${job.job.fence}`} jobId={job.job.id} fence={job.job.fence} /> : null}
                  <h3>Result and logs</h3>
                  <ErrorBox error={result.error} what="Reading the result" />
                  {result.data ? (
                    <>
                      <div className="muted small">
                        {result.data.outcome} under fence {result.data.fence} by {result.data.workerId}, <Time at={result.data.writtenAt} />
                      </div>
                      {result.data.error ? <pre className="logs bad">{result.data.error}</pre> : null}
                      {result.data.output !== null && result.data.output !== undefined ? <pre className="logs">{JSON.stringify(result.data.output, null, 2)}</pre> : null}
                      <pre className="logs" data-testid="job-logs">
                        {result.data.logs ?? 'The worker captured no logs for this job.'}
                      </pre>
                    </>
                  ) : result.isSuccess ? (
                    <div className="muted">No result written yet.</div>
                  ) : null}
                  <AttemptLogs attempts={attempts.data} error={attempts.error} numberOf={(fence) => job.attempts.find((a) => a.fence === fence)?.number} />
                </div>
              ) : (
                <div className="muted">Select a task in the graph or the timeline to see its attempts, why it waits, and its logs.</div>
              )}
            </Card>
          </div>
        </>
      ) : null}
    </>
  );
}

/** The job's effect outcome in the side panel, with a line per effect its accepted attempt reported. */
function JobEffect({ effects }: { effects: Parameters<typeof effectSummary>[0] }) {
  const s = effectSummary(effects);
  return (
    <span data-testid="job-effect" data-effect={s.word}>
      <strong>{s.word}</strong>: {s.detail}
      {s.lines.length > 1 || (s.lines.length === 1 && s.lines[0] !== s.detail) ? (
        <ul className="small muted">
          {s.lines.map((l, i) => (
            <li key={i}>{l}</li>
          ))}
        </ul>
      ) : null}
    </span>
  );
}

/** The line in a job's attempts table where a clear fell: it reset the retry budget, and says who asked and why. */
function ClearRow({ clear }: { clear: { kind: string; by: string; at: Date | string; reason: string | null } }) {
  return (
    <tr className="clear-row" data-testid="attempt-clear">
      <td colSpan={5} className="small">
        ↻ {clear.kind === 'retry_failed' ? 'Retry from failure' : 'Cleared'} by <strong>{clear.by}</strong> <Time at={clear.at} />
        {clear.reason ? `: ${clear.reason}` : ''}; the retry budget starts again, the attempts below came after it
      </td>
    </tr>
  );
}
