import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../tools/start/cluster';
import { haUnavailableReason } from '../tools/ha/formation';
import { freePortBlock } from '../tools/ha/ports';

// `npm run ha -- up` needs Debian's postgresql-15-auto-failover; without it the test is skipped and says why.
const unavailable = await haUnavailableReason();
if (unavailable) process.stdout.write(`ha up test skipped: ${unavailable}\n`);

/** Processes whose command line names `dir` (the keepers and postmasters of a formation there). */
function processesUsing(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/**
 * Starts `ha up` in a process group of its own, as a terminal runs a command, waits for a
 * line matching `when`, and sends the group SIGINT, as Ctrl-C does. Returns the data folder
 * it announced and how it exited.
 */
async function interruptUp(port: number, when: RegExp): Promise<{ dir: string; code: number | null; output: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'tools/ha/main.ts'), 'up', '--port', String(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output: string[] = [];
  let dir = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on('line', (line) => output.push(line));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      dir ||= /data folder (\S+);/.exec(line)?.[1] ?? '';
      if (when.test(line)) resolve();
    });
    void exited.then(() => reject(new Error(`ha up exited before "${when.source}": ${output.join(' | ')}`)));
  });
  process.kill(-child.pid!, 'SIGINT');
  const code = await exited;
  return { dir, code, output };
}

describe.skipIf(unavailable !== null)('npm run ha -- up: Ctrl-C leaves nothing behind', () => {
  it('stops every process it started and removes its data folder, once the formation is up', async () => {
    const port = await freePortBlock(27_000, 2_000, 3);
    const { dir, code, output } = await interruptUp(port, /^DATABASE_URL=/);
    expect(dir, output.join('\n')).toMatch(/fenceline-ha-/);
    expect(code, output.join('\n')).toBe(0);
    expect(output).toContain(`stopped; removed ${dir}`);
    expect(existsSync(dir)).toBe(false);
    expect(processesUsing(dir)).toEqual([]);
  }, 300_000);

  it('does the same when interrupted while the formation comes up', async () => {
    const port = await freePortBlock(29_000, 2_000, 3);
    const { dir, output } = await interruptUp(port, /^starting node_1 /);
    expect(dir, output.join('\n')).toMatch(/fenceline-ha-/);
    expect(output.join('\n')).toMatch(/interrupted: stopped what had started and removed its data/);
    expect(existsSync(dir)).toBe(false);
    expect(processesUsing(dir)).toEqual([]);
  }, 300_000);
});
