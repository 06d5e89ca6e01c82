import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../tools/start/cluster';

/**
 * The bank example (docs/effects.md) as a user runs it, `npm run example:bank`: a real
 * cluster moves money under paused and killed workers, and the example checks the books.
 * Its own exit code is the verdict; the test bounds how long it may take.
 */
const LIMIT_MS = 420_000;

function runExample(): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'examples', 'bank', 'run.ts')], {
    cwd: REPO_ROOT,
    env: process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  // A run over the bound is stopped (the example stops its cluster on SIGTERM's exit) and fails.
  const timer = setTimeout(() => child.kill('SIGTERM'), LIMIT_MS);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

describe('the bank example', () => {
  it(
    'ends with the books balanced and no transfer applied twice, under paused and killed workers',
    async () => {
      const { code, output } = await runExample();
      expect(code, output).toBe(0);
      expect(output).toMatch(/the books balance/);
      expect(output).toMatch(/36 transfers, 0 duplicates/);
    },
    LIMIT_MS + 30_000,
  );
});
