import { randomBytes } from 'node:crypto';
import type { RenewOutcome, UpstreamOutput } from '@fenceline/core/store';
import type { FailureToSend, OpenPoll, ReleaseToSend, ResultOutcome, ResultToSend, WorkerTransport } from '@fenceline/core/worker';
import { errorFromJSON } from '@fenceline/core';
import { type PollItem } from '@fenceline/core/engine';
import { checkedTraceparents } from './trace-context';
import { retryAfterOf, schedulerClient, typedRefusal, type SchedulerClient } from './client';

/**
 * The worker protocol over HTTP: one tRPC client per scheduler node. A node's typed
 * refusal is rethrown as the FencelineError it stands for; anything else (a node down,
 * a reset connection) stays a transport error, which the worker core retries elsewhere.
 *
 * Every request has a deadline (`requestTimeoutMs`; a poll, that beyond the wait it asks
 * for): one without an answer by then is abandoned and fails as a transport error, so the
 * worker core sends it again, to that node or another, and never waits on it forever. It
 * costs one timer per request, whatever the number of jobs in it.
 *
 * The transport holds the process's session secret, made when it is built: it registers
 * with every node under that one session and presents it on every call, so a restarted
 * worker process is a new session, and the leases of the old one are no longer its own.
 */
export class HttpTransport implements WorkerTransport {
  private readonly clients: SchedulerClient[];
  private readonly session = randomBytes(32).toString('base64url');

  constructor(
    urls: string[],
    token: string,
    /** What the worker tells a node about itself when it registers. */
    private readonly meta: () => Record<string, unknown>,
    private readonly requestTimeoutMs = 30_000,
  ) {
    this.clients = urls.map((url) => schedulerClient(url, token));
  }

  get nodeCount(): number {
    return this.clients.length;
  }

  register(node: number, req: { workerId: string; slots: number }) {
    return refusals(this.client(node).register.mutate({ ...req, meta: this.meta(), session: this.session }, this.deadline()));
  }

  poll(node: number, req: { workerId: string; slots: number; free: number; waitMs: number }): OpenPoll {
    const controller = new AbortController();
    const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(req.waitMs + this.requestTimeoutMs)]);
    return {
      answer: refusals(this.client(node).poll.mutate({ ...req, session: this.session }, { signal }) as Promise<PollItem[]>).then(checkedTraceparents),
      hangUp: (reason) => controller.abort(reason),
    };
  }

  renew(node: number, req: { workerId: string; leases: { jobId: string; fence: number; log?: string }[] }): Promise<RenewOutcome[]> {
    return refusals(this.client(node).renew.mutate({ ...req, session: this.session }, this.deadline()) as unknown as Promise<RenewOutcome[]>);
  }

  async completeMany(node: number, req: { workerId: string; results: ResultToSend[] }): Promise<ResultOutcome[]> {
    const outcomes = await refusals(this.client(node).completeMany.mutate({ ...req, session: this.session }, this.deadline()));
    return outcomes.map((o) => (o.ok ? { ok: true as const } : { ok: false as const, error: errorFromJSON(o.error) }));
  }

  async failMany(node: number, req: { workerId: string; failures: FailureToSend[] }): Promise<ResultOutcome[]> {
    const outcomes = await refusals(this.client(node).failMany.mutate({ ...req, session: this.session }, this.deadline()));
    return outcomes.map((o) => (o.ok ? { ok: true as const } : { ok: false as const, error: errorFromJSON(o.error) }));
  }

  async releaseMany(node: number, req: { workerId: string; releases: ReleaseToSend[] }): Promise<ResultOutcome[]> {
    const outcomes = await refusals(this.client(node).releaseMany.mutate({ ...req, session: this.session }, this.deadline()));
    return outcomes.map((o) => (o.ok ? { ok: true as const } : { ok: false as const, error: errorFromJSON(o.error) }));
  }

  upstream(node: number, req: { workerId: string; jobId: string; fence: number; taskIds: string[] }): Promise<UpstreamOutput[]> {
    return refusals(this.client(node).upstream.mutate({ ...req, session: this.session }, this.deadline()) as Promise<UpstreamOutput[]>);
  }

  /** The deadline of one request: its signal aborts it once requestTimeoutMs have passed. */
  private deadline(): { signal: AbortSignal } {
    return { signal: AbortSignal.timeout(this.requestTimeoutMs) };
  }

  private client(node: number): SchedulerClient {
    return this.clients[node]!;
  }
}

/**
 * Rejects with the typed refusal inside a tRPC error, or with the transport error as it
 * is; a node's Retry-After (a 503 at its connection limit) goes with it as `retryAfterMs`,
 * which the worker core waits out before asking that node again.
 */
async function refusals<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    const typed = typedRefusal(err);
    if (typed) throw typed;
    const retryAfterMs = retryAfterOf(err);
    throw retryAfterMs !== null && err instanceof Error ? Object.assign(err, { retryAfterMs }) : err;
  }
}
