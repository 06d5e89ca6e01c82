import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import type { ClusterFile } from '@fenceline/cli/cluster-file';
import { ADMIN_URL, eventually } from './support/cluster-fixture';
import { exitWithin, freePortBase, launch, processLogs, type Launch } from './support/launcher';
import { parseDagId, parseUserName } from '@fenceline/core';
import { verifyPassword } from '@fenceline/db/people';

/**
 * `npm start`, a second `npm start` in the same folder, a restart, and a Ctrl-C as a
 * terminal delivers it: SIGINT to every process of the foreground process group at once.
 */
describe('npm start', () => {
  const databases: string[] = [];
  const dirs: string[] = [];
  const stores: SqlStore[] = [];
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const name of databases) await dropDatabase(ADMIN_URL, name).catch(() => undefined);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function fresh(): Promise<{ databaseUrl: string; dataDir: string }> {
    const name = `fenceline_start_${randomBytes(4).toString('hex')}`;
    databases.push(name);
    const databaseUrl = await createDatabase(ADMIN_URL, name);
    const dataDir = await mkdtemp(join(tmpdir(), 'fenceline-start-'));
    dirs.push(dataDir);
    return { databaseUrl, dataDir };
  }

  async function running(l: Launch): Promise<void> {
    await eventually('the banner', async () => l.output().includes('fenceline is running') || (await exitWithin(l, 1)) !== 'still running', 120_000);
    expect(l.output()).toContain('fenceline is running');
  }

  it('keeps the terminal readable, refuses a second start at once, keeps edited DAGs on restart, and on Ctrl-C stops the workers before the schedulers and leaves nothing behind', async () => {
    const { databaseUrl, dataDir } = await fresh();
    // A lock left by a start that was killed (its pid is gone) must not block this one.
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(join(dataDir, 'start.lock'), JSON.stringify({ pid: deadPid, startedAt: new Date().toISOString() }));
    const env = { DATABASE_URL: databaseUrl, FENCELINE_DATA_DIR: dataDir, FENCELINE_SCHEDULER_PORT: String(await freePortBase()), FENCELINE_SHARDS: '4' };
    const first = launch(env);
    try {
      await running(first);
      const banner = first.output();
      const secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
      // A first admin, whose password is kept only in the owner-only secrets file and printed.
      expect(secrets.adminPassword).toMatch(/^[\w-]{32}$/);
      expect((await stat(join(dataDir, 'secrets.json'))).mode & 0o777).toBe(0o600);
      expect(banner).toContain(`sign in as admin, password ${secrets.adminPassword}`);
      expect(secrets).not.toHaveProperty('operatorToken');
      // The fleet-wide worker token is the development mode's, and the banner says so.
      expect(banner).toContain(`worker token:   ${secrets.workerToken}`);
      expect(banner).toContain('development mode, FENCELINE_WORKER_AUTH=dev: this one token may act as any worker');
      expect(banner).toContain(join(dataDir, 'logs'));
      expect(banner).toMatch(/examples applied: .*wide-fanout@1/);
      const store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 2 });
      stores.push(store);
      const admin = await store.userCredentials({ name: parseUserName('admin') });
      expect(admin?.role).toBe('admin');
      expect(await verifyPassword(secrets.adminPassword!, admin!.passwordHash)).toBe(true);

      // A second start in the same folder: one line naming the first, exit 1, at once, and
      // nothing changed (the cluster file, the DAGs, the first cluster's processes).
      const clusterFile = await readFile(join(dataDir, 'cluster.json'), 'utf8');
      const dagsBefore = (await store.listDags({ limit: 100 })).rows.map((d) => `${d.id}@${d.version}`);
      const startedAt = Date.now();
      const second = launch(env);
      expect(await exitWithin(second, 20_000)).toBe(1);
      expect(Date.now() - startedAt).toBeLessThan(10_000);
      const refusal = second.output().trim().split('\n');
      expect(refusal).toHaveLength(1);
      expect(refusal[0]).toContain(`already running from ${dataDir} (pid ${first.proc.pid}, console not started)`);
      expect(await readFile(join(dataDir, 'cluster.json'), 'utf8')).toBe(clusterFile);
      expect((await store.listDags({ limit: 100 })).rows.map((d) => `${d.id}@${d.version}`)).toEqual(dagsBefore);
      const file = JSON.parse(clusterFile) as ClusterFile;
      for (const url of file.schedulerUrls) expect((await fetch(`${url}/health`)).ok).toBe(true);

      // An edit made in the console: the restart below must keep it.
      const edited = { ...(await store.getDag(parseDagId('wide-fanout'))).spec, name: 'edited in the console' };
      expect((await store.putDag(edited, 4)).version).toBe(2);

      // Two hundred two-second parts: some are running whenever the Ctrl-C comes.
      await store.triggerRun(parseDagId('wide-fanout'));
      await eventually('parts to be running', async () => (await store.listEvents({ type: 'lease:granted', limit: 20 })).length >= 10, 60_000);
      first.interrupt();
      expect(await exitWithin(first, 90_000), first.output().slice(-4000)).toBe(0);
      await Promise.race([first.ended, new Promise((resolve) => setTimeout(resolve, 30_000))]);

      const out = first.output();
      const lines = out.split('\n');
      const workerStopped = lines.map((l, i) => (/^\[worker-\d\] worker stopped/.test(l) ? i : -1)).filter((i) => i >= 0);
      const schedulerStopping = lines.findIndex((l) => /^\[scheduler-\d\] shutting down/.test(l));
      expect(workerStopped).toHaveLength(4);
      expect(schedulerStopping).toBeGreaterThan(Math.max(...workerStopped));
      expect(out).toContain('fenceline stopped');
      // The terminal holds no JSON log line; every process's full log is in its file.
      expect(lines.filter((l) => /^\[[\w-]+\] \{/.test(l))).toEqual([]);
      const logs = await processLogs(dataDir);
      expect(logs.map((l) => l.name)).toEqual(['scheduler-1', 'scheduler-2', 'worker-1', 'worker-2', 'worker-3', 'worker-4']);
      for (const log of logs) expect(log.lines.some((l) => l.startsWith('{"time"'))).toBe(true);
      const problems = /write refused|"refusedWrites":[1-9]|"lost":[1-9]|fetch failed|ECONNREFUSED/;
      expect(logs.flatMap((l) => l.lines.filter((x) => problems.test(x)))).toEqual([]);
      expect(lines.filter((l) => problems.test(l))).toEqual([]);

      // Every part that was running finished or was handed back: none is left leased, every
      // shard was given up, and no scheduler answers any more.
      const [run] = await store.listRuns({ dagId: parseDagId('wide-fanout'), limit: 1 });
      const jobs = await store.listJobs(run!.id);
      expect(jobs.filter((j) => j.state === 'succeeded').length).toBeGreaterThan(0);
      expect(jobs.filter((j) => j.state === 'leased')).toEqual([]);
      expect((await store.listShards()).every((s) => s.holder === null)).toBe(true);
      for (const url of file.schedulerUrls) await expect(fetch(`${url}/health`)).rejects.toThrow();
      expect(() => process.kill(file.pid, 0)).toThrow();

      // A restart finds DAGs in the store and leaves them as they are.
      const restart = launch(env);
      try {
        await running(restart);
        expect(restart.output()).toContain('examples not applied');
        // The same first admin, not a second one, and the same password from the secrets file.
        expect(restart.output()).toContain(`sign in as admin, password ${secrets.adminPassword}`);
        expect((await store.listUsers()).map((u) => u.name)).toEqual(['admin']);
        expect((await store.getDag(parseDagId('wide-fanout'))).version).toBe(2);
        restart.interrupt();
        expect(await exitWithin(restart, 60_000)).toBe(0);
      } finally {
        restart.kill();
      }
    } finally {
      first.kill();
    }
  });

  it('fails clearly when a port is taken by another program, before it touches the store', async () => {
    const { databaseUrl, dataDir } = await fresh();
    const port = await freePortBase();
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(port + 1, '127.0.0.1', resolve));
    const l = launch({ DATABASE_URL: databaseUrl, FENCELINE_DATA_DIR: dataDir, FENCELINE_SCHEDULER_PORT: String(port) });
    try {
      expect(await exitWithin(l, 30_000)).toBe(1);
      expect(l.output()).toContain(
        `port ${port + 1} (for scheduler-2) is not free (EADDRINUSE): another program is using it; stop it or set FENCELINE_SCHEDULER_PORT to another port`,
      );
      expect(l.output()).not.toContain('fenceline is running');
      await expect(readFile(join(dataDir, 'cluster.json'), 'utf8')).rejects.toThrow(/ENOENT/);
      await expect(readFile(join(dataDir, 'start.lock'), 'utf8')).rejects.toThrow(/ENOENT/);
      const store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 1 });
      stores.push(store);
      expect((await store.listDags({ limit: 1 })).total).toBe(0);
    } finally {
      l.kill();
      squatter.close();
    }
  });
});
