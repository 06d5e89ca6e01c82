import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, type JobRow } from '@fenceline/core';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);

/**
 * A shell job that counts its attempts in a file, prints a line, and then waits for the
 * test to let it go: the first attempt fails, the second succeeds. While it waits, the job
 * is running for certain, so what the store holds of its output then was streamed.
 */
const SCRIPT = `
const fs = require('node:fs');
const dir = process.argv[1];
const n = (fs.existsSync(dir + '/count') ? Number(fs.readFileSync(dir + '/count', 'utf8')) : 0) + 1;
fs.writeFileSync(dir + '/count', String(n));
console.log('attempt ' + n + ' started');
console.error('attempt ' + n + ' says so on stderr');
const wait = setInterval(() => {
  if (!fs.existsSync(dir + '/release-' + n)) return;
  clearInterval(wait);
  console.log('attempt ' + n + ' done');
  process.exit(n < 2 ? 1 : 0);
}, 50);
`;

describe('cluster: a running job’s output is streamed, and every attempt’s log is kept', () => {
  let f: Fixture;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fenceline-log-stream-'));
    f = await startFixture({ schedulers: 1, workers: 1, env: { FENCELINE_ALLOW_SHELL: '1', FENCELINE_SHELL_CWD: dir } });
  });
  afterAll(async () => {
    await f?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows each attempt’s lines in the store before the attempt ends, and keeps both attempts’ logs', async () => {
    await f.store.putDag(
      { id: 'streamed', tasks: [{ id: 'talk', type: 'shell', config: { command: process.execPath, args: ['-e', SCRIPT, dir] }, retries: 1, retryBackoffMs: 0 }] },
      SHARDS,
    );
    const run = await f.store.triggerRun(parseDagId('streamed'));
    const fences: number[] = [];
    for (const n of [1, 2]) {
      const job = await eventually<JobRow>(`attempt ${n} to be leased`, async () => (await f.store.listJobs(run.id)).find((j) => j.state === 'leased' && j.attempt === n), 30_000);
      const streamed = await eventually(
        `attempt ${n}'s first lines in the store`,
        async () => {
          const text = (await f.store.listLogChunks({ jobId: job.id, fence: job.fence })).map((c) => c.text).join('');
          return text.includes(`attempt ${n} started\n`) && text.includes(`stderr: attempt ${n} says so on stderr\n`) ? text : null;
        },
        20_000,
      );
      // The command is still waiting for its release: the lines were streamed while it ran.
      expect(existsSync(join(dir, `release-${n}`))).toBe(false);
      expect(await f.store.getJob(job.id)).toMatchObject({ state: 'leased', fence: job.fence });
      expect(streamed).not.toContain('done');
      fences.push(job.fence);
      writeFileSync(join(dir, `release-${n}`), '');
    }
    const job = await eventually('the job to succeed', async () => (await f.store.listJobs(run.id)).find((j) => j.state === 'succeeded'), 30_000);
    const attempts = await f.store.listAttempts(job.id);
    expect(attempts.map((a) => [a.attempt, a.fence, a.outcome])).toEqual([
      [1, fences[0], 'failed'],
      [2, fences[1], 'succeeded'],
    ]);
    expect(attempts[0]!.logs).toContain('attempt 1 started\n');
    expect(attempts[0]!.logs).toContain('attempt 1 done');
    expect(attempts[0]!.error).toMatch(/exited with code 1/);
    expect(attempts[1]!.logs).toContain('attempt 2 started\n');
    expect(attempts[1]!.logs).toContain('attempt 2 done');
    expect(attempts[1]!.logs).not.toContain('attempt 1');
  });
});
