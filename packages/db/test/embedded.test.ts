import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { promisify } from 'node:util';
import { startEmbeddedPostgres } from '../src/index';

const execFileAsync = promisify(execFile);

// These start servers of their own, a few seconds each: they run when the run itself is on
// an embedded server (no other PostgreSQL, or FENCELINE_TEST_EMBEDDED=1), i.e. when it is
// the server the product would use on this machine.
const enabled = inject('databaseSource') === 'embedded';

describe.runIf(enabled)('embedded PostgreSQL server', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fenceline-pg-'));
    await fs.chmod(dir, 0o755);
  });
  afterAll(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  async function query(url: string, text: string): Promise<Record<string, unknown>[]> {
    const client = postgres(url, { max: 1, onnotice: () => {} });
    try {
      return [...(await client.unsafe(text))];
    } finally {
      await client.end({ timeout: 1 });
    }
  }

  it('keeps its data and its port across restarts, and starts again after being killed', async () => {
    const dataDir = path.join(dir, 'pg');
    const first = await startEmbeddedPostgres({ dataDir });
    await query(first.url, 'create table kept (n int); insert into kept values (42)');

    // A second start while it runs attaches instead of starting another server.
    const attached = await startEmbeddedPostgres({ dataDir });
    expect(attached.url).toBe(first.url);
    await attached.stop();
    expect(await query(first.url, 'select n from kept')).toEqual([{ n: 42 }]);

    await first.stop();
    const second = await startEmbeddedPostgres({ dataDir });
    expect(second.url).toBe(first.url);
    expect(await query(second.url, 'select n from kept')).toEqual([{ n: 42 }]);

    // Kill the server the hard way: it leaves its postmaster.pid behind.
    const pid = Number((await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid);
    const third = await startEmbeddedPostgres({ dataDir });
    try {
      expect(third.url).toBe(first.url);
      expect(await query(third.url, 'select n from kept')).toEqual([{ n: 42 }]);
    } finally {
      await third.stop();
      await second.stop();
    }
  });

  it('adds no handler for SIGINT, SIGTERM or SIGHUP to the process that loads or starts it', async () => {
    // A fresh process, since this one loaded the module long ago. A handler left behind
    // would exit the process on the signal and cut its own shutdown short.
    const script = `
      const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
      const count = () => signals.map((s) => process.listenerCount(s));
      const before = count();
      const db = await import('@fenceline/db');
      const loaded = count();
      const server = await db.startEmbeddedPostgres({ dataDir: process.argv[1] });
      const started = count();
      await server.stop();
      console.log(JSON.stringify({ before, loaded, started }));`;
    const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, path.join(dir, 'signals')], { timeout: 60_000 });
    const counts = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number[]>;
    expect(counts.loaded).toEqual(counts.before);
    expect(counts.started).toEqual(counts.before);
  });

  it('exits with its own code and stops a server it left running when the process exits', async () => {
    // The package's own exit hook crashed every such process on its way out. A running
    // server keeps the event loop alive, so a process that forgets to stop it exits by call.
    const dataDir = path.join(dir, 'left-running');
    const script = `
      const db = await import('@fenceline/db');
      await db.startEmbeddedPostgres({ dataDir: process.argv[1] });
      process.exit(3);`;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dataDir], { timeout: 60_000 }, (error, _stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr });
      });
    });
    expect(result.stderr).not.toMatch(/TypeError|done is not a function/);
    expect(result.code).toBe(3);
    // A clean shutdown removes the pid file; read the pid from the port the server kept.
    const pidFile = await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
    if (pidFile !== '') {
      const pid = Number(pidFile.split('\n')[0]);
      await waitForExit(pid);
      expect(await isGone(pid)).toBe(true);
    }
    // The shutdown is PostgreSQL's own, so the next start finds a cleanly stopped cluster.
    const again = await startEmbeddedPostgres({ dataDir });
    await again.stop();
  });
});

/** Whether `pid` is gone or a zombie (a killed child stays one until its parent reaps it). */
async function isGone(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat === '' || /^\d+ \(.*\) Z/.test(stat);
}

/** Waits until `pid` is gone or a zombie. */
async function waitForExit(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await isGone(pid)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
