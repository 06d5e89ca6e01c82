import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { isNotFound, LIVE_MS, livePoll, retryUnlessRefused } from '../src/lib/live-query';

/** An error as the tRPC client raises it when the server answered with this code and status. */
function answered(code: string, httpStatus: number): TRPCClientError<never> {
  return new TRPCClientError(`${code}: refused`, { result: { error: { message: `${code}: refused`, code: -32004, data: { code, httpStatus } } } as never });
}

describe('Live queries', () => {
  it('never retry a NOT_FOUND or any other refusal the server answered, so it shows at once', () => {
    expect(retryUnlessRefused(0, answered('NOT_FOUND', 404))).toBe(false);
    expect(retryUnlessRefused(0, answered('BAD_REQUEST', 400))).toBe(false);
    expect(retryUnlessRefused(0, answered('UNAUTHORIZED', 401))).toBe(false);
  });

  it('retry a failure on the way (no answer, or a server error) once', () => {
    const network = new TRPCClientError('fetch failed');
    expect(retryUnlessRefused(0, network)).toBe(true);
    expect(retryUnlessRefused(1, network)).toBe(false);
    expect(retryUnlessRefused(0, answered('INTERNAL_SERVER_ERROR', 500))).toBe(true);
    expect(retryUnlessRefused(0, new Error('boom'))).toBe(true);
  });

  it('poll every second until the server says the thing does not exist', () => {
    expect(livePoll({ state: { error: null } })).toBe(LIVE_MS);
    expect(livePoll({ state: { error: new TRPCClientError('fetch failed') } })).toBe(LIVE_MS);
    expect(livePoll({ state: { error: answered('INTERNAL_SERVER_ERROR', 500) } })).toBe(LIVE_MS);
    expect(livePoll({ state: { error: answered('NOT_FOUND', 404) } })).toBe(false);
    expect(livePoll({ state: { error: answered('BAD_REQUEST', 400) } })).toBe(false);
    expect(isNotFound(answered('NOT_FOUND', 404))).toBe(true);
    expect(isNotFound(answered('BAD_REQUEST', 400))).toBe(false);
  });
});
