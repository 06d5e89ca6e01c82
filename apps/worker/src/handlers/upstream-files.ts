import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskContext } from '../task';

/** The files a shell job reads its upstream outputs from, and the variables that name them. */
export interface UpstreamFiles {
  env: Record<string, string>;
  /** Removes the files once the command has ended. */
  remove(): Promise<void>;
}

/** A task id as part of a variable name: `.` and `-` (allowed in task ids) become `_`. */
export function upstreamVariable(taskId: string): string {
  return `FENCELINE_UPSTREAM_${taskId.replace(/[.-]/g, '_')}_OUTPUT`;
}

/**
 * Writes the job's upstream outputs as JSON files in a folder of its own:
 * FENCELINE_UPSTREAM_FILE names one file holding every output by task id, and
 * FENCELINE_UPSTREAM_<TASK>_OUTPUT one file per upstream task holding its output. Two task
 * ids that make the same variable name (`a-b` and `a_b`) get no variable of their own, only
 * their entries in the shared file. A job with no dependencies gets nothing.
 */
export async function writeUpstreamFiles(ctx: Pick<TaskContext, 'upstream'>): Promise<UpstreamFiles> {
  const outputs = await ctx.upstream();
  const taskIds = Object.keys(outputs);
  if (taskIds.length === 0) return { env: {}, remove: async () => undefined };
  const dir = await mkdtemp(join(tmpdir(), 'fenceline-upstream-'));
  const env: Record<string, string> = { FENCELINE_UPSTREAM_FILE: join(dir, 'upstream.json') };
  await writeFile(env.FENCELINE_UPSTREAM_FILE!, JSON.stringify(Object.fromEntries(taskIds.map((id) => [id, outputs[id]!.output]))));
  const taken = new Map<string, number>();
  for (const id of taskIds) taken.set(upstreamVariable(id), (taken.get(upstreamVariable(id)) ?? 0) + 1);
  for (const [i, id] of taskIds.entries()) {
    const name = upstreamVariable(id);
    if (taken.get(name) !== 1) continue;
    const path = join(dir, `${i}.json`);
    await writeFile(path, JSON.stringify(outputs[id]!.output ?? null));
    env[name] = path;
  }
  return { env, remove: () => rm(dir, { recursive: true, force: true }) };
}
