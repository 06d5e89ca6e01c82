import { FencelineError } from '../src';
import type { Clock, JobId, Timers, WorkerId } from '../src';
import type { Assignment } from '../src/engine';
import type { RenewOutcome, UpstreamOutput } from '../src/store';
import type { FailureToSend, JobControl, JobEnd, JobExecutor, OpenPoll, ReleaseToSend, ResultOutcome, ResultToSend, WorkerTransport } from '../src/worker';
import { asDagId, asJobId, asRunId } from './literal-ids';

/** Virtual time: timers fire only when the test advances the clock, in order, with promise continuations run in between. */
export class FakeTime implements Clock, Timers {
  private now = 1_000_000;
  private seq = 0;
  private queue: { at: number; seq: number; fn: () => void }[] = [];

  nowMs(): number {
    return this.now;
  }

  after(delayMs: number, fn: () => void): () => void {
    const entry = { at: this.now + Math.max(0, delayMs), seq: this.seq++, fn };
    this.queue.push(entry);
    return () => {
      this.queue = this.queue.filter((e) => e !== entry);
    };
  }

  /** Moves time forward by `ms`, firing every timer due on the way. */
  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    await settle();
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.queue[0];
      if (!next || next.at > until) break;
      this.queue.shift();
      this.now = next.at;
      next.fn();
      await settle();
    }
    this.now = until;
    await settle();
  }
}

/** Lets every pending promise continuation run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

export function assignment(jobId: string, over: Partial<Assignment> = {}, task: Partial<Assignment['task']> = {}): Assignment {
  return {
    jobId: asJobId(jobId),
    runId: asRunId('run-1'),
    dagId: asDagId('dag-1'),
    taskId: jobId,
    attempt: 1,
    fence: 1,
    leaseTtlMs: 90_000,
    renewIntervalMs: 30_000,
    task: { type: 'noop', config: {}, timeoutMs: 0, dependsOn: [], ...task },
    params: {},
    ...over,
  };
}

type Answer<T> = (node: number, req: never) => Promise<T> | T;

/**
 * A scheduler protocol the test answers: every call is recorded, polls stay open until
 * the test hands out jobs, and each other call is answered by a function the test sets.
 */
export class FakeTransport implements WorkerTransport {
  readonly calls: { op: string; node: number; req: unknown }[] = [];
  private readonly openPolls: { node: number; free: number; resolve: (jobs: Assignment[]) => void; reject: (err: unknown) => void }[] = [];
  renewAnswer: (node: number, leases: { jobId: JobId; fence: number }[]) => Promise<RenewOutcome[]> | RenewOutcome[] = (_n, leases) =>
    leases.map((l) => ({ jobId: l.jobId, ok: true as const, leaseExpiresAt: new Date(0) }));
  completeAnswer: (node: number, results: ResultToSend[]) => Promise<ResultOutcome[]> | ResultOutcome[] = (_n, results) => results.map(() => ({ ok: true as const }));
  failAnswer: Answer<void> = () => undefined;
  releaseAnswer: Answer<void> = () => undefined;
  upstreamAnswer: (node: number, req: { jobId: JobId; taskIds: string[] }) => Promise<UpstreamOutput[]> | UpstreamOutput[] = () => [];

  constructor(readonly nodeCount = 1) {}

  ops(op: string): { node: number; req: unknown }[] {
    return this.calls.filter((c) => c.op === op);
  }

  async register(node: number, req: { workerId: string; slots: number }) {
    this.calls.push({ op: 'register', node, req });
    return { leaseTtlMs: 90_000, renewIntervalMs: 30_000 };
  }

  poll(node: number, req: { free: number }): OpenPoll {
    this.calls.push({ op: 'poll', node, req });
    let entry!: (typeof this.openPolls)[number];
    const answer = new Promise<Assignment[]>((resolve, reject) => {
      entry = { node, free: req.free, resolve, reject };
      this.openPolls.push(entry);
    });
    const drop = () => this.openPolls.splice(this.openPolls.indexOf(entry), 1);
    return {
      answer,
      hangUp: (reason) => {
        drop();
        entry.reject(reason);
      },
    };
  }

  /** Answers the open poll on `node` with a refusal. */
  refuse(node: number, err: unknown): void {
    const i = this.openPolls.findIndex((p) => p.node === node);
    if (i < 0) throw new Error(`no open poll on node ${node}`);
    const [p] = this.openPolls.splice(i, 1);
    p!.reject(err);
  }

  /** Answers the open poll on `node` with these jobs. */
  deliver(node: number, jobs: Assignment[]): void {
    const i = this.openPolls.findIndex((p) => p.node === node);
    if (i < 0) throw new Error(`no open poll on node ${node}`);
    const [p] = this.openPolls.splice(i, 1);
    p!.resolve(jobs);
  }

  async renew(node: number, req: { leases: { jobId: JobId; fence: number }[] }) {
    this.calls.push({ op: 'renew', node, req });
    return this.renewAnswer(node, req.leases);
  }

  async completeMany(node: number, req: { results: ResultToSend[] }) {
    this.calls.push({ op: 'completeMany', node, req });
    return this.completeAnswer(node, req.results);
  }

  /** Each failure is recorded and answered on its own, as a node answers a batch; an answer that throws a typed refusal refuses only its item. */
  async failMany(node: number, req: { workerId: WorkerId; failures: FailureToSend[] }): Promise<ResultOutcome[]> {
    return this.eachItem(node, 'fail', req.workerId, req.failures, this.failAnswer as (n: number, r: unknown) => void);
  }

  async releaseMany(node: number, req: { workerId: WorkerId; releases: ReleaseToSend[] }): Promise<ResultOutcome[]> {
    return this.eachItem(node, 'release', req.workerId, req.releases, this.releaseAnswer as (n: number, r: unknown) => void);
  }

  private async eachItem(node: number, op: string, workerId: WorkerId, items: object[], answer: (n: number, r: unknown) => void): Promise<ResultOutcome[]> {
    // The request itself, then each of its items as if sent alone, so a test can check both.
    this.calls.push({ op: `${op}Many`, node, req: { workerId, items } });
    const outcomes: ResultOutcome[] = [];
    for (const item of items) {
      const req = { workerId, ...item };
      this.calls.push({ op, node, req });
      try {
        await answer(node, req);
        outcomes.push({ ok: true });
      } catch (err) {
        if (!(err instanceof FencelineError)) throw err;
        outcomes.push({ ok: false, error: err });
      }
    }
    return outcomes;
  }

  async upstream(node: number, req: { jobId: JobId; taskIds: string[] }): Promise<UpstreamOutput[]> {
    this.calls.push({ op: 'upstream', node, req });
    return this.upstreamAnswer(node, req);
  }
}

/** Jobs that end when the test says, or when they are aborted; records how each was stopped. */
export class FakeExecutor implements JobExecutor {
  readonly started: { job: Assignment; control: JobControl }[] = [];
  readonly aborted = new Map<string, unknown>();
  private readonly finishers = new Map<string, (end: JobEnd) => void>();

  run(job: Assignment, control: JobControl): Promise<JobEnd> {
    this.started.push({ job, control });
    return new Promise<JobEnd>((resolve) => {
      this.finishers.set(job.jobId, resolve);
      control.signal.addEventListener('abort', () => {
        this.aborted.set(job.jobId, control.signal.reason);
        resolve({ ok: false, error: control.signal.reason, retryable: true, logs: null });
      });
    });
  }

  finish(jobId: string, end: JobEnd = { ok: true, output: { done: jobId }, logs: null }): void {
    const f = this.finishers.get(jobId);
    if (!f) throw new Error(`job ${jobId} is not running`);
    f(end);
  }
}

/** A transport failure: no node answered. */
export function unreachable(): Error {
  return new Error('connect ECONNREFUSED');
}
