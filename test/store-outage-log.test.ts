import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore } from '@fenceline/db';
import { TcpRelay } from '@fenceline/db/testing';
import { Cluster } from '../tools/start/cluster';
import { ADMIN_URL, eventually, FAST_ENV } from './support/cluster-fixture';
import { freePortBase } from './support/launcher';

/**
 * While the store is down a scheduler fails every call it makes, several a second; it
 * must say so once when the outage begins and once when it ends, with how long it
 * lasted, rather than a line per failed call.
 */
describe('cluster: the store goes away under a running scheduler and comes back', () => {
  const name = `fenceline_it_${randomBytes(4).toString('hex')}`;
  const relay = new TcpRelay(new URL(ADMIN_URL));
  let cluster: Cluster;
  beforeAll(async () => {
    const databaseUrl = await createDatabase(ADMIN_URL, name);
    const store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 1 });
    await store.initCluster(Number(FAST_ENV.FENCELINE_SHARDS));
    await store.close();
    const relayed = new URL(await relay.listen());
    relayed.pathname = new URL(databaseUrl).pathname;
    cluster = new Cluster({
      databaseUrl: relayed.href,
      workerToken: randomBytes(18).toString('base64url'),
      basePort: await freePortBase(),
      schedulers: 1,
      workers: 0,
      output: 'quiet',
      env: FAST_ENV,
    });
    await cluster.start();
  });
  afterAll(async () => {
    await cluster?.stop(5000);
    await relay.close();
    await dropDatabase(ADMIN_URL, name).catch(() => undefined);
  });

  it('logs one warning when the outage begins and one line with its length when it ends', async () => {
    const proc = cluster.procs.get('scheduler-1')!;
    const since = proc.logs.length;
    const lines = () => proc.logs.slice(since);
    const cutAt = Date.now();
    relay.cutAll();
    await eventually('the outage warning', async () => lines().some((l) => l.msg === 'the database is unavailable; waiting for it'), 30_000);
    // The store stays away long enough for the node to fail many calls (every tick, renewal and flush).
    await eventually('several seconds of outage', async () => Date.now() - cutAt >= 5_000, 10_000, 250);
    relay.restore();
    const restoredAt = Date.now();
    const ended = await eventually('the line that the outage ended', async () => lines().find((l) => l.msg === 'the database is available again'), 60_000);
    const outageMs = Number(ended.outageMs);
    // From the first failed call to the first answer: within the cut, give or take a second of calls in flight.
    expect(outageMs).toBeGreaterThan(3_000);
    expect(outageMs).toBeLessThan(restoredAt - cutAt + 5_000);
    expect(Number(ended.failedCalls)).toBeGreaterThan(1);
    const warnings = lines().filter((l) => l.level === 'warn' && String(l.msg).startsWith('the database is'));
    expect(warnings.map((l) => l.msg)).toEqual(['the database is unavailable; waiting for it', 'the database is available again']);
    // No failed call of the outage was logged on its own.
    const errors = lines().filter((l) => l.level === 'error');
    expect(errors.map((l) => l.msg)).toEqual([]);
    expect(proc.child.exitCode).toBeNull();
  }, 120_000);
});
