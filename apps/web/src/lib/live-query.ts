import { TRPCClientError } from '@trpc/client';

/** How often live pages poll the store; short enough that a state change shows within a second or two. */
export const LIVE_MS = 1_000;

/** The tRPC error code the server answered with, or null when no answer came (network down, aborted). */
function answeredCode(error: unknown): string | null {
  if (!(error instanceof TRPCClientError)) return null;
  const code = (error.data as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : null;
}

function answeredStatus(error: unknown): number | null {
  if (!(error instanceof TRPCClientError)) return null;
  const status = (error.data as { httpStatus?: unknown } | null | undefined)?.httpStatus;
  return typeof status === 'number' ? status : null;
}

/** The store answered that the DAG, run or job asked for does not exist. */
export function isNotFound(error: unknown): boolean {
  return answeredCode(error) === 'NOT_FOUND';
}

/**
 * Whether a failed query is tried once more. A refusal the server gave (a 4xx: not found,
 * bad input, not signed in, forbidden) would be the same answer a second later, so retrying
 * it only delays showing it; a failure on the way (no answer, or a 5xx) may well pass.
 */
export function retryUnlessRefused(failureCount: number, error: unknown): boolean {
  const status = answeredStatus(error);
  if (status !== null && status >= 400 && status < 500) return false;
  return failureCount < 1;
}

/**
 * The refetch interval of a live page's query: every LIVE_MS, until the server answers that
 * what the page reads does not exist or cannot (NOT_FOUND, or an id that is not one). The
 * page's input comes from its URL and never changes, so polling would only repeat that
 * answer every second, each time with a 404 in the browser's console.
 */
export function livePoll(query: { state: { error: unknown } }): number | false {
  const code = answeredCode(query.state.error);
  return code === 'NOT_FOUND' || code === 'BAD_REQUEST' ? false : LIVE_MS;
}
