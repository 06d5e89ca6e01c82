import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../tools/start/cluster';

const execFileAsync = promisify(execFile);

/** Runs the e2e entry (`npm run test:e2e`) with the given CHROMIUM_PATH; returns its exit code and output. */
async function runE2e(chromiumPath: string): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'e2e', 'run.ts')], {
      cwd: REPO_ROOT,
      env: { ...process.env, CHROMIUM_PATH: chromiumPath },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr, ms: Date.now() - started };
  } catch (error) {
    const e = error as { code?: number; stdout: string; stderr: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout, stderr: e.stderr, ms: Date.now() - started };
  }
}

describe('the e2e entry without Chromium', () => {
  it('stops at once with one line saying how to install it, before building or starting anything', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fenceline-no-chromium-'));
    try {
      // A path that does not exist, and a file that exists but cannot be executed.
      const notExecutable = join(dir, 'chromium');
      await writeFile(notExecutable, 'not a browser');
      await chmod(notExecutable, 0o644);
      for (const path of ['/nonexistent/chromium', notExecutable]) {
        const run = await runE2e(path);
        expect(run.code, path).toBe(1);
        expect(run.stdout, path).toBe('');
        const lines = run.stderr.trimEnd().split('\n');
        expect(lines, path).toHaveLength(1);
        expect(lines[0]).toContain(`CHROMIUM_PATH=${path}`);
        expect(lines[0]).toContain('apt-get install -y chromium');
        // The console build alone takes about a minute: it did not run.
        expect(run.ms).toBeLessThan(20_000);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
