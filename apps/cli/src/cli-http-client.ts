/**
 * The CLI's client of the console's HTTP API (/api/v1): one request at a time with the
 * bearer token, answers read back into the shapes the store returns (instants as Dates),
 * and every refusal turned into the API's own code, message and issues.
 */

/** A refusal in the API's one error shape; the CLI prints its code and message and exits as the store path does. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly issues: { field: string; message: string }[],
    readonly status: number,
  ) {
    super(message);
  }
}

/** No answer from the API at all, or one that is not the API's: the CLI says so in one line. */
export class ApiUnreachable extends Error {}

/** The fields of the API's answers that hold instants, which the output formatting takes as Dates. */
const INSTANT_FIELDS = new Set([
  'nextRunAt',
  'updatedAt',
  'createdAt',
  'scheduledAt',
  'startedAt',
  'endedAt',
  'leaseExpiresAt',
  'nextAttemptAt',
  'readyAt',
  'leasedAt',
  'requestedAt',
  'appliedAt',
  'writtenAt',
  'fromAt',
  'toAt',
  'nextSlotAt',
  'at',
]);

function reviveInstants(key: string, value: unknown): unknown {
  return INSTANT_FIELDS.has(key) && typeof value === 'string' ? new Date(value) : value;
}

export interface RequestOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  idempotencyKey?: string;
}

export class ApiClient {
  private readonly base: string;

  constructor(
    url: string,
    private readonly token: string,
  ) {
    // The console's address is enough; the API's own prefix is added unless it is already there.
    const trimmed = url.replace(/\/+$/, '');
    this.base = trimmed.endsWith('/api/v1') ? trimmed : `${trimmed}/api/v1`;
  }

  get(path: string, query?: RequestOptions['query']): Promise<unknown> {
    return this.request('GET', path, { query });
  }

  post(path: string, opts: RequestOptions = {}): Promise<unknown> {
    return this.request('POST', path, opts);
  }

  async request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, opts: RequestOptions): Promise<unknown> {
    const url = new URL(`${this.base}${path}`);
    for (const [name, value] of Object.entries(opts.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
    } catch (err) {
      throw new ApiUnreachable(`cannot reach the fenceline API at ${this.base}: ${reasonOf(err)}`);
    }
    const text = await res.text();
    let answer: unknown;
    try {
      answer = JSON.parse(text, reviveInstants);
    } catch {
      throw new ApiUnreachable(`${this.base} did not answer as the fenceline API does (HTTP ${res.status}, not JSON); check --url`);
    }
    if (res.ok) return answer;
    const refusal = answer as { code?: unknown; message?: unknown; issues?: unknown };
    if (typeof refusal.code !== 'string') throw new ApiUnreachable(`${this.base} did not answer as the fenceline API does (HTTP ${res.status}); check --url`);
    const issues = Array.isArray(refusal.issues) ? (refusal.issues as { field: string; message: string }[]) : [];
    throw new ApiError(refusal.code, String(refusal.message ?? ''), issues, res.status);
  }
}

/** The refusals of a stale or forged fence: a conflict that sending again cannot change. */
const FENCE_CODES = new Set(['STALE_FENCE', 'FORGED_FENCE', 'LEASE_LOST', 'DEPOSED_LEADER']);

/**
 * Whether a keyed write that failed so may be sent again with its key: no answer (or not the
 * API's), a server error, a rate limit, or a conflict that is not a fence's (the key's first
 * request still being handled). A refusal of the request itself is final.
 */
export function isTransient(err: unknown): boolean {
  if (err instanceof ApiUnreachable) return true;
  if (!(err instanceof ApiError)) return false;
  return err.status >= 500 || err.status === 429 || (err.status === 409 && !FENCE_CODES.has(err.code));
}

/** Why a fetch got no answer, in the words of the network error underneath (ECONNREFUSED, ENOTFOUND, ...). */
function reasonOf(err: unknown): string {
  const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}
