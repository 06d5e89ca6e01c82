import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { guardRun, readBaseline, type CpuBaseline } from '../bench/cpu-guard';

// The bench's CPU guard, judged on figures shaped as the end-to-end case records them
// (CPU seconds per process group and the jobs of each phase) against a baseline file of its
// own, so that a regression is shown to fail the run with exit code 3 and a steady run to pass.

const BASELINE: CpuBaseline = {
  commit: 'abcdef0123456789',
  measuredAt: '2026-12-01T00:00:00.000Z',
  reason: 'the test baseline',
  modes: { quick: { wide: 500, small: 400, paced: 1000 } },
};

/** An e2e result whose phases cost `us` microseconds per job each, over 3,000 jobs. */
function e2e(us: { wide: number; small: number; paced: number }) {
  const phase = (perJob: number) => {
    // Split over the groups as the case does, so the guard must sum them.
    const seconds = (perJob * 3000) / 1e6;
    return { jobs: 3000, cpuSeconds: { schedulers: seconds / 2, workers: seconds / 4, postgres: seconds / 4 } };
  };
  return [{ key: 'e2e', figures: { wide: phase(us.wide), small: phase(us.small), paced: phase(us.paced) } }];
}

describe('the bench CPU guard', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bench-guard-'));
    file = join(dir, 'cpu-baseline.json');
    writeFileSync(file, JSON.stringify(BASELINE));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('passes a run at the baseline and prints each phase with its ratio', () => {
    const outcome = guardRun(e2e({ wide: 500, small: 400, paced: 1000 }), 'quick', 'f00', null, { file, limit: 3 });
    expect(outcome.code).toBe(0);
    expect(outcome.out).toEqual([
      'cpu guard: wide 500 us/job = 1.00x the baseline (500 us/job at abcdef0), limit 3x',
      'cpu guard: small 400 us/job = 1.00x the baseline (400 us/job at abcdef0), limit 3x',
      'cpu guard: paced 1,000 us/job = 1.00x the baseline (1,000 us/job at abcdef0), limit 3x',
    ]);
  });

  it('fails a run with exit code 3 when one phase costs 3.5x its baseline, naming it', () => {
    const outcome = guardRun(e2e({ wide: 500, small: 1400, paced: 1100 }), 'quick', 'f00', null, { file, limit: 3 });
    expect(outcome.code).toBe(3);
    expect(outcome.out[1]).toBe('cpu guard: small 1,400 us/job = 3.50x the baseline (400 us/job at abcdef0), limit 3x: REGRESSION');
    expect(outcome.out[2]).toBe('cpu guard: paced 1,100 us/job = 1.10x the baseline (1,000 us/job at abcdef0), limit 3x');
    expect(outcome.out.at(-1)).toMatch(/^cpu guard: FAILED: CPU per job of small is more than 3x the baseline/);
  });

  it('passes a phase just under the limit and takes the limit from BENCH_CPU_GUARD_LIMIT', () => {
    expect(guardRun(e2e({ wide: 1490, small: 400, paced: 1000 }), 'quick', 'f00', null, { file, limit: 3 }).code).toBe(0);
    const saved = process.env.BENCH_CPU_GUARD_LIMIT;
    process.env.BENCH_CPU_GUARD_LIMIT = '2';
    try {
      const outcome = guardRun(e2e({ wide: 1490, small: 400, paced: 1000 }), 'quick', 'f00', null, { file });
      expect(outcome.code).toBe(3);
      expect(outcome.out[0]).toContain('= 2.98x the baseline');
      expect(outcome.out[0]).toContain('limit 2x: REGRESSION');
    } finally {
      if (saved === undefined) delete process.env.BENCH_CPU_GUARD_LIMIT;
      else process.env.BENCH_CPU_GUARD_LIMIT = saved;
    }
  });

  it('judges nothing without a baseline of the run’s mode, and nothing without e2e figures', () => {
    const full = guardRun(e2e({ wide: 5000, small: 5000, paced: 5000 }), 'full', 'f00', null, { file, limit: 3 });
    expect(full.code).toBe(0);
    expect(full.out[0]).toBe('cpu guard: wide 5,000 us/job (no full baseline in bench/cpu-baseline.json to compare with)');
    expect(guardRun([{ key: 'tick', figures: {} }], 'quick', 'f00', null, { file, limit: 3 })).toEqual({ code: 0, out: [], err: [] });
  });

  it('records a new baseline of the run’s mode with its commit and reason, keeping the other modes', () => {
    writeFileSync(file, JSON.stringify({ ...BASELINE, modes: { ...BASELINE.modes, full: { wide: 1, small: 2, paced: 3 } } }));
    const now = () => new Date('2026-12-04T12:00:00.000Z');
    const outcome = guardRun(e2e({ wide: 450, small: 380, paced: 900 }), 'quick', 'f00ba4', '  quieter machine  ', { file, now });
    expect(outcome.code).toBe(0);
    expect(readBaseline(file)).toEqual({
      commit: 'f00ba4',
      measuredAt: '2026-12-04T12:00:00.000Z',
      reason: 'quieter machine',
      modes: { quick: { wide: 450, small: 380, paced: 900 }, full: { wide: 1, small: 2, paced: 3 } },
    });
    // Without figures to record, nothing is written and the run ends with 64.
    const before = readFileSync(file, 'utf8');
    const refused = guardRun([], 'quick', 'f00', 'why', { file, now });
    expect(refused.code).toBe(64);
    expect(refused.err[0]).toContain('no end-to-end figures');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
