import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { REPO_ROOT } from '../scripts/cluster';
import type { ClusterFile } from '../scripts/cluster-file';
import { ADMIN_URL, eventually } from './support/cluster-fixture';

/**
 * `npm start` and a Ctrl-C, as a terminal delivers it: SIGINT to every process of the
 * foreground process group at once. The workers must stop first (finishing or handing
 * back what they run, writing their results through schedulers that still answer), then
 * the schedulers (releasing their shards), then the store; nothing may be refused on the
 * way and nothing left running.
 */
describe('npm start: Ctrl-C in the terminal', () => {
  const name = `fenceline_start_${randomBytes(4).toString('hex')}`;
  let store: SqlStore | undefined;
  let dataDir = '';
  afterAll(async () => {
    await store?.close();
    await dropDatabase(ADMIN_URL, name).catch(() => undefined);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('stops the workers before the schedulers, refuses nothing and leaves no lease, shard or process behind', async () => {
    const databaseUrl = await createDatabase(ADMIN_URL, name);
    dataDir = await mkdtemp(join(tmpdir(), 'fenceline-start-'));
    const port = 18_000 + Math.floor(Math.random() * 2_000) * 2;
    // What `npm start` runs, in a process group of its own standing for the terminal's
    // foreground group. (npm itself may return on the SIGINT before its script has
    // finished stopping; the script is what has to get the order right.)
    const launcher = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts/start.ts')], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DATABASE_URL: databaseUrl, FENCELINE_DATA_DIR: dataDir, FENCELINE_CONSOLE: '0', FENCELINE_SCHEDULER_PORT: String(port), FENCELINE_SHARDS: '4' },
    });
    let output = '';
    launcher.stdout.on('data', (d: Buffer) => (output += d.toString()));
    launcher.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
    // The output ends when every process that shares it (the cluster's too) has ended.
    const ended = new Promise<void>((resolve) => launcher.stdout.once('close', () => resolve()));
    try {
      await eventually('the banner', async () => output.includes('fenceline is running'), 120_000);
      const file = JSON.parse(await readFile(join(dataDir, 'cluster.json'), 'utf8')) as ClusterFile;
      store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 2 });
      // Two hundred two-second parts: some are running whenever the Ctrl-C comes.
      await store.triggerRun('wide-fanout');
      await eventually('parts to be running', async () => (await store!.listEvents({ type: 'lease:granted', limit: 20 })).length >= 10, 60_000);

      process.kill(-launcher.pid!, 'SIGINT');
      const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 90_000))]);
      expect(code, output.slice(-4000)).toBe(0);
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 30_000))]);

      const lines = output.split('\n');
      const workerStopped = lines.map((l, i) => (/^\[worker-\d\].*"worker stopped"/.test(l) ? i : -1)).filter((i) => i >= 0);
      const schedulerStopping = lines.findIndex((l) => /^\[scheduler-\d\].*shutting down/.test(l));
      expect(workerStopped).toHaveLength(4);
      expect(schedulerStopping).toBeGreaterThan(Math.max(...workerStopped));
      expect(output).toContain('fenceline stopped');
      expect(lines.filter((l) => /write refused|"refusedWrites":[1-9]|"lost":[1-9]|fetch failed|ECONNREFUSED/.test(l))).toEqual([]);

      // Every part that was running finished or was handed back: none is left leased, every
      // shard was given up, and no scheduler answers any more.
      const [run] = await store.listRuns({ dagId: 'wide-fanout', limit: 1 });
      const jobs = await store.listJobs(run!.id);
      expect(jobs.filter((j) => j.state === 'succeeded').length).toBeGreaterThan(0);
      expect(jobs.filter((j) => j.state === 'leased')).toEqual([]);
      expect((await store.listShards()).every((s) => s.holder === null)).toBe(true);
      for (const url of file.schedulerUrls) await expect(fetch(`${url}/health`)).rejects.toThrow();
      expect(() => process.kill(file.pid, 0)).toThrow();
    } finally {
      try {
        process.kill(-launcher.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
});
