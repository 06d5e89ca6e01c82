/**
 * A job's stop switch, whose AbortController is made only when the handler first reads its
 * signal or the job is stopped. Most jobs are never stopped and most handlers never look,
 * and a controller with its signal costs several microseconds and an event target per job
 * on the worker's hot path.
 */
export class LazyAbort {
  private controller: AbortController | null = null;

  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  /** Whether the job was stopped; reading it makes no controller. */
  get aborted(): boolean {
    return this.controller?.signal.aborted ?? false;
  }

  /** Why the job was stopped, once it was. */
  get reason(): unknown {
    return this.controller?.signal.reason;
  }

  abort(reason: unknown): void {
    (this.controller ??= new AbortController()).abort(reason);
  }
}
