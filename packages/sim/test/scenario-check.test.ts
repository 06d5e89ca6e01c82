import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '@fenceline/core';
import { checkScenario } from '../src/scenario/check';
import { resolveScenario, type ScenarioConfig } from '../src/scenario/config';
import { randomizeScenario } from '../src/scenario/randomize';
import { runScenario, type ScenarioFile } from '../src/scenario/run';
import { SCENARIOS } from '../src/scenarios';

const small: ScenarioFile = {
  name: 'small-fanout',
  headline: 'fanout',
  faultPhaseMs: 60_000,
  livenessMs: 10 * 60_000,
  cluster: { nodes: 1, shardCount: 2, capFraction: 1 },
  workers: { count: 2, slots: 1, pollWaitMs: 25_000 },
  load: [
    { name: 'fanout', count: 1, tasks: 40, shape: 'fanout', durationMs: 300_000, triggerAtMs: 10_000, retries: 0 },
    { name: 'others', count: 0, tasks: 1, shape: 'independent', durationMs: 60_000, everyMs: 900_000 },
  ],
};

describe('checkScenario', () => {
  it('passes every named scenario as written', () => {
    for (const file of Object.values(SCENARIOS)) expect(() => checkScenario(resolveScenario(file))).not.toThrow();
  });

  it('passes every swarm world drawn from seeds 1-1000', () => {
    const base = resolveScenario(SCENARIOS.swarm!);
    for (let seed = 1; seed <= 1000; seed++) expect(() => checkScenario(randomizeScenario({ ...base, seed }, seed))).not.toThrow();
  });

  it('refuses a scenario that cannot run with a typed error naming every wrong field', () => {
    const bad = resolveScenario({
      name: 'bad',
      headline: 'fanout',
      workers: { count: -5 },
      load: [{ name: 'x', count: 1, tasks: 0, shape: 'star' as never, durationMs: 1000 }],
      faults: { tickMs: 1000, workerPause: { probability: 5, minMs: 100, maxMs: 10 } },
      script: [{ atMs: 0, action: 'crash-leader', shard: 99, downMs: 1000 }],
    });
    let caught: unknown;
    try {
      checkScenario(bad);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidInputError);
    const problems = (caught as InvalidInputError).details.problems as string[];
    expect(problems).toEqual([
      'workers.count must be an integer >= 0, got -5',
      'load[0].tasks must be an integer >= 1, got 0',
      'load[0].shape must be one of independent, chain, diamond, fanout, got "star"',
      'faults.workerPause.probability must be a number in [0, 1], got 5',
      'faults.workerPause.maxMs must be a number >= 100, got 10',
      'script[0].shard must be below cluster.shardCount (16), got 99',
    ]);
  });

  it('runScenario refuses before simulating anything', async () => {
    const bad = { ...small, cluster: { nodes: 0, shardCount: 2, capFraction: 1.5 } } as ScenarioFile;
    await expect(runScenario(bad)).rejects.toThrow(/cluster.nodes must be an integer >= 1, got 0; cluster.capFraction must be a number in \(0, 1\], got 1.5/);
  });

  it('rejects a group name whose DAG ids the store would refuse', () => {
    for (const name of ['_hidden', 'a/b', 'x'.repeat(127)]) {
      const config: ScenarioConfig = resolveScenario({ ...small, load: [{ ...small.load[0]!, name, count: 10 }] });
      expect(() => checkScenario(config), name).toThrow(/load\[0\].name must be letters, digits, dots, dashes or underscores, starting with a letter or digit/);
    }
    expect(() => checkScenario(resolveScenario({ ...small, load: [{ ...small.load[0]!, name: 'x'.repeat(126), count: 10 }] }))).not.toThrow();
  });

  it('rejects duplicate group names, since figures are kept per group', () => {
    const config: ScenarioConfig = resolveScenario({ ...small, load: [small.load[0]!, { ...small.load[0]! }] });
    expect(() => checkScenario(config)).toThrow(/load\[1\].name must be unique among the groups/);
  });
});

describe('fanout figures of a fan-out that does not finish', () => {
  it('give no makespan and no share-done time that was not reached, and a group of 0 DAGs makes none', async () => {
    // 40 five-minute jobs on 2 workers is 100 minutes of work; the run ends after 11.
    const report = await runScenario(small);
    const r = report.runs[0]!;
    expect(r.outcome).toBe('liveness');
    expect(r.size.dags).toBe(1);
    expect(r.figures.fanoutFinished).toBe(false);
    expect(r.figures.fanoutJobs).toBe(40);
    expect(r.figures.fanoutJobsDone as number).toBeGreaterThan(0);
    expect(r.figures.fanoutJobsDone as number).toBeLessThan(20);
    expect('fanoutMakespanMin' in r.figures).toBe(false);
    expect('fanout50PercentDoneMin' in r.figures).toBe(false);
    expect('fanout99PercentDoneMin' in r.figures).toBe(false);
    expect(r.figures.otherJobsStarted).toBe(0);
  });
});
