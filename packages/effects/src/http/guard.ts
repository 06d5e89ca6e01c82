import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_EFFECT_KEY_CHARS, type EffectMode, type EffectOutcome } from '../context';
import { decide, type RecordedFence } from '../decide';
import type { FenceStore } from './store';

/** The headers the `http` job type sends with every call. */
export const FENCE_HEADER = 'x-fenceline-fence';
export const EFFECT_KEY_HEADER = 'x-fenceline-effect-key';
/** Set on the answer: what the guard decided for this request. */
export const EFFECT_OUTCOME_HEADER = 'x-fenceline-effect';

export interface FenceGuardOptions {
  store: FenceStore;
  /** `once` (default): a key whose handler answered 2xx is not run again; `latest`: every fence not lower than the highest runs. */
  mode?: EffectMode;
  /** Told of every decision, for metrics or an audit. */
  onOutcome?: (decision: { key: string; fence: number; outcome: EffectOutcome; status: number }) => void;
}

export type Next = (err?: unknown) => void;
export type GuardMiddleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

/**
 * A receiver's guard, as Express-style middleware `(req, res, next)`: it reads the job's
 * fence and effect key, and answers before the handler runs when the fence is lower than
 * the highest seen for the key (409), or, in once mode, when the key's effect was already
 * applied (200 with `x-fenceline-effect: already-applied`). Otherwise it calls `next` and
 * holds the key until the answer is sent, recording the effect as applied when the
 * handler answered 2xx; a request of the same key waits its turn.
 */
export function fenceGuard(options: FenceGuardOptions): GuardMiddleware {
  const mode = options.mode ?? 'once';
  return (req, res, next) => {
    const parsed = readHeaders(req);
    if ('problem' in parsed) return void answer(res, 400, { code: 'INVALID_INPUT', message: parsed.problem, issues: [{ path: [parsed.header], message: parsed.problem }] });
    const { key, fence } = parsed;
    const told = (outcome: EffectOutcome, status: number) => options.onOutcome?.({ key, fence, outcome, status });
    options.store
      .withKey(key, async (recorded): Promise<{ record: RecordedFence | null; value: void }> => {
        const outcome = decide(recorded, fence, mode);
        if (outcome === 'stale') {
          answer(
            res,
            409,
            { code: 'STALE_FENCE', message: `fence ${fence} is lower than fence ${recorded!.fence} already seen for this key`, key, fence, highestFence: recorded!.fence },
            outcome,
          );
          told(outcome, 409);
          return { record: null, value: undefined };
        }
        const highest = Math.max(recorded?.fence ?? fence, fence);
        if (outcome === 'already-applied') {
          answer(res, 200, { effect: outcome, key, fence, appliedFence: recorded!.appliedFence }, outcome);
          told(outcome, 200);
          return { record: { fence: highest, appliedFence: recorded!.appliedFence }, value: undefined };
        }
        res.setHeader(EFFECT_OUTCOME_HEADER, 'applied');
        const status = await runToAnswer(req, res, next);
        const ok = status >= 200 && status < 300;
        // A handler that did not answer 2xx applied nothing the guard can vouch for.
        if (ok) told('applied', status);
        return { record: { fence: highest, appliedFence: ok ? fence : (recorded?.appliedFence ?? null) }, value: undefined };
      })
      .catch(() => {
        // The store could not be reached: nothing is known of the key, so nothing runs.
        if (!res.headersSent) answer(res, 503, { code: 'UNAVAILABLE', message: 'the fence store could not be reached; try again' });
      });
  };
}

/**
 * A node:http request listener that runs `handler` behind the guard:
 * `http.createServer(fenced(handler, { store }))`.
 */
export function fenced(handler: (req: IncomingMessage, res: ServerResponse) => unknown, options: FenceGuardOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const guard = fenceGuard(options);
  return (req, res) =>
    guard(req, res, (err) => {
      if (err) return void answer(res, 500, { code: 'INTERNAL', message: 'the handler failed' });
      Promise.resolve()
        .then(() => handler(req, res))
        .catch(() => {
          if (!res.headersSent) answer(res, 500, { code: 'INTERNAL', message: 'the handler failed' });
          else res.destroy();
        });
    });
}

/** Calls `next` and resolves with the status the answer was sent with (0 if none was). */
function runToAnswer(req: IncomingMessage, res: ServerResponse, next: Next): Promise<number> {
  return new Promise((resolve) => {
    const done = () => resolve(res.headersSent ? res.statusCode : 0);
    res.once('finish', done);
    res.once('close', done);
    try {
      next();
    } catch {
      if (!res.headersSent) answer(res, 500, { code: 'INTERNAL', message: 'the handler failed' });
    }
  });
}

function readHeaders(req: IncomingMessage): { key: string; fence: number } | { header: string; problem: string } {
  const fenceText = req.headers[FENCE_HEADER];
  const key = req.headers[EFFECT_KEY_HEADER];
  if (typeof fenceText !== 'string' || !/^\d{1,15}$/.test(fenceText)) return { header: FENCE_HEADER, problem: `${FENCE_HEADER} must be the job's fence, a whole number` };
  if (typeof key !== 'string' || key.length === 0) return { header: EFFECT_KEY_HEADER, problem: `${EFFECT_KEY_HEADER} must name the effect (the http job type sends it)` };
  if (key.length > MAX_EFFECT_KEY_CHARS) return { header: EFFECT_KEY_HEADER, problem: `${EFFECT_KEY_HEADER} must be at most ${MAX_EFFECT_KEY_CHARS} characters` };
  return { key, fence: Number(fenceText) };
}

function answer(res: ServerResponse, status: number, body: unknown, outcome?: EffectOutcome): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  if (outcome) res.setHeader(EFFECT_OUTCOME_HEADER, outcome);
  res.end(JSON.stringify(body));
}
