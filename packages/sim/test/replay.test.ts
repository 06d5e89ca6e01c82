import type { JobState } from '@fenceline/core';
import { describe, expect, it } from 'vitest';
import type { DagReplay } from '../src/report/replay';
import { runScenario, type ScenarioFile } from '../src/scenario/run';

/**
 * A small world with everything a replay must show: a fan-out whose busy workers are
 * paused past their lease (expiries, re-grants, refused stale writes), retried failures,
 * and diamond DAGs whose failures leave their downstream tasks upstream_failed.
 */
const STORY: ScenarioFile = {
  name: 'replay-story',
  description: 'a fan-out with paused workers beside failing diamonds',
  headline: 'fanout',
  seed: 3,
  faultPhaseMs: 20 * 60_000,
  livenessMs: 25 * 60_000,
  cluster: { nodes: 2, shardCount: 4, capFraction: 1 },
  workers: { count: 12, slots: 1, pollWaitMs: 25_000 },
  jobs: { durationJitter: 0.2, failureRate: 0.15 },
  load: [
    // Enough retries that a fan-out job outlives an expiry and its share of the random
    // failures whatever the seed draws, so the fan-out run always ends succeeded.
    { name: 'fan', count: 1, tasks: 30, shape: 'fanout', durationMs: 120_000, triggerAtMs: 60_000, retries: 8 },
    { name: 'pipes', count: 4, tasks: 5, shape: 'diamond', durationMs: 30_000, everyMs: 300_000, retries: 0 },
  ],
  script: [{ atMs: 150_000, action: 'pause-workers', count: 4, durationMs: 150_000, busyOnly: true }],
};

const TERMINAL: ReadonlySet<JobState> = new Set(['succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled']);

/** The moves the store makes, from the job's state before to its state after. */
const LEGAL: Record<JobState, readonly JobState[]> = {
  waiting: ['ready', 'upstream_failed', 'skipped'],
  ready: ['leased', 'upstream_failed'],
  leased: ['ready', 'succeeded', 'failed'],
  succeeded: [],
  failed: [],
  upstream_failed: [],
  skipped: [],
  cancelled: [],
};

/** Checks a replay against itself and returns each job's last recorded state. */
function expectConsistent(replay: DagReplay): Map<string, JobState> {
  const last = new Map<string, JobState>();
  let previousMs = -Infinity;
  const taskIds = new Set(replay.tasks.map((t) => t.id));
  for (const t of replay.transitions) {
    expect(t.atMs, `${t.runId}/${t.taskId} at ${t.atMs}`).toBeGreaterThanOrEqual(previousMs);
    previousMs = t.atMs;
    expect(taskIds.has(t.taskId)).toBe(true);
    const key = `${t.runId}/${t.taskId}`;
    const before = last.get(key);
    if (before === undefined) {
      expect(t.cause, key).toBe('created');
      expect(['waiting', 'ready']).toContain(t.state);
    } else {
      expect(LEGAL[before], `${key}: ${before} -> ${t.state} (${t.cause}) at ${t.atMs}`).toContain(t.state);
    }
    if (t.state === 'leased') expect(t.workerId).not.toBeNull();
    last.set(key, t.state);
  }
  expect(previousMs).toBeLessThanOrEqual(replay.endMs);
  return last;
}

describe('Replay: one DAG over virtual time', () => {
  it('records every job of the fan-out from creation to a terminal state, with expiries and refused stale writes, and leaves the trace hash unchanged', async () => {
    const plain = (await runScenario(STORY)).runs[0]!;
    const recorded = (await runScenario(STORY, undefined, { dagReplay: true })).runs[0]!;
    expect(plain.dagReplay).toBeUndefined();
    expect(recorded.traceHash).toBe(plain.traceHash);
    expect(recorded.events).toBe(plain.events);
    expect(recorded.outcome).toBe('ok');

    const replay = recorded.dagReplay!;
    expect(replay.dagId).toBe('fan-0');
    expect(replay.tasks).toHaveLength(30);
    expect(replay.runs).toHaveLength(1);
    expect(replay.truncatedAtMs).toBeNull();
    expect(replay.dropped).toEqual({ transitions: 0, refusals: 0, runs: 0 });
    const run = replay.runs[0]!;
    expect(run.state).toBe('succeeded');
    expect(run.endStates).toEqual(replay.tasks.map(() => 'succeeded'));

    const last = expectConsistent(replay);
    expect(last.size).toBe(30);
    for (const [key, state] of last) expect(TERMINAL.has(state), `${key} ended ${state}`).toBe(true);
    // The paused workers' leases expired and their jobs ran again elsewhere; on waking,
    // the store refused what they sent under their old fences.
    expect(replay.transitions.some((t) => t.cause === 'expired')).toBe(true);
    expect(replay.refusals.length).toBeGreaterThan(0);
    for (const r of replay.refusals) expect(['STALE_FENCE', 'LEASE_LOST']).toContain(r.code);
    // Each grant raises the fence, and a job's attempts never run backwards past a hand-back.
    for (const t of replay.transitions.filter((x) => x.cause === 'granted')) expect(t.attempt).toBeGreaterThanOrEqual(1);
  });

  it('follows a named DAG with dependencies through every run: waiting, promotion and upstream failures', async () => {
    const report = (await runScenario(STORY, undefined, { dagReplay: { dagId: 'pipes-1' } })).runs[0]!;
    const replay = report.dagReplay!;
    expect(replay.dagId).toBe('pipes-1');
    expect(replay.tasks.map((t) => t.dependsOn.length)).toEqual([0, 1, 1, 1, 3]);
    expect(replay.runs.length).toBeGreaterThan(3);
    const last = expectConsistent(replay);
    // Runs still going when the simulation stopped may end mid-way; every finished run's jobs are terminal.
    for (const run of replay.runs.filter((r) => r.state === 'succeeded' || r.state === 'failed')) {
      for (const [i, t] of replay.tasks.entries()) {
        expect(TERMINAL.has(last.get(`${run.runId}/${t.id}`)!)).toBe(true);
        expect(run.endStates[i]).toBe(last.get(`${run.runId}/${t.id}`));
      }
    }
    expect(replay.transitions.some((t) => t.cause === 'promoted')).toBe(true);
    expect(replay.transitions.some((t) => t.state === 'upstream_failed')).toBe(true);
  });

  it('stops at its cap, says so, and still knows how every job ended', async () => {
    const report = (await runScenario(STORY, undefined, { dagReplay: { maxTransitions: 40 } })).runs[0]!;
    const replay = report.dagReplay!;
    expect(replay.transitions).toHaveLength(40);
    expect(replay.dropped.transitions).toBeGreaterThan(0);
    expect(replay.truncatedAtMs).toBeGreaterThanOrEqual(replay.transitions[39]!.atMs);
    expect(replay.runs[0]!.endStates.every((s) => s === 'succeeded')).toBe(true);
  });

  it('refuses a DAG the scenario does not have before running anything', async () => {
    await expect(runScenario(STORY, undefined, { dagReplay: { dagId: 'pipes-9' } })).rejects.toThrow(/no DAG "pipes-9"/);
  });
});
