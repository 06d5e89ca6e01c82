import type { WorkerId } from '../ids';
import type { Timers } from '../clock';
import type { ResultToSend, WorkerLog, WorkerTransport } from './protocol';
import { resultBytes, type BatchLimits } from './result-batch';
import { WriteQueue } from './write-queue';

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
 * A worker's successful results, sent in batches of completeMany (WriteQueue): each result
 * is still accepted or refused on its own, and a batch no node answered is sent again
 * after a pause, first in line, until a node answers it.
 */
export class ResultQueue extends WriteQueue<ResultToSend> {
  constructor(deps: ResultQueueDeps) {
    super({
      nodeCount: deps.transport.nodeCount,
      call: (node, results) => deps.transport.completeMany(node, { workerId: deps.workerId, results }),
      bytes: resultBytes,
      timers: deps.timers,
      defer: deps.defer,
      halted: deps.halted,
      limits: deps.limits,
      log: deps.log,
      noun: 'results',
    });
  }
}
