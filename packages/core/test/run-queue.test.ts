import { describe, expect, it } from 'vitest';
import type { RunRow } from '../src/model';
import { RunQueue } from '../src/engine/run-queue';
import { asDagId, asRunId } from './literal-ids';

function run(id: string, dagId: string, scheduledAtMs: number): RunRow {
  const at = new Date(scheduledAtMs);
  return {
    id: asRunId(id),
    dagId: asDagId(dagId),
    dagVersion: 1,
    shard: 0,
    scheduledAt: at,
    trigger: 'schedule',
    state: 'queued',
    createdAt: at,
    startedAt: null,
    endedAt: null,
    params: {},
  };
}

const ids = (runs: (RunRow | undefined)[]): (string | undefined)[] => runs.map((r) => r?.id);
const a = asDagId('a');
const b = asDagId('b');

describe('RunQueue', () => {
  it('starts runs by scheduled time, and equal times in the order they were queued', () => {
    const q = new RunQueue();
    q.enqueue(run('late', 'a', 300));
    q.enqueue(run('early', 'a', 100));
    q.enqueue(run('tie-1', 'a', 200));
    q.enqueue(run('tie-2', 'a', 200));
    expect(ids([q.take(a), q.take(a), q.take(a), q.take(a)])).toEqual(['early', 'tie-1', 'tie-2', 'late']);
  });

  it('keeps each DAG apart and counts runs over all of them', () => {
    const q = new RunQueue();
    q.enqueue(run('a1', 'a', 1));
    q.enqueue(run('b1', 'b', 1));
    q.enqueue(run('a2', 'a', 2));
    expect(q.size()).toBe(3);
    expect(q.peek(b)?.id).toBe('b1');
    expect(q.peek(a)?.id).toBe('a1');
    expect(q.has(run('a2', 'a', 2))).toBe(true);
    expect(q.has(run('a2', 'b', 2))).toBe(false);
    expect(q.peek(asDagId('c'))).toBeUndefined();
  });

  it('leaves a list a start emptied in place, and in its order, until dropIfEmpty', () => {
    const q = new RunQueue();
    q.enqueue(run('a1', 'a', 1));
    q.enqueue(run('b1', 'b', 1));
    expect(q.take(a)?.id).toBe('a1');
    expect(q.hasDag(a)).toBe(true);
    expect(q.peek(a)).toBeUndefined();
    // A run queued meanwhile joins the same list, which keeps its place before b's.
    q.enqueue(run('a2', 'a', 2));
    expect([...q.dagIds()]).toEqual(['a', 'b']);
    q.dropIfEmpty(a);
    expect(q.hasDag(a)).toBe(true);
    q.take(a);
    q.dropIfEmpty(a);
    expect(q.hasDag(a)).toBe(false);
    expect([...q.dagIds()]).toEqual(['b']);
  });

  it('removes named runs and drops a list they emptied', () => {
    const q = new RunQueue();
    q.enqueue(run('a1', 'a', 1));
    q.enqueue(run('a2', 'a', 2));
    q.enqueue(run('a3', 'a', 3));
    q.remove(a, new Set(['a1', 'a3', 'elsewhere']));
    expect(ids([q.peek(a)])).toEqual(['a2']);
    expect(q.size()).toBe(1);
    q.remove(a, new Set(['a2']));
    expect(q.hasDag(a)).toBe(false);
    // Removing from a DAG with nothing queued creates nothing.
    q.remove(b, new Set(['b1']));
    expect(q.hasDag(b)).toBe(false);
    expect(q.size()).toBe(0);
  });

  it('visits a DAG queued while its DAGs are walked', () => {
    const q = new RunQueue();
    q.enqueue(run('a1', 'a', 1));
    const seen: string[] = [];
    for (const dagId of q.dagIds()) {
      seen.push(dagId);
      if (dagId === 'a') q.enqueue(run('b1', 'b', 1));
    }
    expect(seen).toEqual(['a', 'b']);
  });
});
