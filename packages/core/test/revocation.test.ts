import { describe, expect, it } from 'vitest';
import { asWorkerId } from './literal-ids';
import { releaseReason, sweepReason } from '../src/engine/revocation';

describe('revocation reasons', () => {
  const lease = { previousHolder: asWorkerId('worker-7'), renewed: false, attemptCounted: false };

  it('blames a lost delivery only when the holder stayed in the pool and never renewed', () => {
    expect(sweepReason(lease, false)).toBe('never renewed while worker-7 stayed in the pool (most likely never delivered); the attempt is not counted');
    expect(sweepReason(lease, true)).toBe('holder gone: worker-7 is not in the pool (stopped, crashed or cut off) and never renewed the lease; the attempt is not counted');
  });

  it('says a renewed lease expired, and whether its holder left the pool', () => {
    const renewed = { ...lease, renewed: true, attemptCounted: true };
    expect(sweepReason(renewed, true)).toBe('holder gone: worker-7 renewed the lease, then dropped out of the pool (stopped, crashed or cut off)');
    expect(sweepReason(renewed, false)).toMatch(/^expired after renewals: not renewed within the TTL while worker-7 stayed in the pool/);
  });

  it('names the cause of a hand-back', () => {
    expect(releaseReason('stopping')).toMatch(/^released on stop/);
    expect(releaseReason('no-free-slot')).toMatch(/no free slot/);
    expect(releaseReason(undefined)).toBe('handed back by its worker');
  });
});
