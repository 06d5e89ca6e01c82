import { describe, expect, it } from 'vitest';
import { memoryStore } from '@fenceline/sim';
import { WorkerAuth } from '../src/api/worker-auth';
import { poolAllows, workerTokenPool } from '@fenceline/core';
import { issueWorkerToken } from '@fenceline/db/worker-credentials';

/** A store that counts credential look-ups and can be made to fail, around the memory store. */
function countingStore(nowMs: () => number) {
  const store = memoryStore({ nowMs });
  let lookups = 0;
  let down = false;
  const find = store.findWorkerCredential.bind(store);
  store.findWorkerCredential = async (input) => {
    lookups++;
    if (down) throw new Error('connection refused (select ... from worker_credentials)');
    return find(input);
  };
  return { store, lookups: () => lookups, setDown: (v: boolean) => (down = v) };
}

async function tick(): Promise<void> {
  await new Promise((r) => setTimeout(r, 0));
}

describe('worker authentication', () => {
  it('looks a credential up once per cache period, and forgets it the moment it is revoked', async () => {
    let now = 1_000_000;
    const s = countingStore(() => now);
    const auth = new WorkerAuth({ mode: 'credentials', devToken: null, store: s.store, nowMs: () => now, cacheTtlMs: 10_000 });
    await auth.start();
    const issued = issueWorkerToken('gpu');
    await s.store.createWorkerCredential({ id: issued.id, pool: 'gpu', secretHash: issued.secretHash });
    for (let i = 0; i < 100; i++) expect(await auth.authenticate(issued.token)).toEqual({ credentialId: issued.id, pool: 'gpu' });
    expect(s.lookups()).toBe(1);
    now += 10_001;
    await auth.authenticate(issued.token);
    expect(s.lookups()).toBe(2);
    await s.store.revokeWorkerCredential({ id: issued.id });
    await tick();
    expect(await auth.authenticate(issued.token)).toBeNull();
    await auth.stop();
  });

  it('accepts the fleet token only in development mode, and never looks up text that is not an issued token', async () => {
    const s = countingStore(() => 0);
    const fleet = 'a-fleet-token-of-enough-length';
    const dev = new WorkerAuth({ mode: 'dev', devToken: fleet, store: s.store, nowMs: () => 0 });
    const strict = new WorkerAuth({ mode: 'credentials', devToken: fleet, store: s.store, nowMs: () => 0 });
    expect(await dev.authenticate(fleet)).toEqual({ credentialId: null, pool: null });
    expect(await strict.authenticate(fleet)).toBeNull();
    expect(await strict.authenticate(undefined)).toBeNull();
    expect(await strict.authenticate("flw.gpu.' or 1=1 --")).toBeNull();
    expect(s.lookups()).toBe(0);
    // Well-formed but never issued: looked up, refused.
    expect(await strict.authenticate(issueWorkerToken('gpu').token)).toBeNull();
    expect(s.lookups()).toBe(1);
  });

  it('reports a store that does not answer as a failure, not as a bad credential', async () => {
    const s = countingStore(() => 0);
    const auth = new WorkerAuth({ mode: 'credentials', devToken: null, store: s.store, nowMs: () => 0 });
    s.setDown(true);
    await expect(auth.authenticate(issueWorkerToken('gpu').token)).rejects.toThrow('connection refused');
  });

  it('binds a pool to the ids "pool" and "pool-..." only', () => {
    expect(poolAllows('gpu', 'gpu')).toBe(true);
    expect(poolAllows('gpu', 'gpu-7')).toBe(true);
    expect(poolAllows('gpu', 'gpux')).toBe(false);
    expect(poolAllows('gpu', 'cpu-gpu-1')).toBe(false);
    expect(workerTokenPool(issueWorkerToken('gpu-east').token)).toBe('gpu-east');
    expect(() => issueWorkerToken('GPU')).toThrow(/^pool: /);
  });

  it('issues a credential for every pool name a worker may serve, up to 63 characters', () => {
    const longest = `g${'p'.repeat(62)}`;
    expect(workerTokenPool(issueWorkerToken(longest).token)).toBe(longest);
    expect(() => issueWorkerToken(`${longest}u`)).toThrow(/^pool: must be lower-case .* at most 63 characters/);
  });
});
