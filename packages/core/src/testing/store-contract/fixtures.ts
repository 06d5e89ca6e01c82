import { expect } from 'vitest';
import { shardOf } from '../../dag/shard';
import { parseDagId, type DagId } from '../../ids';
import type { FencelineError } from '../../errors';
import type { DagSpecInput } from '../../spec';
import type { NewJob } from '../../store';

/**
 * The gap between the slot a test creates a run for and the next_run_at it moves to. The
 * store compares and sets next_run_at without checking it is a slot of the schedule, and
 * a run is created only once its slot is due, so tests move by a few milliseconds rather
 * than wait a schedule period.
 */
export const DUE_STEP_MS = 10;
/** Many shards, so each test can own a few without meeting another test's leader. */
export const SHARD_COUNT = 4096;
/** A lease that expires within a test. */
export const SHORT_TTL_MS = 300;
/** How far to advance past a short lease so it has certainly expired. */
export const PAST_TTL_MS = 450;
/**
 * A lease that must survive a few statements first (on a loaded CI machine a statement
 * can stall for a while), yet still expire within the test.
 */
export const MEDIUM_TTL_MS = 1_000;
export const PAST_MEDIUM_TTL_MS = 1_150;
/** A lease (or shard lease) that outlives any test. */
export const LONG_TTL_MS = 60_000;

let counter = 0;
const runTag = Math.random().toString(36).slice(2, 8);

/** A name no other test (or earlier run against the same store) uses. */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${runTag}-${counter}`;
}

let nextShard = Math.floor(Math.random() * SHARD_COUNT);

/** A fresh DAG id that lands in a shard no other test of this run uses. */
export function dagIdInFreshShard(prefix: string): { dagId: DagId; shard: number } {
  nextShard = (nextShard + 1) % SHARD_COUNT;
  const base = unique(prefix);
  for (let k = 0; ; k++) {
    const dagId = parseDagId(`${base}-${k}`);
    if (shardOf(dagId, SHARD_COUNT) === nextShard) return { dagId, shard: nextShard };
  }
}

export function spec(id: string, extra: Partial<DagSpecInput> = {}): DagSpecInput {
  return {
    id,
    tasks: [
      { id: 'a', type: 'noop' },
      { id: 'b', type: 'noop', dependsOn: ['a'] },
    ],
    ...extra,
  };
}

export function newJobs(opts: { maxAttempts?: number; retryBackoffMs?: number; retryBackoffMaxMs?: number } = {}): NewJob[] {
  const common = {
    maxAttempts: opts.maxAttempts ?? 3,
    priority: 0,
    retryBackoffMs: opts.retryBackoffMs ?? 0,
    retryBackoffMaxMs: opts.retryBackoffMaxMs ?? opts.retryBackoffMs ?? 0,
    timeoutMs: 60_000,
  };
  return [
    { taskId: 'a', state: 'ready', ...common },
    { taskId: 'b', state: 'waiting', ...common },
  ];
}

/** Expects `promise` to reject with a typed store error of `code`, and returns it. */
export async function refusedWith(promise: Promise<unknown>, code: string): Promise<FencelineError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e as FencelineError,
  );
  expect(error, `expected a ${code} refusal`).toBeDefined();
  expect(error?.code).toBe(code);
  return error as FencelineError;
}

/** Waits (in real time) for something delivered asynchronously, such as a notice. */
export async function eventually(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
