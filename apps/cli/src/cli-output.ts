import { jobStateWord, type JobRow, type RunRow } from '@fenceline/core';
import { fmt } from './cli-args';

/**
 * What the CLI prints for the commands it runs against the store and against the HTTP API
 * alike, so both paths print the same lines and tables from the same rows.
 */

export interface DagLine {
  id: string;
  version: number;
  schedule: { kind: string; cron?: string; timezone?: string; everyMs?: number };
  paused: boolean;
  nextRunAt: Date | null;
  shard: number;
}

type RunLine = Pick<RunRow, 'id' | 'dagId' | 'dagVersion' | 'state' | 'trigger' | 'scheduledAt' | 'startedAt' | 'endedAt'>;

export type JobLine = Pick<JobRow, 'id' | 'taskId' | 'state' | 'attempt' | 'maxAttempts' | 'fence' | 'holder' | 'leaseExpiresAt' | 'lastError'> & {
  result: { outcome: string; fence: number } | null;
  /** Attempts through the job's life and the last clear (absent from an older API). */
  history?: { seen: number; lastClear: { by: string; at: Date } | null };
};

export function describeSchedule(s: DagLine['schedule']): string {
  if (s.kind === 'cron') return `cron "${s.cron}" ${s.timezone}`;
  if (s.kind === 'interval') return `every ${s.everyMs} ms`;
  return 'manual';
}

export function printDags(rows: DagLine[], total: number): void {
  console.table(
    rows.map((d) => ({
      id: d.id,
      version: d.version,
      schedule: describeSchedule(d.schedule),
      nextRunAt: d.paused ? 'paused' : fmt(d.nextRunAt),
      paused: d.paused,
      shard: d.shard,
    })),
  );
  console.log(`${rows.length} of ${total} DAGs`);
}

export function printRuns(rows: RunLine[], next: string | null): void {
  console.table(
    rows.map((r) => ({
      id: r.id,
      dag: r.dagId,
      version: r.dagVersion,
      state: r.state,
      trigger: r.trigger,
      scheduledAt: fmt(r.scheduledAt),
      startedAt: fmt(r.startedAt),
      endedAt: fmt(r.endedAt),
    })),
  );
  if (next) console.log(`next page: --cursor ${next}`);
}

const byName = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : 1);

export function printTriggered(run: Pick<RunRow, 'id' | 'dagId' | 'dagVersion' | 'params'>): void {
  console.log(`run ${run.id} of ${run.dagId} queued (version ${run.dagVersion})`);
  for (const [name, value] of Object.entries(run.params).sort(byName)) console.log(`  ${name} = ${JSON.stringify(value)}`);
}

export function printPaused(dag: { id: string; paused: boolean; nextRunAt: Date | null }): void {
  console.log(`${dag.id} ${dag.paused ? 'paused' : 'resumed'}; next run ${fmt(dag.nextRunAt)}`);
}

export function printJobs(run: Pick<RunRow, 'id' | 'dagId' | 'dagVersion' | 'state' | 'params'>, jobs: JobLine[]): void {
  console.log(`run ${run.id} of ${run.dagId}@${run.dagVersion}: ${run.state}`);
  if (Object.keys(run.params).length > 0) console.log(`params: ${JSON.stringify(Object.fromEntries(Object.entries(run.params).sort(byName)))}`);
  console.table(
    jobs.map((j) => ({
      job: j.id,
      task: j.taskId,
      // The store's leased is running to a user, as the console and the API say it.
      state: jobStateWord(j.state),
      // Attempts through the job's whole life, as the run page numbers them; the budget is what a clear resets.
      attempts: j.history?.seen ?? j.attempt,
      budget: `${j.attempt}/${j.maxAttempts}`,
      cleared: j.history?.lastClear ? `by ${j.history.lastClear.by} ${fmt(j.history.lastClear.at)}` : '-',
      fence: j.fence,
      holder: j.holder ?? '-',
      leaseExpiresAt: fmt(j.leaseExpiresAt),
      result: j.result ? `${j.result.outcome} @fence ${j.result.fence}` : '-',
      error: j.lastError ?? '',
    })),
  );
}

export function printApplied(file: string, res: { dagId: string; version: number; created: boolean }): void {
  console.log(`${file}: ${res.dagId} ${res.created ? `version ${res.version} stored` : `unchanged (version ${res.version})`}`);
}

/** The lines of a spec file's problems and the closing line, as `apply` prints them before it stores nothing. */
export function printSpecProblems(problems: { file: string; message: string; issues: { path: string; message: string }[] }[], files: number): void {
  for (const problem of problems) {
    console.error(`${problem.file}: ${problem.message}`);
    for (const issue of problem.issues) console.error(`  - ${issue.path || '(spec)'}: ${issue.message}`);
  }
  const bad = new Set(problems.map((p) => p.file)).size;
  console.error(`nothing stored: ${bad} of ${files} ${files === 1 ? 'file has' : 'files have'} problems`);
}
