import { describe, expect, it } from 'vitest';
import { fencedWriteRefusal, parseJobId, parseWorkerId, type FenceRecord } from '../src/index';
import { type LeaseRef } from '../src/store';

const ref: LeaseRef = { jobId: parseJobId('7'), fence: 3, workerId: parseWorkerId('w1'), session: 's1' };
const held: FenceRecord = { fence: 3, holder: 'w1', state: 'leased', live: true, holderSession: 's1', currentSession: 's1' };

describe('fencedWriteRefusal', () => {
  it('calls a live lease its holder and session still hold ended: only a result already written for the fence refuses it', () => {
    const err = fencedWriteRefusal(ref, held, 'completeJob');
    expect(err.code).toBe('LEASE_LOST');
    expect(err.message).toBe('completeJob refused: worker w1 no longer holds job 7: the result store already holds a result for this fence');
    expect(err.details.cause).toBe('ended');
  });

  it('tells an expired lease from another session of the same worker', () => {
    expect(fencedWriteRefusal(ref, { ...held, live: false }, 'renewLease').details.cause).toBe('expired');
    expect(fencedWriteRefusal(ref, { ...held, currentSession: 's2' }, 'renewLease').details.cause).toBe('old-session');
    expect(fencedWriteRefusal(ref, { ...held, holderSession: 's0' }, 'renewLease').details.cause).toBe('old-session');
    // The node's own hand-back carries no session and is judged on the fence and holder alone.
    expect(fencedWriteRefusal({ ...ref, session: null }, { ...held, live: false, currentSession: 's2' }, 'releaseJob').details.cause).toBe('expired');
  });

  it('judges the fence before the holder: a stale fence is stale whoever holds the job now', () => {
    const err = fencedWriteRefusal({ ...ref, fence: 2 }, { ...held, holder: 'w2' }, 'failJob');
    expect(err.code).toBe('STALE_FENCE');
    expect(err.details).toMatchObject({ jobId: '7', fence: 2, recordFence: 3, holder: 'w2', state: 'leased', operation: 'failJob' });
  });
});
