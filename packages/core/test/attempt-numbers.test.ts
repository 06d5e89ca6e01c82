import { describe, expect, test } from 'vitest';
import { attemptsText, clearsOfTask, numberAttempts, pendingClear } from '../src/index';
import { type RunActionResult, type RunActionRow } from '../src/store';

const at = (s: number) => new Date(Date.UTC(2026, 11, 3, 12, 0, s));

function action(id: string, kind: RunActionRow['kind'], appliedS: number | null, changed: RunActionResult['changed'], by = 'alice'): RunActionRow {
  return {
    id,
    runId: '1' as RunActionRow['runId'],
    dagId: 'etl' as RunActionRow['dagId'],
    shard: 0,
    kind,
    taskIds: [],
    downstream: false,
    reason: null,
    requestedBy: by,
    state: appliedS === null ? 'pending' : 'applied',
    createdAt: at(0),
    appliedAt: appliedS === null ? null : at(appliedS),
    result: appliedS === null ? null : { changed, runState: 'running' },
  };
}

describe('attempts numbered through a job’s life', () => {
  test('a clear between attempts numbers on (1, 2, 3) and marks the first attempt after it with who asked', () => {
    const actions = [action('7', 'retry_failed', 20, [{ taskId: 'load', from: 'failed', to: 'waiting' }], 'bob')];
    const clears = clearsOfTask(actions, 'load');
    expect(clears).toEqual([{ actionId: '7', kind: 'retry_failed', by: 'bob', at: at(20), reason: null }]);
    const numbered = numberAttempts([{ grantedAt: at(1) }, { grantedAt: at(10) }, { grantedAt: at(21) }], clears);
    expect(numbered.map((a) => a.number)).toEqual([1, 2, 3]);
    expect(numbered.map((a) => a.afterClear?.by ?? null)).toEqual([null, null, 'bob']);
    expect(pendingClear(numbered, clears)).toBeNull();
    expect(attemptsText({ seen: 3, attempt: 1, maxAttempts: 2, lastClear: clears[0]! })).toBe('3 in all; retry budget 1 of 2 since the retry from failure by bob');
  });

  test('only applied actions that moved this task back to waiting count as its clears', () => {
    const actions = [
      action('1', 'clear', null, []),
      action('2', 'clear', 5, [{ taskId: 'other', from: 'succeeded', to: 'waiting' }]),
      action('3', 'mark_success', 6, [{ taskId: 'load', from: 'failed', to: 'succeeded' }]),
      action('4', 'clear', 9, [{ taskId: 'load', from: 'succeeded', to: 'waiting' }]),
    ];
    expect(clearsOfTask(actions, 'load').map((c) => c.actionId)).toEqual(['4']);
  });

  test('a clear after the last attempt is pending, and two clears with no attempt between them mark the latest', () => {
    const clears = clearsOfTask(
      [action('1', 'clear', 5, [{ taskId: 't', from: 'failed', to: 'waiting' }]), action('2', 'clear', 6, [{ taskId: 't', from: 'failed', to: 'waiting' }])],
      't',
    );
    const before = numberAttempts([{ grantedAt: at(1) }], clears);
    expect(pendingClear(before, clears)?.actionId).toBe('2');
    const after = numberAttempts([{ grantedAt: at(1) }, { grantedAt: at(7) }], clears);
    expect(after[1]!.afterClear?.actionId).toBe('2');
  });

  test('without a clear the text is the budget alone, unless lost leases made more attempts than it counts', () => {
    expect(attemptsText({ seen: 2, attempt: 2, maxAttempts: 3, lastClear: null })).toBe('2 of 3');
    expect(attemptsText({ seen: 3, attempt: 2, maxAttempts: 3, lastClear: null })).toBe('3 in all; retry budget 2 of 3');
  });
});
