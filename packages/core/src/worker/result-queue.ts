import type { WorkerId } from '../ids';
import type { Timers } from '../clock';
import { FencelineError } from '../errors';
import { retryDelayMs } from './backoff';
import { viaThenOthers } from './node-order';
import type { ResultToSend, WorkerLog, WorkerTransport } from './protocol';
import { nextBatchSize, resultBytes, RESULT_BATCH_LIMITS, type BatchLimits } from './result-batch';

interface Queued {
  result: ResultToSend;
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface ResultQueueDeps {
  workerId: WorkerId;
  transport: WorkerTransport;
  timers: Timers;
  /** Runs `fn` once the current turn is over, so results that end together share a request. */
  defer: (fn: () => void) => void;
  /** True once the worker is gone: nothing more is sent. */
  halted: () => boolean;
  limits?: BatchLimits;
  log?: WorkerLog;
}

/**
 * A worker's successful results, sent in batches: one request per node in flight at a
 * time, and whatever finished meanwhile goes in the next one, within a count and a byte
 * limit. A worker with 64 slots of short jobs then makes a few requests a second instead
 * of one per job, and a quiet worker's single result goes out at once. Each result is
 * still accepted or refused on its own: a refusal rejects only its own promise. A batch
 * no node answered is sent again after a pause, first in line, until a node answers it:
 * the store, not the worker, decides whether a result still counts, and its fence keeps a
 * late one from being written twice.
 */
export class ResultQueue {
  private readonly queues: Queued[][];
  private readonly busy: boolean[];
  private readonly limits: BatchLimits;

  constructor(private readonly deps: ResultQueueDeps) {
    this.queues = Array.from({ length: deps.transport.nodeCount }, () => []);
    this.busy = this.queues.map(() => false);
    this.limits = deps.limits ?? RESULT_BATCH_LIMITS;
  }

  /** Resolves once the result is written; rejects with its typed refusal (or a node's malformed answer). */
  send(via: number, result: ResultToSend): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queues[via]!.push({ result, bytes: resultBytes(result), resolve, reject });
      if (this.busy[via]) return;
      this.busy[via] = true;
      this.deps.defer(() => void this.drain(via));
    });
  }

  /** Results waiting for a request or for its answer. */
  get pending(): number {
    return this.queues.reduce((n, q) => n + q.length, 0);
  }

  private async drain(via: number): Promise<void> {
    const queue = this.queues[via]!;
    let failures = 0;
    while (queue.length > 0 && !this.deps.halted()) {
      const batch = queue.slice(
        0,
        nextBatchSize(
          queue.map((q) => q.bytes),
          this.limits,
        ),
      );
      if (await this.deliver(via, batch)) {
        queue.splice(0, batch.length);
        failures = 0;
        continue;
      }
      failures++;
      if (failures === 1 || failures % 20 === 0) this.deps.log?.('warn', 'no scheduler node took the results; retrying', { results: batch.length, failures });
      await new Promise<void>((resolve) => this.deps.timers.after(retryDelayMs(failures), resolve));
    }
    this.busy[via] = false;
  }

  /** True once a node answered (each result settled); false when none did. */
  private async deliver(via: number, batch: Queued[]): Promise<boolean> {
    const results = batch.map((q) => q.result);
    try {
      const outcomes = await viaThenOthers(this.deps.transport.nodeCount, via, (node) => this.deps.transport.completeMany(node, { workerId: this.deps.workerId, results }));
      batch.forEach((q, i) => {
        const o = outcomes[i];
        if (o?.ok) q.resolve();
        else q.reject(o ? o.error : new Error(`no outcome for job ${q.result.jobId}`));
      });
      return true;
    } catch (err) {
      // A refusal of the whole call (a bad token, say) is the answer for every result in it.
      if (err instanceof FencelineError) {
        for (const q of batch) q.reject(err);
        return true;
      }
      return false;
    }
  }
}
