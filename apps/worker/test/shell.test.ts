import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '@fenceline/core';
import { runShell, type ShellPolicy } from '../src/handlers/shell';
import { NonRetryableError, type TaskContext, type UpstreamOutputs } from '../src/task';

const root = mkdtempSync(join(tmpdir(), 'fenceline-shell-'));
const allowed: ShellPolicy = { allowed: true, allowedEnv: ['GREETING'], cwdRoot: root, killGraceMs: 300 };

function context(signal = new AbortController().signal, params: TaskContext['params'] = {}, outputs: UpstreamOutputs = {}): TaskContext & { lines: string[] } {
  const lines: string[] = [];
  return {
    jobId: '7',
    runId: '1',
    dagId: 'd',
    taskId: 't',
    attempt: 1,
    fence: 42,
    effectKey: 'd/1/t',
    params,
    upstream: async () => outputs,
    signal,
    log: (m) => lines.push(m),
    checkFence: async () => undefined,
    reportEffect: () => undefined,
    lines,
  };
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

  it('runs the command without a shell, with the fence, the effect key and only allowed variables in its environment', async () => {
    const ctx = context();
    const out = (await runShell(
      {
        command: process.execPath,
        args: ['-e', 'console.log(process.env.FENCELINE_FENCE, process.env.FENCELINE_EFFECT_KEY, process.env.GREETING, process.env.HOME ?? "no-home", "$HOME")'],
        env: { GREETING: 'hi' },
      },
      ctx,
      allowed,
    )) as { exitCode: number; stdout: string };
    expect(out.exitCode).toBe(0);
    expect(out.stdout.trim()).toBe('42 d/1/t hi no-home $HOME');
  });

  it('gives the command the run params as FENCELINE_PARAM_<NAME>, under the DAG env', async () => {
    const out = (await runShell(
      { command: process.execPath, args: ['-e', 'console.log(process.env.FENCELINE_PARAM_region, process.env.FENCELINE_PARAM_batch, process.env.FENCELINE_PARAM_dryRun)'] },
      context(undefined, { region: 'eu', batch: 3, dryRun: false }),
      allowed,
    )) as { stdout: string };
    expect(out.stdout.trim()).toBe('eu 3 false');
  });

  it('hands the command its upstream outputs as JSON files, and removes them after', async () => {
    const script = [
      'const fs = require("fs");',
      'const all = JSON.parse(fs.readFileSync(process.env.FENCELINE_UPSTREAM_FILE, "utf8"));',
      'const one = JSON.parse(fs.readFileSync(process.env.FENCELINE_UPSTREAM_load_csv_OUTPUT, "utf8"));',
      'console.log(JSON.stringify({ all, one, clash: [process.env.FENCELINE_UPSTREAM_a_b_OUTPUT ?? null], file: process.env.FENCELINE_UPSTREAM_FILE }));',
    ].join(' ');
    const upstream = { 'load.csv': { output: { rows: 3 } }, 'a-b': { output: 1 }, a_b: { output: 2 } };
    const out = (await runShell({ command: process.execPath, args: ['-e', script] }, context(undefined, {}, upstream), allowed)) as { stdout: string };
    const seen = JSON.parse(out.stdout) as { all: unknown; one: unknown; clash: unknown[]; file: string };
    expect(seen.all).toEqual({ 'load.csv': { rows: 3 }, 'a-b': 1, a_b: 2 });
    expect(seen.one).toEqual({ rows: 3 });
    // Two task ids that make one variable name get none: the shared file tells them apart.
    expect(seen.clash).toEqual([null]);
    expect(existsSync(seen.file)).toBe(false);
  });

  it('keeps a long stdout to what an output may hold', async () => {
    const out = (await runShell({ command: process.execPath, args: ['-e', 'process.stdout.write("x".repeat(200000) + "end")'] }, context(), allowed)) as { stdout: string };
    expect(out.stdout.endsWith('end')).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(LIMITS.maxOutputBytes);
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
