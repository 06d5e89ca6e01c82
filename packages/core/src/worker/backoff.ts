/**
 * The wait before retrying a call no node answered, after `attempt` such failures in a
 * row (0 for the first retry of a registration): doubling from 100 ms up to 2 s, so a node
 * that is back is found within seconds and one that stays down costs a request every two.
 */
export function retryDelayMs(attempt: number): number {
  return Math.min(2000, 100 * 2 ** Math.min(Math.max(attempt, 0), 5));
}
