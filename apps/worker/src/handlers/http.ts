import { httpConfigSchema, NO_TRACING, type Tracing, type TraceSpan } from '@fenceline/core';
import { NonRetryableError, type TaskContext } from '../task';
import { describeFetchFailure, hostPort } from './fetch-failure';
import { fillParams, fillUrlParams } from './templates';
import { clipForOutput } from './output-size';

const MAX_BODY_CHARS = 16 * 1024;

/**
 * Calls an HTTP endpoint and succeeds when the status is one of `expectStatus`. The fence
 * and the effect key travel as headers, so a receiver guard (@fenceline/effects) can refuse
 * an attempt whose lease was superseded. `{{params.NAME}}` in the url, the header values and the body is
 * replaced by the run's parameter: URL-encoded in the url, as it is elsewhere.
 *
 * The job's trace context travels as the `traceparent` header (replacing one the task
 * config set), so the called service joins the job's trace: the context of a client span
 * of the call when this worker traces, else the one the scheduler sent with the lease.
 */
export async function runHttp(config: Record<string, unknown>, ctx: TaskContext, tracing: Tracing = NO_TRACING): Promise<unknown> {
  const parsed = httpConfigSchema.safeParse(config);
  if (!parsed.success) throw new NonRetryableError(`http config is invalid: ${parsed.error.message}`);
  const { method, expectStatus } = parsed.data;
  const url = fillUrlParams(parsed.data.url, ctx.params);
  const headers = Object.fromEntries(Object.entries(parsed.data.headers).map(([k, v]) => [k, fillParams(v, ctx.params)]));
  const body = parsed.data.body === undefined ? undefined : fillParams(parsed.data.body, ctx.params);
  const span = tracing.enabled ? clientSpan(tracing, method, url, ctx.traceparent) : null;
  const traceparent = span ? span.traceparent() : ctx.traceparent;
  const trace: Record<string, string> = traceparent ? { traceparent } : {};
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method,
      headers: {
        ...(traceparent ? withoutTraceparent(headers) : headers),
        ...trace,
        'x-fenceline-fence': String(ctx.fence),
        'x-fenceline-effect-key': ctx.effectKey,
        'x-fenceline-job': ctx.jobId,
      },
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
      signal: ctx.signal,
    });
    text = (await res.text()).slice(0, MAX_BODY_CHARS);
  } catch (err) {
    const failed = failedRequest(err, method, url, ctx.signal);
    span?.end(failed.message);
    throw failed;
  }
  span?.setAttributes({ 'http.response.status_code': res.status });
  ctx.log(`${method} ${url} -> ${res.status}`);
  if (!expectStatus.includes(res.status)) {
    const message = `${method} ${url} answered ${res.status}, expected one of ${expectStatus.join(', ')}`;
    span?.end(message);
    throw new Error(message);
  }
  span?.end();
  return { status: res.status, body: clipForOutput(text) };
}

/**
 * The client span of the call, a child of the job's span. It names the target without the
 * query string, which may carry parameters that are nobody's business in a trace.
 */
function clientSpan(tracing: Tracing, method: string, url: string, parent: string | undefined): TraceSpan {
  const target = new URL(url);
  return tracing.start(`HTTP ${method}`, {
    ...(parent ? { parent } : {}),
    kind: 'client',
    attributes: {
      'http.request.method': method,
      'url.scheme': target.protocol.replace(/:$/, ''),
      'server.address': target.hostname,
      'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
      'url.path': target.pathname,
    },
  });
}

/** Header names are case-insensitive: a traceparent of the task config gives way to the job's. */
function withoutTraceparent(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'traceparent'));
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
