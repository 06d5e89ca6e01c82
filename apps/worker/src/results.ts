import { errorFromJSON, type FencelineError } from '@fenceline/core';
import { typedRefusal, type SchedulerClient } from './client';

export interface ResultToSend {
  jobId: string;
  fence: number;
  output: unknown;
  logs: string | null;
}

interface Queued {
  result: ResultToSend;
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Results per request, and the request body they may fill (the node accepts 1 MiB). */
const MAX_RESULTS = 500;
const MAX_BATCH_BYTES = 512 * 1024;

/**
 * Sends a worker's successful results in batches: one request per node in flight at a
 * time, and whatever finished meanwhile goes in the next request. A worker with 64 slots
 * of short jobs then makes a few requests a second instead of one per job, and a quiet
 * worker's single result goes out at once. Each result still succeeds or is refused on
 * its own: a refusal rejects only its own promise, with the typed error.
 */
export class ResultSender {
  private readonly queues: Queued[][];
  private readonly busy: boolean[];

  constructor(
    private readonly workerId: string,
    private readonly clients: SchedulerClient[],
  ) {
    this.queues = clients.map(() => []);
    this.busy = clients.map(() => false);
  }

  /** Resolves once the result is written; rejects with the refusal or the last transport error. */
  send(via: number, result: ResultToSend): Promise<void> {
    const bytes = Buffer.byteLength(JSON.stringify(result.output ?? null), 'utf8') + Buffer.byteLength(result.logs ?? '', 'utf8') + 200;
    return new Promise<void>((resolve, reject) => {
      this.queues[via]!.push({ result, bytes, resolve, reject });
      // Results that finish in the same turn share the first request too.
      if (!this.busy[via]) {
        this.busy[via] = true;
        setImmediate(() => void this.drain(via));
      }
    });
  }

  private async drain(via: number): Promise<void> {
    const queue = this.queues[via]!;
    while (queue.length > 0) {
      let bytes = 0;
      let n = 0;
      while (n < queue.length && n < MAX_RESULTS && (n === 0 || bytes + queue[n]!.bytes <= MAX_BATCH_BYTES)) bytes += queue[n++]!.bytes;
      await this.deliver(via, queue.splice(0, n));
    }
    this.busy[via] = false;
  }

  /** Tries the delivering node first and then the others, as long as none answers. */
  private async deliver(via: number, batch: Queued[]): Promise<void> {
    let last: unknown = new Error('no scheduler node to send results to');
    for (let k = 0; k < this.clients.length; k++) {
      const client = this.clients[(via + k) % this.clients.length]!;
      try {
        const outcomes = await client.completeMany.mutate({ workerId: this.workerId, results: batch.map((q) => q.result) });
        batch.forEach((q, i) => {
          const o = outcomes[i];
          if (o?.ok) q.resolve();
          else q.reject(o ? errorFromJSON(o.error) : new Error(`no outcome for job ${q.result.jobId}`));
        });
        return;
      } catch (err) {
        const refusal: FencelineError | null = typedRefusal(err);
        // A refusal of the whole call (a bad token, say) is the same on every node.
        if (refusal) {
          for (const q of batch) q.reject(err);
          return;
        }
        last = err;
      }
    }
    for (const q of batch) q.reject(last);
  }
}
