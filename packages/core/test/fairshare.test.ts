import { describe, expect, it } from 'vitest';
import { capFor, planDispatch, topReady, type DispatchDag, type FreeWorker, type ReadyJob } from '../src/fairshare/plan';

function readyJobs(prefix: string, count: number, priority = 0): ReadyJob[] {
  return Array.from({ length: count }, (_, i) => ({ jobId: `${prefix}-${String(i).padStart(5, '0')}`, priority, readyAtMs: 1_000 + i }));
}

function workers(count: number, free: number): FreeWorker[] {
  return Array.from({ length: count }, (_, i) => ({ workerId: `w${String(i).padStart(3, '0')}`, free }));
}

describe('fair share', () => {
  it('caps a DAG at a fraction of the pool, at least one, none in an empty pool', () => {
    expect(capFor(100, 0.3)).toBe(30);
    expect(capFor(100, 0.29)).toBe(29);
    expect(capFor(3_000, 0.3)).toBe(900);
    expect(capFor(2, 0.3)).toBe(1);
    expect(capFor(0, 0.3)).toBe(0);
  });

  it('a DAG with 10,000 ready jobs and a pool of 100 gets at most 30 leases', () => {
    const huge: DispatchDag = { dagId: 'huge', held: 0, ready: readyJobs('h', 10_000) };
    const plan = planDispatch({ dags: [huge], poolSlots: 100, workers: workers(25, 4), capFraction: 0.3 });
    expect(plan.grants).toHaveLength(30);
    expect(plan.grants.map((g) => g.jobId)).toEqual(readyJobs('h', 30).map((j) => j.jobId));
    expect(plan.capped).toEqual([{ dagId: 'huge', held: 30, cap: 30, waiting: 9_970 }]);
  });

  it('counts the leases a DAG already holds against its cap', () => {
    const plan = planDispatch({ dags: [{ dagId: 'd', held: 28, ready: readyJobs('d', 10) }], poolSlots: 100, workers: workers(10, 10), capFraction: 0.3 });
    expect(plan.grants).toHaveLength(2);
    const full = planDispatch({ dags: [{ dagId: 'd', held: 31, ready: readyJobs('d', 10) }], poolSlots: 100, workers: workers(10, 10), capFraction: 0.3 });
    expect(full.grants).toEqual([]);
    expect(full.capped).toEqual([{ dagId: 'd', held: 31, cap: 30, waiting: 10 }]);
  });

  it("a second DAG's ready job is granted in the same dispatch round", () => {
    const huge: DispatchDag = { dagId: 'huge', held: 0, ready: readyJobs('h', 10_000) };
    const small: DispatchDag = { dagId: 'small', held: 0, ready: readyJobs('s', 1) };
    // Only three free slots: the huge DAG could fill them all, but rounds alternate.
    const plan = planDispatch({ dags: [huge, small], poolSlots: 100, workers: workers(1, 3), capFraction: 0.3 });
    expect(plan.grants.map((g) => g.dagId)).toEqual(['huge', 'small', 'huge']);
    const rotated = planDispatch({ dags: [huge, small], poolSlots: 100, workers: workers(1, 1), capFraction: 0.3, rotation: 1 });
    expect(rotated.grants.map((g) => g.dagId)).toEqual(['small']);
  });

  it('grants a DAG its jobs by priority, then by age, then by id', () => {
    const ready: ReadyJob[] = [
      { jobId: 'old-low', priority: 0, readyAtMs: 1 },
      { jobId: 'new-high', priority: 10, readyAtMs: 50 },
      { jobId: 'old-high', priority: 10, readyAtMs: 5 },
      { jobId: 'b-mid', priority: 3, readyAtMs: 7 },
      { jobId: 'a-mid', priority: 3, readyAtMs: 7 },
    ];
    const plan = planDispatch({ dags: [{ dagId: 'd', held: 0, ready }], poolSlots: 100, workers: workers(1, 4), capFraction: 1 });
    expect(plan.grants.map((g) => g.jobId)).toEqual(['old-high', 'new-high', 'a-mid', 'b-mid']);
  });

  it("uses a DAG's own capFraction over the cluster's", () => {
    const plan = planDispatch({
      dags: [
        { dagId: 'tight', held: 0, capFraction: 0.05, ready: readyJobs('t', 50) },
        { dagId: 'loose', held: 0, capFraction: 0.6, ready: readyJobs('l', 100) },
        { dagId: 'default', held: 0, ready: readyJobs('d', 100) },
      ],
      poolSlots: 100,
      workers: workers(50, 2),
      capFraction: 0.3,
    });
    const byDag = (id: string) => plan.grants.filter((g) => g.dagId === id).length;
    expect(byDag('tight')).toBe(5);
    expect(byDag('default')).toBe(30);
    expect(byDag('loose')).toBe(60);
    expect(plan.capped.map((c) => [c.dagId, c.cap])).toEqual([
      ['tight', 5],
      ['loose', 60],
      ['default', 30],
    ]);
  });

  it('grants nothing when no worker has a free slot', () => {
    const plan = planDispatch({ dags: [{ dagId: 'd', held: 0, ready: readyJobs('d', 5) }], poolSlots: 100, workers: [{ workerId: 'w', free: 0 }], capFraction: 0.3 });
    expect(plan.grants).toEqual([]);
    expect(plan.capped).toEqual([]);
    expect(planDispatch({ dags: [{ dagId: 'd', held: 0, ready: readyJobs('d', 5) }], poolSlots: 100, workers: [], capFraction: 0.3 }).grants).toEqual([]);
    expect(planDispatch({ dags: [{ dagId: 'd', held: 0, ready: readyJobs('d', 5) }], poolSlots: 0, workers: [], capFraction: 0.3 })).toEqual({ grants: [], capped: [] });
  });

  it('spreads grants over the workers with the most free slots', () => {
    const plan = planDispatch({
      dags: [{ dagId: 'd', held: 0, ready: readyJobs('d', 6) }],
      poolSlots: 100,
      workers: [
        { workerId: 'a', free: 1 },
        { workerId: 'b', free: 4 },
        { workerId: 'c', free: 2 },
      ],
      capFraction: 1,
    });
    expect(plan.grants.map((g) => g.workerId)).toEqual(['b', 'b', 'b', 'c', 'a', 'b']);
  });

  it('breaks ties between equally free workers by the salt, so two nodes pick different workers', () => {
    const input = { dags: [{ dagId: 'd', held: 0, ready: readyJobs('d', 5) }], poolSlots: 1000, workers: workers(100, 1), capFraction: 1 };
    const picked = (tieSalt?: number) => planDispatch({ ...input, tieSalt }).grants.map((g) => g.workerId);
    // Without a salt, ties go by worker id: every node would choose w000..w004.
    expect(picked()).toEqual(['w000', 'w001', 'w002', 'w003', 'w004']);
    // With one, the same salt chooses the same workers (the planner stays pure), and
    // different salts choose mostly different ones.
    expect(picked(7)).toEqual(picked(7));
    const a = new Set(picked(1));
    const overlap = picked(2).filter((w) => a.has(w)).length;
    expect(overlap).toBeLessThan(3);
    // The salt only orders ties: the most free worker still comes first.
    const spread = planDispatch({ ...input, workers: [...workers(10, 1), { workerId: 'zz', free: 3 }], tieSalt: 99 });
    expect(spread.grants[0]!.workerId).toBe('zz');
  });

  it('selects the top jobs of a huge DAG without sorting them all, and agrees with a full sort', () => {
    const jobs: ReadyJob[] = Array.from({ length: 10_000 }, (_, i) => ({ jobId: `j${i}`, priority: (i * 7919) % 13, readyAtMs: (i * 104_729) % 1_000 }));
    const full = [...jobs].sort((a, b) => b.priority - a.priority || a.readyAtMs - b.readyAtMs || (a.jobId < b.jobId ? -1 : 1));
    expect(topReady(jobs, 30)).toEqual(full.slice(0, 30));
    const started = performance.now();
    for (let i = 0; i < 20; i++) planDispatch({ dags: [{ dagId: 'huge', held: 0, ready: jobs }], poolSlots: 100, workers: workers(100, 1), capFraction: 0.3 });
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
