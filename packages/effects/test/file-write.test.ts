import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fencedWriteFile, readFences } from '../src/index';
import { job } from './database';

const root = mkdtempSync(join(tmpdir(), 'fenceline-effects-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `report-${++n}.txt`);
const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'write-child.ts');

/** A holder in a process of its own (fixtures/write-child.ts): resolves with its outcome once it exits. */
function holder(path: string, data: string, fence: number, start: string): Promise<{ outcome: string; fence: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, path, data, String(fence), start], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as { outcome: string; fence: number }) : reject(new Error(`holder ${fence} exited ${code}: ${err}`)))),
  );
}

describe('fencedWriteFile', () => {
  it('writes the first fence, refuses a lower one and, in once mode, does not write a retry again', async () => {
    const path = fresh();
    expect(await fencedWriteFile(path, 'from fence 4', job(4))).toEqual({ outcome: 'applied', key: 'books/17/pay', fence: 4 });
    expect(await fencedWriteFile(path, 'from fence 3', job(3))).toEqual({ outcome: 'stale', key: 'books/17/pay', fence: 3, recordedFence: 4 });
    expect(await fencedWriteFile(path, 'from fence 6', job(6))).toEqual({ outcome: 'already-applied', key: 'books/17/pay', fence: 6, recordedFence: 4 });
    expect(readFileSync(path, 'utf8')).toBe('from fence 4');
    expect(await readFences(path)).toEqual({ 'books/17/pay': { fence: 6, appliedFence: 4 } });
    // No temporary file or lock is left behind.
    expect(readdirSync(root).filter((f) => f.startsWith(`.report-${n}`) || f.endsWith('.lock'))).toEqual([]);
  });

  it('in latest mode replaces the file for each fence not lower than the highest', async () => {
    const path = fresh();
    await fencedWriteFile(path, 'v2', job(2), { mode: 'latest' });
    await fencedWriteFile(path, 'v5', job(5), { mode: 'latest' });
    expect(await fencedWriteFile(path, 'v3', job(3), { mode: 'latest' })).toMatchObject({ outcome: 'stale' });
    expect(readFileSync(path, 'utf8')).toBe('v5');
  });

  it('ends with the highest fence written when many holders race on one path', async () => {
    const path = fresh();
    const fences = [7, 2, 9, 4, 1, 8, 3, 6, 5];
    const results = await Promise.all(fences.map((f) => fencedWriteFile(path, `v${f}`, job(f), { mode: 'latest' })));
    expect(readFileSync(path, 'utf8')).toBe('v9');
    expect(results.find((r) => r.fence === 9)?.outcome).toBe('applied');
    expect((await readFences(path))['books/17/pay']).toEqual({ fence: 9, appliedFence: 9 });
  });

  it('lets exactly one of two racing holders write in once mode', async () => {
    for (let i = 0; i < 5; i++) {
      const path = fresh();
      const results = await Promise.all([fencedWriteFile(path, 'older', job(10)), fencedWriteFile(path, 'newer', job(11))]);
      expect(results.filter((r) => r.outcome === 'applied')).toHaveLength(1);
      const winner = results.find((r) => r.outcome === 'applied')!;
      expect(readFileSync(path, 'utf8')).toBe(winner.fence === 10 ? 'older' : 'newer');
    }
  });

  it('lets exactly one of two holder processes racing on one path write in once mode', async () => {
    for (let i = 0; i < 3; i++) {
      const path = fresh();
      const start = `${path}.start`;
      const racing = Promise.all([holder(path, 'older', 20, start), holder(path, 'newer', 21, start)]);
      // Both processes wait for the start file, so their writes overlap.
      writeFileSync(start, '');
      const results = await racing;
      expect(results.filter((r) => r.outcome === 'applied')).toHaveLength(1);
      const winner = results.find((r) => r.outcome === 'applied')!;
      // The loser was refused (fence 20 after 21) or found it done (fence 21 after 20): never a second write.
      expect(results.find((r) => r !== winner)!.outcome).toBe(winner.fence === 20 ? 'already-applied' : 'stale');
      expect(readFileSync(path, 'utf8')).toBe(winner.fence === 20 ? 'older' : 'newer');
      expect((await readFences(path))['books/17/pay']).toEqual({ fence: 21, appliedFence: winner.fence });
      rmSync(start);
    }
  }, 60_000);

  it('takes over the lock of a process that died, and waits for one that lives', async () => {
    const path = fresh();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    mkdirSync(`${path}.lock`);
    writeFileSync(join(`${path}.lock`, 'owner'), dead.stdout);
    expect(await fencedWriteFile(path, 'after a dead holder', job(1))).toMatchObject({ outcome: 'applied' });
    const live = fresh();
    mkdirSync(`${live}.lock`);
    writeFileSync(join(`${live}.lock`, 'owner'), String(process.pid));
    await expect(fencedWriteFile(live, 'x', job(1), { lockTimeoutMs: 200 })).rejects.toThrow(/still held/);
    rmSync(`${live}.lock`, { recursive: true });
    expect(await fencedWriteFile(live, 'x', job(1))).toMatchObject({ outcome: 'applied' });
  });

  it("times the lock's wait on the clock it is given", async () => {
    // A clock that moves a minute per reading gives up on a live holder's lock at its second
    // reading after the first, long before a 30 s wait would end on the machine's clock.
    const path = fresh();
    mkdirSync(`${path}.lock`);
    writeFileSync(join(`${path}.lock`, 'owner'), String(process.pid));
    let minute = 0;
    const fast = () => ++minute * 60_000;
    await expect(fencedWriteFile(path, 'x', job(1), { nowMs: fast })).rejects.toThrow(/still held after 30000 ms/);
    expect(minute).toBe(2);
    // A clock that stands still waits past a 1 ms timeout for as long as the holder keeps the
    // lock: the holder lets go at the clock's fifth reading, and the write then lands.
    let readings = 0;
    const still = () => {
      if (++readings === 5) rmSync(`${path}.lock`, { recursive: true });
      return 1_000;
    };
    expect(await fencedWriteFile(path, 'after the wait', job(1), { nowMs: still, lockTimeoutMs: 1 })).toMatchObject({ outcome: 'applied' });
    expect(readings).toBe(5);
    expect(readFileSync(path, 'utf8')).toBe('after the wait');
  });

  it('refuses bad input naming the field, and writes nothing', async () => {
    const path = fresh();
    await expect(fencedWriteFile(path, 'x', job(Number.NaN))).rejects.toMatchObject({ name: 'EffectInputError', field: 'ctx.fence' });
    await expect(fencedWriteFile('', 'x', job(1))).rejects.toMatchObject({ field: 'path' });
    await expect(fencedWriteFile(path, 'x', job(1), { nowMs: 5 as unknown as () => number })).rejects.toMatchObject({ name: 'EffectInputError', field: 'nowMs' });
    await expect(fencedWriteFile(path, 'x', job(1), { lockTimeoutMs: -1 })).rejects.toMatchObject({ name: 'EffectInputError', field: 'lockTimeoutMs' });
    expect(readdirSync(root).filter((f) => f.includes(`report-${n}`))).toEqual([]);
  });
});
