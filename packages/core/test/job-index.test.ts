import { describe, expect, it } from 'vitest';
import { AssertionError } from '../src/assert';
import type { JobState } from '../src/model';
import { JobIndex, type MemJob } from '../src/engine/job-index';
import { asDagId, asJobId, asRunId } from './literal-ids';

function job(id: string, dagId: string, state: JobState, over: Partial<MemJob> = {}): MemJob {
  return {
    id: asJobId(id),
    runId: asRunId(`run-${dagId}`),
    dagId: asDagId(dagId),
    taskId: `t-${id}`,
    state,
    priority: 0,
    readyAtMs: 0,
    nextAttemptAtMs: 0,
    fence: 0,
    holder: null,
    leasedAtMs: 0,
    pool: 'default',
    need: '',
    ...over,
  };
}

const noCap = (): number => Infinity;

describe('JobIndex', () => {
  it('files jobs added in any state under that state', () => {
    const index = new JobIndex();
    index.add(job('1', 'a', 'ready'));
    index.add(job('2', 'a', 'leased'));
    index.add(job('3', 'b', 'ready'));
    index.add(job('4', 'b', 'waiting'));
    index.add(job('5', 'b', 'succeeded'));
    expect(index.readyCount()).toBe(2);
    expect(index.leasedCount()).toBe(1);
    expect(index.heldByDag()).toEqual(new Map([['a', 1]]));
    expect(index.get('4')?.state).toBe('waiting');
    expect(index.has('5')).toBe(true);
    expect(index.dispatchView(0, noCap).map((d) => [d.dagId, d.held, d.ready.map((r) => r.jobId)])).toEqual([
      ['a', 1, ['1']],
      ['b', 0, ['3']],
    ]);
  });

  it('moves a job between the ready queue and the leased set on every change of state', () => {
    const index = new JobIndex();
    const j = job('1', 'a', 'waiting');
    index.add(j);
    index.setState(j, 'ready');
    expect([index.readyCount(), index.leasedCount()]).toEqual([1, 0]);
    index.setState(j, 'leased');
    expect([index.readyCount(), index.leasedCount()]).toEqual([0, 1]);
    index.setState(j, 'ready');
    expect([index.readyCount(), index.leasedCount()]).toEqual([1, 0]);
    index.setState(j, 'succeeded');
    expect([index.readyCount(), index.leasedCount()]).toEqual([0, 0]);
    // A DAG with nothing ready or leased leaves no empty entry behind.
    expect(index.dispatchView(0, noCap)).toEqual([]);
    expect(index.heldByDag().size).toBe(0);
  });

  it('leaves ready jobs still in their backoff out of the dispatch view, and wakes up for the earliest', () => {
    const index = new JobIndex();
    index.add(job('1', 'a', 'ready', { nextAttemptAtMs: 5_000 }));
    index.add(job('2', 'a', 'ready', { nextAttemptAtMs: 2_000 }));
    index.add(job('3', 'a', 'ready'));
    expect(index.dispatchView(1_000, noCap)[0]!.ready.map((r) => r.jobId)).toEqual(['3']);
    expect(index.nextRetryAtMs(1_000)).toBe(2_000);
    expect(index.dispatchView(3_000, noCap)[0]!.ready.map((r) => r.jobId)).toEqual(['2', '3']);
    expect(index.nextRetryAtMs(3_000)).toBe(5_000);
    // A job that leaves the ready queue needs no wake-up.
    index.setState(index.get('1')!, 'leased');
    expect(index.nextRetryAtMs(3_000)).toBeNull();
  });

  it('moves the backoff of a ready job, and refuses to for a job that is not ready', () => {
    const index = new JobIndex();
    const ready = job('1', 'a', 'ready');
    const leased = job('2', 'a', 'leased');
    index.add(ready);
    index.add(leased);
    expect(index.nextRetryAtMs(0)).toBeNull();
    index.moveBackoff(ready, 7_000);
    expect(index.nextRetryAtMs(0)).toBe(7_000);
    expect(() => index.moveBackoff(leased, 7_000)).toThrow(AssertionError);
  });

  it('skips DAGs at their cap and counts them as capped', () => {
    const index = new JobIndex();
    index.setCapFraction('a', 0.5);
    index.add(job('1', 'a', 'leased'));
    index.add(job('2', 'a', 'ready'));
    index.add(job('3', 'b', 'ready'));
    const capOf = (fraction: number | undefined): number => (fraction === 0.5 ? 1 : 10);
    expect(index.dispatchView(0, capOf).map((d) => d.dagId)).toEqual(['b']);
    expect(index.cappedDags(capOf)).toBe(1);
    expect(index.dispatchView(0).find((d) => d.dagId === 'a')?.capFraction).toBe(0.5);
    index.forgetDag('a');
    expect(index.dispatchView(0).find((d) => d.dagId === 'a')?.capFraction).toBeUndefined();
  });

  it('removes a job of a finished run from every queue, and cancels it for whoever still holds it', () => {
    const index = new JobIndex();
    const j = job('1', 'a', 'leased');
    index.add(j);
    index.remove('1');
    expect(index.has('1')).toBe(false);
    expect(j.state).toBe('cancelled');
    expect(index.leasedCount()).toBe(0);
    index.remove('missing');
  });

  it('lists leases older than a cutoff, in the order the jobs were indexed', () => {
    const index = new JobIndex();
    index.add(job('1', 'a', 'leased', { leasedAtMs: 500 }));
    index.add(job('2', 'a', 'leased', { leasedAtMs: 1_500 }));
    index.add(job('3', 'b', 'leased', { leasedAtMs: 100 }));
    index.add(job('4', 'b', 'ready', { leasedAtMs: 0 }));
    expect(index.leasedBefore(1_000)).toEqual(['1', '3']);
  });

  it('refuses to index a job twice', () => {
    const index = new JobIndex();
    index.add(job('1', 'a', 'ready'));
    expect(() => index.add(job('1', 'a', 'leased'))).toThrow(/job 1 is indexed once/);
    expect([index.readyCount(), index.leasedCount()]).toEqual([1, 0]);
  });

  it('counts a DAG per pool, so each pool caps it on its own', () => {
    const index = new JobIndex();
    index.add(job('1', 'a', 'leased'));
    index.add(job('2', 'a', 'ready'));
    index.add(job('3', 'a', 'ready', { pool: 'gpu', need: 'g' }));
    const capOne = (): number => 1;
    const view = index.dispatchView(0, capOne);
    expect(view.map((d) => [d.pool, d.held, d.ready.map((r) => [r.jobId, r.need])])).toEqual([['gpu', 0, [['3', 'g']]]]);
    expect(index.dispatchView(0).map((d) => [d.pool, d.held])).toEqual([
      ['default', 1],
      ['gpu', 0],
    ]);
    expect(index.cappedDags(capOne)).toBe(1);
    index.setState(index.get('3')!, 'leased');
    expect(index.heldByDag()).toEqual(new Map([['a', 2]]));
  });
});
