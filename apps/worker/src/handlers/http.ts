import { httpConfigSchema } from '@fenceline/core';
import { NonRetryableError, type TaskContext } from '../task';
import { describeFetchFailure, hostPort } from './fetch-failure';
import { fillParams } from './templates';
import { clipForOutput } from './output-size';

const MAX_BODY_CHARS = 16 * 1024;

/**
 * Calls an HTTP endpoint and succeeds when the status is one of `expectStatus`. The fence
 * travels as a header. `{{params.NAME}}` in the url, the header values and the body is
 * replaced by the run's parameter: URL-encoded in the url, as it is elsewhere.
 */
export async function runHttp(config: Record<string, unknown>, ctx: TaskContext): Promise<unknown> {
  const parsed = httpConfigSchema.safeParse(config);
  if (!parsed.success) throw new NonRetryableError(`http config is invalid: ${parsed.error.message}`);
  const { method, expectStatus } = parsed.data;
  const url = fillParams(parsed.data.url, ctx.params, encodeURIComponent);
  const headers = Object.fromEntries(Object.entries(parsed.data.headers).map(([k, v]) => [k, fillParams(v, ctx.params)]));
  const body = parsed.data.body === undefined ? undefined : fillParams(parsed.data.body, ctx.params);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method,
      headers: { ...headers, 'x-fenceline-fence': String(ctx.fence), 'x-fenceline-job': ctx.jobId },
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
      signal: ctx.signal,
    });
    text = (await res.text()).slice(0, MAX_BODY_CHARS);
  } catch (err) {
    throw failedRequest(err, method, url, ctx.signal);
  }
  ctx.log(`${method} ${url} -> ${res.status}`);
  if (!expectStatus.includes(res.status)) throw new Error(`${method} ${url} answered ${res.status}, expected one of ${expectStatus.join(', ')}`);
  return { status: res.status, body: clipForOutput(text) };
}

/**
 * The request's failure with its reason and where it went. A stop of the job (its timeout,
 * a lost lease, shutdown) keeps that reason as the cause, so the worker reports this
 * message for it rather than the bare reason.
 */
function failedRequest(err: unknown, method: string, url: string, signal: AbortSignal): Error {
  const target = new URL(url);
  if (signal.aborted) {
    const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
    return new Error(`${method} ${url}: no answer from ${hostPort(target)} before the job was stopped: ${reason}`, { cause: signal.reason });
  }
  return new Error(`${method} ${url}: ${describeFetchFailure(err, target)}`, { cause: err });
}
