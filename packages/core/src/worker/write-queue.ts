import type { Timers } from '../clock';
import { FencelineError } from '../errors';
import { retryDelayMs } from './backoff';
import { viaThenOthers } from './node-order';
import type { ResultOutcome, WorkerLog } from './protocol';
import { nextBatchSize, RESULT_BATCH_LIMITS, type BatchLimits } from './result-batch';

interface Queued<T> {
  item: T;
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface WriteQueueDeps<T> {
  /** The scheduler nodes, numbered 0..nodeCount-1. */
  nodeCount: number;
  /** Sends one batch to a node: one outcome per item, in order; rejects when no answer came. */
  call: (node: number, items: T[]) => Promise<ResultOutcome[]>;
  /** About how many bytes an item adds to a request body. */
  bytes: (item: T) => number;
  timers: Timers;
  /** Runs `fn` once the current turn is over, so writes that come together share a request. */
  defer: (fn: () => void) => void;
  /** True once the worker is gone: nothing more is sent. */
  halted: () => boolean;
  limits?: BatchLimits;
  log?: WorkerLog;
  /** What the items are, for the log line of a batch no node took ("results"). */
  noun: string;
  /**
   * Whether a batch no node took is sent again after a pause (the default), or refused:
   * each of its items then rejects with the error of the last node tried.
   */
  retry?: boolean;
}

/**
 * A worker's fenced writes of one kind, sent in batches: one request per node in flight at
 * a time, and whatever came meanwhile goes in the next one, within a count and a byte
 * limit. A worker with 64 slots of short jobs then makes a few requests a second instead
 * of one per job, and a quiet worker's single write goes out at once. Each item is still
 * accepted or refused on its own: a refusal rejects only its own promise. A batch no node
 * answered is sent again after a pause, first in line, until a node answers it (unless
 * `retry` is off): the store, not the worker, decides whether a write still counts, and
 * its fence keeps a late one from being written twice.
 */
export class WriteQueue<T> {
  private readonly queues: Queued<T>[][];
  private readonly busy: boolean[];
  private readonly limits: BatchLimits;

  constructor(private readonly deps: WriteQueueDeps<T>) {
    this.queues = Array.from({ length: deps.nodeCount }, () => []);
    this.busy = this.queues.map(() => false);
    this.limits = deps.limits ?? RESULT_BATCH_LIMITS;
  }

  /** Resolves once the item is written; rejects with its typed refusal (or a node's malformed answer). */
  send(via: number, item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queues[via]!.push({ item, bytes: this.deps.bytes(item), resolve, reject });
      if (this.busy[via]) return;
      this.busy[via] = true;
      this.deps.defer(() => void this.drain(via));
    });
  }

  /** Items waiting for a request or for its answer. */
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
      if (failures === 1 || failures % 20 === 0) this.deps.log?.('warn', `no scheduler node took the ${this.deps.noun}; retrying`, { [this.deps.noun]: batch.length, failures });
      await new Promise<void>((resolve) => this.deps.timers.after(retryDelayMs(failures), resolve));
    }
    this.busy[via] = false;
  }

  /** True once a node answered (each item settled), or the batch was refused for want of one; false to send it again. */
  private async deliver(via: number, batch: Queued<T>[]): Promise<boolean> {
    const items = batch.map((q) => q.item);
    try {
      const outcomes = await viaThenOthers(this.deps.nodeCount, via, (node) => this.deps.call(node, items));
      batch.forEach((q, i) => {
        const o = outcomes[i];
        if (o?.ok) q.resolve();
        else q.reject(o ? o.error : new Error(`no outcome for item ${i} of ${items.length}`));
      });
      return true;
    } catch (err) {
      // A refusal of the whole call (a bad token, say) is the answer for every item in it.
      if (err instanceof FencelineError || this.deps.retry === false) {
        for (const q of batch) q.reject(err);
        return true;
      }
      return false;
    }
  }
}
