import { httpConfigSchema } from '@fenceline/core';
import { NonRetryableError, type TaskContext } from '../task';

const MAX_BODY_CHARS = 16 * 1024;

/** Calls an HTTP endpoint and succeeds when the status is one of `expectStatus`. The fence travels as a header. */
export async function runHttp(config: Record<string, unknown>, ctx: TaskContext): Promise<unknown> {
  const parsed = httpConfigSchema.safeParse(config);
  if (!parsed.success) throw new NonRetryableError(`http config is invalid: ${parsed.error.message}`);
  const { method, url, headers, body, expectStatus } = parsed.data;
  const res = await fetch(url, {
    method,
    headers: { ...headers, 'x-fenceline-fence': String(ctx.fence), 'x-fenceline-job': ctx.jobId },
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
    signal: ctx.signal,
  });
  const text = (await res.text()).slice(0, MAX_BODY_CHARS);
  ctx.log(`${method} ${url} -> ${res.status}`);
  if (!expectStatus.includes(res.status)) throw new Error(`${method} ${url} answered ${res.status}, expected one of ${expectStatus.join(', ')}`);
  return { status: res.status, body: text };
}
