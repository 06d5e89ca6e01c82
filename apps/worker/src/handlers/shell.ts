import { spawn } from 'node:child_process';
import { resolve, relative, isAbsolute } from 'node:path';
import { shellConfigSchema } from '@fenceline/core';
import { NonRetryableError, type TaskContext } from '../task';
import { clipForOutput } from './output-size';
import { writeUpstreamFiles } from './upstream-files';

export interface ShellPolicy {
  allowed: boolean;
  /** Environment variable names a DAG may set; anything else is refused. */
  allowedEnv: string[];
  /** Commands run in this folder or below it; a DAG may not name a cwd outside it. */
  cwdRoot: string;
  /** Grace between SIGTERM and SIGKILL when a job is aborted. */
  killGraceMs: number;
}

const MAX_CAPTURE_CHARS = 64 * 1024;

/**
 * The run's parameters as FENCELINE_PARAM_<NAME> variables (the name as declared, a value
 * as its text: `true`, `42`). Declared names are letters, digits and `_`, so each is a
 * valid variable name. A DAG's own `env` is applied after them and wins.
 */
export function paramEnv(ctx: Pick<TaskContext, 'params'>): Record<string, string> {
  return Object.fromEntries(Object.entries(ctx.params).map(([name, value]) => [`FENCELINE_PARAM_${name}`, String(value)]));
}

/**
 * Runs a command without a shell (no interpolation), with a minimal environment. Off
 * unless the worker was started with shell allowed. On abort the child gets SIGTERM, then
 * SIGKILL after the grace, so a job whose lease was lost stops doing work.
 */
export async function runShell(config: Record<string, unknown>, ctx: TaskContext, policy: ShellPolicy): Promise<unknown> {
  if (!policy.allowed) throw new NonRetryableError('shell jobs are disabled on this worker (start it with FENCELINE_ALLOW_SHELL=1)');
  const parsed = shellConfigSchema.safeParse(config);
  if (!parsed.success) throw new NonRetryableError(`shell config is invalid: ${parsed.error.message}`);
  const { command, args, env, cwd } = parsed.data;
  const refused = Object.keys(env).filter((k) => !policy.allowedEnv.includes(k));
  if (refused.length > 0)
    throw new NonRetryableError(`environment variables not allowed on this worker: ${refused.join(', ')} (allowed: ${policy.allowedEnv.join(', ') || 'none'})`);
  const root = resolve(policy.cwdRoot);
  const dir = resolve(root, cwd ?? '.');
  const rel = relative(root, dir);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new NonRetryableError(`cwd "${cwd}" is outside the worker's allowed folder ${root}`);

  const upstream = await writeUpstreamFiles(ctx);
  try {
    return await spawnCommand({ command, args, dir, env: { ...paramEnv(ctx), ...upstream.env, ...env } }, ctx, policy);
  } finally {
    await upstream.remove();
  }
}

function spawnCommand(run: { command: string; args: string[]; dir: string; env: Record<string, string> }, ctx: TaskContext, policy: ShellPolicy): Promise<unknown> {
  const { command, args, dir, env } = run;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FENCELINE_FENCE: String(ctx.fence), FENCELINE_EFFECT_KEY: ctx.effectKey, FENCELINE_JOB_ID: ctx.jobId, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    // Each whole line of output is logged as it arrives, so it is streamed while the command
    // runs; stderr's lines say where they came from.
    const stdoutLines = new LineSplitter((line) => ctx.log(line));
    const stderrLines = new LineSplitter((line) => ctx.log(`stderr: ${line}`));
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString();
      stdout = (stdout + text).slice(-MAX_CAPTURE_CHARS);
      stdoutLines.push(text);
    });
    child.stderr.on('data', (d: Buffer) => stderrLines.push(d.toString()));
    let killTimer: NodeJS.Timeout | null = null;
    const onAbort = (): void => {
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), policy.killGraceMs);
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => reject(new NonRetryableError(`could not start "${command}": ${err.message}`)));
    child.on('close', (code, signal) => {
      ctx.signal.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      stdoutLines.end();
      stderrLines.end();
      if (ctx.signal.aborted) return reject(ctx.signal.reason);
      if (code === 0) resolvePromise({ exitCode: 0, stdout: clipForOutput(stdout) });
      else reject(new Error(`"${command}" exited with ${signal ? `signal ${signal}` : `code ${code}`}`));
    });
  });
}

/** Splits a stream of text into lines, handing each whole one on; `end` hands on the last, unterminated one. */
class LineSplitter {
  private rest = '';
  constructor(private readonly line: (text: string) => void) {}

  push(text: string): void {
    const parts = (this.rest + text).split('\n');
    this.rest = parts.pop() ?? '';
    // A line longer than the capture limit is cut into pieces rather than held whole.
    while (this.rest.length > MAX_CAPTURE_CHARS) {
      parts.push(this.rest.slice(0, MAX_CAPTURE_CHARS));
      this.rest = this.rest.slice(MAX_CAPTURE_CHARS);
    }
    for (const part of parts) this.line(part.replace(/\r$/, ''));
  }

  end(): void {
    if (this.rest) this.line(this.rest);
    this.rest = '';
  }
}
