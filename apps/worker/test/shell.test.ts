import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runShell, type ShellPolicy } from '../src/handlers/shell';
import { NonRetryableError, type TaskContext } from '../src/task';

const root = mkdtempSync(join(tmpdir(), 'fenceline-shell-'));
const allowed: ShellPolicy = { allowed: true, allowedEnv: ['GREETING'], cwdRoot: root, killGraceMs: 300 };

function context(signal = new AbortController().signal, params: TaskContext['params'] = {}): TaskContext & { lines: string[] } {
  const lines: string[] = [];
  return { jobId: '7', runId: '1', dagId: 'd', taskId: 't', attempt: 1, fence: 42, params, signal, log: (m) => lines.push(m), checkFence: async () => undefined, lines };
}

describe('worker: shell jobs', () => {
  it('refuses to run on a worker started without shell allowed', async () => {
    await expect(runShell({ command: 'true' }, context(), { ...allowed, allowed: false })).rejects.toBeInstanceOf(NonRetryableError);
  });

  it('refuses environment variables the worker does not allow', async () => {
    await expect(runShell({ command: 'env', env: { LD_PRELOAD: '/tmp/x.so' } }, context(), allowed)).rejects.toThrow(/LD_PRELOAD/);
  });

  it('refuses a working directory outside the allowed folder', async () => {
    await expect(runShell({ command: 'pwd', cwd: '../../etc' }, context(), allowed)).rejects.toThrow(/outside/);
  });

  it('runs the command without a shell, with the fence and only allowed variables in its environment', async () => {
    const ctx = context();
    const out = (await runShell(
      {
        command: process.execPath,
        args: ['-e', 'console.log(process.env.FENCELINE_FENCE, process.env.GREETING, process.env.HOME ?? "no-home", "$HOME")'],
        env: { GREETING: 'hi' },
      },
      ctx,
      allowed,
    )) as { exitCode: number; stdout: string };
    expect(out.exitCode).toBe(0);
    expect(out.stdout.trim()).toBe('42 hi no-home $HOME');
  });

  it('gives the command the run params as FENCELINE_PARAM_<NAME>, under the DAG env', async () => {
    const out = (await runShell(
      { command: process.execPath, args: ['-e', 'console.log(process.env.FENCELINE_PARAM_region, process.env.FENCELINE_PARAM_batch, process.env.FENCELINE_PARAM_dryRun)'] },
      context(undefined, { region: 'eu', batch: 3, dryRun: false }),
      allowed,
    )) as { stdout: string };
    expect(out.stdout.trim()).toBe('eu 3 false');
  });

  it('fails on a non-zero exit', async () => {
    await expect(runShell({ command: process.execPath, args: ['-e', 'process.exit(3)'] }, context(), allowed)).rejects.toThrow(/code 3/);
  });

  it('kills a child that ignores SIGTERM once the lease is lost', async () => {
    const controller = new AbortController();
    const running = runShell({ command: process.execPath, args: ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'] }, context(controller.signal), allowed);
    setTimeout(() => controller.abort(new Error('lease lost')), 300);
    // The child never ends by itself, so this settles only because SIGKILL followed the ignored SIGTERM.
    await expect(running).rejects.toThrow(/lease lost/);
  });
});
