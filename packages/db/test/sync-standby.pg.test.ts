import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, parseWorkerId, shardOf, StoreUnavailableError } from '@fenceline/core';
import { type NewJob } from '@fenceline/core/store';
import { grantLeases, startRun } from '@fenceline/core/testing';
import { openStore, type SqlStore } from '../src/index';
import { durabilityOf } from '../src/connect';
import { freshDatabase } from './harness';

/**
 * A store that requires a synchronous standby accepts no result from a server that would
 * commit it without one (a pg_auto_failover primary in wait_primary, or any server with
 * synchronous_standby_names empty): the write changes nothing and fails as the store being
 * unavailable, so the worker keeps the result and sends it again. The test server has no
 * standby, which is the case refused; the accepted case is the HA drill's.
 */
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SHARDS = 2;
let database: { url: string; drop(): Promise<void> };
let plain: SqlStore;
let strict: SqlStore;

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
  plain = await openStore({ databaseUrl: database.url, max: 2, applicationName: 'fenceline-test' });
  strict = await openStore({ databaseUrl: database.url, max: 2, applicationName: 'fenceline-test', env: { FENCELINE_DB_SYNC_STANDBY: 'required' } });
  await plain.initCluster(SHARDS);
});
afterAll(async () => {
  await strict?.close();
  await plain?.close();
  await database?.drop();
});

const job = (taskId: string): NewJob => ({ taskId, state: 'ready', maxAttempts: 3, priority: 0, retryBackoffMs: 0, retryBackoffMaxMs: 0, timeoutMs: 60_000 });

async function leasedJobs(dagId: string, count: number) {
  const acquired = (await plain.acquireShard({ shard: shardOf(dagId, SHARDS), nodeId: 'n1', ttlMs: 60_000 }))!;
  const tasks = Array.from({ length: count }, (_, i) => ({ id: `t${i}`, type: 'noop' }));
  await plain.putDag({ id: dagId, tasks }, SHARDS);
  const run = await plain.triggerRun(parseDagId(dagId));
  const jobs = await startRun(
    plain,
    acquired.token,
    run.id,
    tasks.map((t) => job(t.id)),
  );
  return grantLeases(
    plain,
    acquired.token,
    jobs.map((j) => ({ jobId: j.id, workerId: parseWorkerId('w1') })),
    60_000,
  );
}

describe('a store that requires a synchronous standby', () => {
  it('writes no result on a server without one, answers unavailable, and the result lands once a store may take it', async () => {
    const [lease] = await leasedJobs('sync-complete', 1);
    const item = { ref: { jobId: lease!.jobId, fence: lease!.fence, workerId: parseWorkerId('w1'), session: null }, output: { n: 1 }, logs: null, effects: null };
    const err = await strict.completeJobs([item]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toMatch(/without a synchronous standby; nothing was written/);
    const after = await plain.getJob(lease!.jobId);
    expect(after.state).toBe('leased');
    expect(after.fence).toBe(lease!.fence);
    // The same result sent again is accepted by a store that does not require one.
    const [outcome] = await plain.completeJobs([item]);
    expect(outcome!.ok).toBe(true);
    expect((await plain.getJob(lease!.jobId)).state).toBe('succeeded');
  });

  it('records no failure either', async () => {
    const [lease] = await leasedJobs('sync-fail', 1);
    const ref = { jobId: lease!.jobId, fence: lease!.fence, workerId: parseWorkerId('w1'), session: null };
    const err = await strict.failJob(ref, { error: 'boom', retryable: true, logs: null, effects: null }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    const after = await plain.getJob(lease!.jobId);
    expect(after.state).toBe('leased');
    expect(after.lastError).toBeNull();
  });
});

describe('FENCELINE_DB_SYNC_STANDBY', () => {
  it('defaults to required for a URL of several hosts and to off for one host', () => {
    expect(durabilityOf('postgres://u:p@db1:5432,db2:5432/fenceline?target_session_attrs=read-write', {})).toEqual({ requireSyncStandby: true });
    expect(durabilityOf('postgres://u:p@db1:5432/fenceline', {})).toEqual({ requireSyncStandby: false });
    expect(durabilityOf('postgres://db1:5432/fenceline', { FENCELINE_DB_SYNC_STANDBY: 'required' })).toEqual({ requireSyncStandby: true });
    expect(durabilityOf('postgres://db1:5432,db2:5432/fenceline', { FENCELINE_DB_SYNC_STANDBY: 'off' })).toEqual({ requireSyncStandby: false });
  });

  it('refuses a value it does not know, naming the variable', () => {
    expect(() => durabilityOf('postgres://db1/fenceline', { FENCELINE_DB_SYNC_STANDBY: 'yes' })).toThrow(/FENCELINE_DB_SYNC_STANDBY must be "required" or "off", got "yes"/);
  });
});
