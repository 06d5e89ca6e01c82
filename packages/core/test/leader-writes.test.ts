import { describe, expect, it } from 'vitest';
import type { Timers } from '../src/clock';
import { DeposedLeaderError } from '../src/errors';
import { LeaderWrites } from '../src/engine/leader-writes';
import type { LeaderGroup, LeaderStore, LeaderToken } from '../src/store';
import { asJobId, asRunId } from './literal-ids';

/** Timers that run a callback on the next macrotask, like a zero-length window. */
const soon: Timers = {
  after(_ms, fn) {
    const t = setTimeout(fn, 0);
    return () => clearTimeout(t);
  },
};

const token = (shard: number, epoch = 1): LeaderToken => ({ shard, nodeId: 'n1', epoch });

describe('LeaderWrites', () => {
  it('sends the items of many leaders as one call with one group per token, and refuses only a deposed group', async () => {
    const calls: LeaderGroup<string>[][] = [];
    // A store whose promotion moves every id, except for shard 3, whose leader is deposed.
    const store = {
      promoteJobsAcross: async (groups: LeaderGroup<string>[]) => {
        calls.push(groups);
        return groups.map((g) =>
          g.token.shard === 3 ? new DeposedLeaderError('deposed', { shard: 3, nodeId: 'n1', epoch: 1, operation: 'promoteJobs' }) : g.items.filter((id) => id !== 'not-waiting'),
        );
      },
    } as unknown as LeaderStore;
    const writes = new LeaderWrites(store, soon);
    const one = writes.promote(token(1), [asJobId('a'), asJobId('not-waiting')]);
    const two = writes.promote(token(2), [asJobId('b')]);
    const again = writes.promote(token(1), [asJobId('c')]);
    const three = writes.promote(token(3), [asJobId('d')]).then(
      () => 'moved',
      (e: unknown) => (e as DeposedLeaderError).code,
    );
    expect(await one).toEqual([true, false]);
    expect(await two).toEqual([true]);
    expect(await again).toEqual([true]);
    expect(await three).toBe('DEPOSED_LEADER');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.map((g) => [g.token.shard, g.items])).toEqual([
      [1, ['a', 'not-waiting', 'c']],
      [2, ['b']],
      [3, ['d']],
    ]);
  });

  it('keeps two epochs of one shard in separate groups', async () => {
    const calls: LeaderGroup<{ runId: string; state: 'succeeded' | 'failed' }>[][] = [];
    const store = {
      finishRunsAcross: async (groups: LeaderGroup<{ runId: string; state: 'succeeded' | 'failed' }>[]) => {
        calls.push(groups);
        return groups.map((g) => g.items.map(() => g.token.epoch === 2));
      },
    } as unknown as LeaderStore;
    const writes = new LeaderWrites(store, soon);
    const results = await Promise.all([
      writes.finishRun(token(5, 1), { runId: asRunId('1'), state: 'succeeded' }),
      writes.finishRun(token(5, 2), { runId: asRunId('2'), state: 'failed' }),
    ]);
    expect(results).toEqual([false, true]);
    expect(calls[0]!.map((g) => g.token.epoch)).toEqual([1, 2]);
  });
});
