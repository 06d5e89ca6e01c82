/**
 * The wait before retrying a call no node answered, after `attempt` such failures in a
 * row (0 for the first retry of a registration): doubling from 100 ms up to 2 s, so a node
 * that is back is found within seconds and one that stays down costs a request every two.
 */
export function retryDelayMs(attempt: number): number {
  return Math.min(2000, 100 * 2 ** Math.min(Math.max(attempt, 0), 5));
}

/**
 * The wait before asking a node again after `err`: the backoff, or longer when the node
 * said how long in its refusal (a 503's Retry-After, which the transport puts on the
 * error as `retryAfterMs`). A node at its connection limit asks for that; its refused
 * workers waiting it out, rather than retrying every 2 s, keep it from serving a storm of
 * reconnects instead of the polls it holds.
 */
export function retryDelayAfter(err: unknown, attempt: number): number {
  const asked = (err as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof asked === 'number' && Number.isFinite(asked) && asked > 0 ? Math.max(retryDelayMs(attempt), Math.min(asked, 60_000)) : retryDelayMs(attempt);
}
