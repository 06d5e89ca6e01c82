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
});

/** Waits until `pid` is gone or a zombie (a killed child stays one until Node reaps it). */
async function waitForExit(pid: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (stat === '' || /^\d+ \(.*\) Z/.test(stat)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
