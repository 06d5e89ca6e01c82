import { resolveScenario, runScenario, SCENARIOS } from '@fenceline/sim';
import { describe, expect, it } from 'vitest';
import { DEFAULT_KNOBS, type Knobs } from '../src/app/(console)/simulator/knobs';
import { FANOUT_TIMING, livenessNotice, MAX_LIVENESS_MS, planLiveness, sharedLivenessMs, spanText } from '../src/app/(console)/simulator/liveness';
import { scenarioFor } from '../src/app/(console)/simulator/sim-scenario';

const knobs = (k: Partial<Knobs>): Knobs => ({ ...DEFAULT_KNOBS, ...k });
/** The audit's world: short of capacity, no faults at all. */
const SHORT = knobs({ workers: 10, fanoutTasks: 200, capPercent: 30 });

describe('Simulator liveness window', () => {
  it("keeps the page's copy of the fanout scenario's timing equal to the written file", () => {
    const c = resolveScenario(SCENARIOS.fanout!);
    const [fanout, others] = c.load;
    expect({
      faultPhaseMs: c.faultPhaseMs,
      baseLivenessMs: c.livenessMs,
      triggerAtMs: fanout!.triggerAtMs,
      fanoutJobMs: fanout!.durationMs,
      otherJobMs: others!.durationMs,
      otherEveryMs: others!.everyMs,
      durationJitter: c.jobs.durationJitter,
      slotsPerWorker: c.workers.slots,
    }).toEqual(FANOUT_TIMING);
  });

  it("keeps the file's ten healed minutes when the fan-out fits in them", () => {
    const plan = planLiveness(DEFAULT_KNOBS);
    expect(plan.concurrency).toBe(60);
    expect(plan.livenessMs).toBe(FANOUT_TIMING.baseLivenessMs);
    expect(livenessNotice(plan, DEFAULT_KNOBS)).toBeNull();
  });

  it('sizes the window from jobs / concurrency x job duration when the cap runs the fan-out a few at a time', () => {
    const plan = planLiveness(SHORT);
    // floor(30% of 10) = 3 at a time: 67 rounds of at most 6 minutes.
    expect(plan.concurrency).toBe(3);
    expect(plan.drainMs).toBe(67 * 6 * 60_000);
    expect(plan.livenessMs).toBeGreaterThan(plan.drainMs - FANOUT_TIMING.faultPhaseMs);
    expect(plan.livenessMs % (5 * 60_000)).toBe(0);
    expect(plan.exceedsBound).toBe(false);
    const notice = livenessNotice(plan, SHORT)!;
    expect(notice.tone).toBe('warn');
    expect(notice.text).toContain('3 at a time');
    expect(notice.text).toContain(spanText(plan.livenessMs));
  });

  it('bounds the window, and warns before a run whose fan-out cannot finish within it', () => {
    const k = knobs({ workers: 1, fanoutTasks: 5000, capPercent: 1 });
    const plan = planLiveness(k);
    expect(plan.livenessMs).toBe(MAX_LIVENESS_MS);
    expect(plan.exceedsBound).toBe(true);
    expect(livenessNotice(plan, k)!.text).toMatch(/Expect it to end unfinished, with I7 reporting it/);
  });

  it('leaves the fan-out what the other DAGs do not use when that is less than its cap', () => {
    const plan = planLiveness(knobs({ workers: 20, capPercent: null, otherDags: 150 }));
    // 150 DAGs x 1.2 min every 15 min keep 12 slots busy.
    expect(plan.otherSlots).toBeCloseTo(12);
    expect(plan.concurrency).toBe(8);
  });

  it('gives both sides of a comparison the longer window', () => {
    expect(sharedLivenessMs([planLiveness(SHORT), planLiveness({ ...SHORT, capPercent: null })])).toBe(planLiveness(SHORT).livenessMs);
  });

  it('lets a fan-out that fits drain: ten workers, 200 jobs, a 30% cap and no faults keep I7', async () => {
    const { livenessMs } = planLiveness(SHORT);
    const report = await runScenario(scenarioFor('cap 30%', SHORT, livenessMs));
    const run = report.runs[0]!;
    expect(run.violations).toEqual([]);
    expect(run.outcome).toBe('ok');
    expect(run.figures.fanoutFinished).toBe(true);
  });

  it('still reports a fan-out that cannot finish in the bounded window as an I7 violation', async () => {
    const k = knobs({ workers: 1, fanoutTasks: 200, otherDags: 0 });
    const plan = planLiveness(k);
    expect(plan.exceedsBound).toBe(true);
    const run = (await runScenario(scenarioFor('cap 30%', k, plan.livenessMs))).runs[0]!;
    expect(run.outcome).toBe('liveness');
    expect(run.violations.map((v) => v.invariant)).toContain('I7');
    expect(run.figures.fanoutFinished).toBe(false);
    expect(run.figures.fanoutMakespanMin).toBeUndefined();
  });
});
