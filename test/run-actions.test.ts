import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, parseRunId, parseWorkerId, type RunRow } from '@fenceline/core';
import { runCli } from './support/cli-process';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);
const RENEW_MS = 20_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runIn(f: Fixture, runId: string, states: RunRow['state'][], timeoutMs = 60_000): Promise<RunRow> {
  return eventually(
    `run ${runId} to be ${states.join(' or ')}`,
    async () => {
      const run = await f.store.getRun(parseRunId(runId));
      return states.includes(run.state) ? run : null;
    },
    timeoutMs,
  );
}

describe('operator actions through real schedulers, workers and the CLI', () => {
  let f: Fixture;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fenceline-actions-'));
    // Renewals every 20 s: a cancel that reached its worker sooner came through the worker's open poll.
    f = await startFixture({
      schedulers: 2,
      workers: 2,
      env: { FENCELINE_ALLOW_SHELL: '1', FENCELINE_CAP_PERCENT: '100', FENCELINE_LEASE_TTL_MS: String(RENEW_MS * 3), FENCELINE_RENEW_INTERVAL_MS: String(RENEW_MS) },
    });
  });
  afterAll(async () => {
    await f?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('cancels a run whose shell job is running: the process is killed, its late result refused, and a second cancel changes nothing', async () => {
    const pidFile = join(dir, 'long.pid');
    await f.store.putDag(
      {
        id: 'cancel-shell',
        tasks: [
          { id: 'long', type: 'shell', config: { command: 'sh', args: ['-c', `echo $$ > ${pidFile}; exec sleep 120`] } },
          { id: 'after', type: 'noop', dependsOn: ['long'] },
        ],
      },
      SHARDS,
    );
    const run = await f.store.triggerRun(parseDagId('cancel-shell'));
    await eventually('the shell job to start', async () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 60_000);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(alive(pid)).toBe(true);
    const [leased] = (await f.store.listJobs(run.id)).filter((j) => j.taskId === 'long');
    expect(leased).toMatchObject({ state: 'leased' });

    const cancel = await runCli(f.databaseUrl, 'cancel', run.id, '--reason', 'wrong input file');
    expect(cancel.stderr).toBe('');
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/applied .*long running -> cancelled.*after waiting -> cancelled.*run is cancelled/);
    expect((await runIn(f, run.id, ['cancelled'])).endedAt).not.toBeNull();
    const jobs = await f.store.listJobs(run.id);
    expect(jobs.map((j) => j.state)).toEqual(['cancelled', 'cancelled']);
    const long = jobs.find((j) => j.taskId === 'long')!;
    expect(long.fence).toBe(leased!.fence + 1);

    // The worker hears of the revocation at once on its open poll (its next renewal is 20 s
    // away) and kills the process.
    const cancelledAt = Date.now();
    await eventually('the cancelled shell process to be killed', async () => !alive(pid), 30_000, 50);
    expect(Date.now() - cancelledAt).toBeLessThan(RENEW_MS / 2);
    // Whatever its holder still sends under the old fence is refused, and nothing was written.
    const late = await f.store.completeJobs([
      { ref: { jobId: long.id, fence: leased!.fence, workerId: parseWorkerId(leased!.holder!), session: null }, output: 'late', logs: null },
    ]);
    expect(late[0]).toMatchObject({ ok: false, error: { code: 'STALE_FENCE' } });
    expect(await f.store.getResult(long.id)).toBeNull();
    const revoked = await eventually(
      'the revocation in the event log',
      async () => {
        const events = await f.store.listEvents({ jobId: long.id, type: 'lease:revoked' });
        return events.length > 0 ? events : null;
      },
      10_000,
    );
    expect(revoked[0]).toMatchObject({ workerId: leased!.holder, fence: long.fence });

    // Cancel is idempotent: a second one changes nothing and says why.
    const again = await runCli(f.databaseUrl, 'cancel', run.id);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to cancel: the run had already ended cancelled');
    expect((await f.store.listJobs(run.id)).map((j) => j.fence)).toEqual(jobs.map((j) => j.fence));
    const listed = await runCli(f.databaseUrl, 'actions', run.id);
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);

    // A bad request names its field and stores nothing.
    const bad = await runCli(f.databaseUrl, 'mark', run.id, '--task', 'nope', '--success');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/INVALID_INPUT: .*taskIds: not tasks of DAG cancel-shell: nope.*reason: mark_success needs a reason/);
    expect(await f.store.listRunActions(run.id)).toHaveLength(2);
  });

  it('applies a clear whose leader crashed before writing it: the next leader reruns the task under a higher fence', async () => {
    const flag = join(dir, 'flaky.flag');
    await f.store.putDag(
      {
        id: 'clear-after-crash',
        tasks: [
          { id: 'flaky', type: 'shell', config: { command: 'sh', args: ['-c', `test -f ${flag} || { touch ${flag}; echo first try fails >&2; exit 3; }`] } },
          { id: 'report', type: 'noop', dependsOn: ['flaky'] },
        ],
      },
      SHARDS,
    );
    const run = await f.store.triggerRun(parseDagId('clear-after-crash'));
    await runIn(f, run.id, ['failed']);
    const failed = await f.store.listJobs(run.id);
    expect(failed.map((j) => [j.taskId, j.state])).toEqual([
      ['flaky', 'failed'],
      ['report', 'upstream_failed'],
    ]);

    // The shard's leader stops before it hears of the clear, and is killed.
    const leader = (await f.store.listShards()).find((s) => s.shard === run.shard)!.holder!;
    f.cluster.signal(leader, 'SIGSTOP');
    const cleared = await runCli(f.databaseUrl, 'clear', run.id, '--task', 'flaky', '--downstream', '--no-wait');
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toContain('pending');
    f.cluster.signal(leader, 'SIGKILL');

    const done = await runIn(f, run.id, ['succeeded'], 90_000);
    expect(done.endedAt).not.toBeNull();
    const [action] = await f.store.listRunActions(run.id);
    expect(action).toMatchObject({ kind: 'clear', state: 'applied', result: { changed: [{ taskId: 'flaky' }, { taskId: 'report' }] } });
    const after = await f.store.listJobs(run.id);
    expect(after.map((j) => j.state)).toEqual(['succeeded', 'succeeded']);
    const flaky = after.find((j) => j.taskId === 'flaky')!;
    expect(flaky.fence).toBeGreaterThan(failed.find((j) => j.taskId === 'flaky')!.fence + 1);
    expect(flaky.attempt).toBe(1);
    // The CLI numbers the attempts through the job's life, as the run page does: two in all,
    // though the retry budget the clear reset reads 1 again, and it names the clear.
    const jobs = await runCli(f.databaseUrl, 'jobs', run.id);
    expect(jobs.code, jobs.stderr).toBe(0);
    const flakyLine = jobs.stdout.split('\n').find((l) => l.includes("'flaky'"));
    expect(flakyLine, jobs.stdout).toMatch(/'flaky'\s*│\s*'succeeded'\s*│\s*2\s*│\s*'1\/\d+'\s*│\s*'by \S+ /);
    const result = await f.store.getResult(flaky.id);
    expect(result).toMatchObject({ outcome: 'succeeded', fence: flaky.fence });
    // Applied once, by the leader that took the shard over.
    const applied = await eventually(
      'the action in the event log',
      async () => {
        const events = await f.store.listEvents({ runId: run.id, type: 'run:action' });
        return events.length > 0 ? events : null;
      },
      10_000,
    );
    expect(applied).toHaveLength(1);
    expect(applied[0]!.nodeId).not.toBe(leader);
  });

  it('follows trigger rules: a clean-up and an alert run after a failure, the rest is upstream_failed or skipped', async () => {
    await f.store.putDag(
      {
        id: 'trigger-rules',
        tasks: [
          { id: 'extract', type: 'shell', config: { command: 'sh', args: ['-c', 'exit 3'] } },
          { id: 'load', type: 'noop', dependsOn: ['extract'] },
          { id: 'cleanup', type: 'noop', dependsOn: ['load'], trigger: 'all_done' },
          { id: 'alert', type: 'noop', dependsOn: ['extract'], trigger: 'one_failed' },
          { id: 'celebrate', type: 'noop', dependsOn: ['load'], trigger: 'one_success' },
          { id: 'audit', type: 'noop', dependsOn: ['cleanup'], trigger: 'one_failed' },
        ],
      },
      SHARDS,
    );
    const run = await f.store.triggerRun(parseDagId('trigger-rules'));
    // Two tasks end at about the same time here; the run is finished by whichever settles last.
    expect((await runIn(f, run.id, ['succeeded', 'failed'], 30_000)).state).toBe('failed');
    const states = Object.fromEntries((await f.store.listJobs(run.id)).map((j) => [j.taskId, j.state]));
    expect(states).toEqual({ extract: 'failed', load: 'upstream_failed', cleanup: 'succeeded', alert: 'succeeded', celebrate: 'upstream_failed', audit: 'skipped' });
  });
});
