import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, parseRunId, shardOf, type DeposedLeaderError } from '@fenceline/core';
import { type LeaderToken } from '@fenceline/core/store';
import { openStore, type SqlStore } from '../src/index';
import { finishRunsAcross } from '../src/store/runs';
import { renewShard } from '../src/store/shards';
import { freshDatabase } from './harness';

/**
 * What the lead check's row lock must do, shown with a leader write held open in a
 * transaction: a takeover waits for it (so it lands before the new epoch, never after),
 * and the leader's own renewal does not (so a busy leader's renewals are never queued
 * behind its writes). These are properties of PostgreSQL's row locks, so they are tested
 * on PostgreSQL itself rather than in the store contract.
 */
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SHARDS = 4;
const TTL_MS = 60_000;
let database: { url: string; drop(): Promise<void> };
let store: SqlStore;

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
  store = await openStore({ databaseUrl: database.url, max: 6, applicationName: 'fenceline-test' });
  await store.initCluster(SHARDS);
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

/** A running run in a shard led by `node`, and the leader's token. */
async function runningRun(dagId: string, node: string): Promise<{ token: LeaderToken; runId: string }> {
  const shard = shardOf(dagId, SHARDS);
  const acquired = await store.acquireShard({ shard, nodeId: node, ttlMs: TTL_MS });
  if (!acquired) throw new Error(`shard ${shard} is led by another node`);
  await store.putDag({ id: dagId, tasks: [{ id: 'only', type: 'noop' }] }, SHARDS);
  const run = await store.triggerRun(parseDagId(dagId));
  // The run starts with no jobs: its one group answers with one empty list of jobs.
  expect(await store.startRunsAcross([{ token: acquired.token, items: [{ runId: run.id, jobs: [] }] }])).toEqual([[[]]]);
  return { token: acquired.token, runId: run.id };
}

/**
 * Runs a leader write (a run finished) in a transaction that stays open until the
 * returned `commit` is called; resolves `written` once the write itself has run.
 */
function heldWrite(token: LeaderToken, runId: string): { written: Promise<(boolean[] | DeposedLeaderError)[]>; commit: () => void; done: Promise<void> } {
  let commit!: () => void;
  const release = new Promise<void>((resolve) => (commit = resolve));
  let wrote!: (flags: (boolean[] | DeposedLeaderError)[]) => void;
  const written = new Promise<(boolean[] | DeposedLeaderError)[]>((resolve) => (wrote = resolve));
  const done = store.db.transaction(async (tx) => {
    wrote(await finishRunsAcross(tx, [{ token, items: [{ runId, state: 'succeeded' }] }]));
    await release;
  });
  return { written, commit, done };
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, ms));
  return settled;
}

describe('lead check locks (PostgreSQL)', () => {
  it("a leader's renewal does not wait for its own write in flight", async () => {
    const { token, runId } = await runningRun('held-during-renewal', 'node-a');
    const held = heldWrite(token, runId);
    expect(await held.written).toEqual([[true]]);
    const renewal = renewShard(store.db, token, TTL_MS);
    expect(await settlesWithin(renewal, 1_000)).toBe(true);
    await renewal;
    held.commit();
    await held.done;
    expect((await store.getRun(parseRunId(runId))).state).toBe('succeeded');
  });

  it('a takeover waits for a write in flight under the old epoch, which lands before it', async () => {
    const { token, runId } = await runningRun('held-during-takeover', 'node-a');
    const held = heldWrite(token, runId);
    expect(await held.written).toEqual([[true]]);
    // The old leader gives the shard up while its write is still open; another node takes
    // it at once. The release does not wait (it changes no epoch); the takeover must.
    await store.releaseShard(token);
    const takeover = store.acquireShard({ shard: token.shard, nodeId: 'node-b', ttlMs: TTL_MS });
    expect(await settlesWithin(takeover, 1_000)).toBe(false);
    held.commit();
    await held.done;
    const taken = await takeover;
    expect(taken?.token.epoch).toBe(token.epoch + 1);
    // The new leader loads the shard after its takeover: the old write is already there.
    expect((await store.getRun(parseRunId(runId))).state).toBe('succeeded');
  });
});
