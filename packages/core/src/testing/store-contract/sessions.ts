import { describe, expect, it } from 'vitest';
import { parseWorkerId } from '../../ids';
import type { ContractContext } from './context';
import { LONG_TTL_MS, refusedWith, unique } from './fixtures';
import { completeJob } from './one-leader';

/**
 * The store contract's part on sessions: a lease is granted to its worker's current
 * session, and every write for it must present that session while it is still current.
 */
export function sessionsContract(c: ContractContext): void {
  describe('session-bound worker writes', () => {
    async function registered(prefix: string) {
      const id = parseWorkerId(unique(prefix));
      const session = `session-${unique('s')}`;
      await c.store.registerWorker({ id, slots: 1, nodeId: null, session, credentialId: null });
      return { id, session };
    }

    it('records the session a worker registered with as its current one', async () => {
      const w = await registered('sess-w');
      expect(await c.store.workerSession(w.id)).toBe(w.session);
      expect(await c.store.workerSession(parseWorkerId(unique('never')))).toBeNull();
      await c.store.registerWorker({ id: w.id, slots: 1, nodeId: null, session: 'another-session', credentialId: null });
      expect(await c.store.workerSession(w.id)).toBe('another-session');
    });

    it('accepts the writes of the session the lease was granted to', async () => {
      const { token, ready } = await c.startedRun();
      const w = await registered('sess-ok');
      const lease = await c.grantOne(token, ready.id, w.id);
      const ref = { jobId: ready.id, fence: lease.fence, workerId: w.id, session: w.session };
      expect((await c.store.renewLeases([ref], LONG_TTL_MS))[0]).toMatchObject({ ok: true });
      expect(await completeJob(c.store, ref, { output: { by: 'holder' } })).toMatchObject({ state: 'succeeded' });
      expect(await c.store.getResult(ready.id)).toMatchObject({ workerId: w.id, output: { by: 'holder' } });
    });

    it("refuses the holder's id and fence under another session, as LEASE_LOST with cause old-session, and writes nothing", async () => {
      const { token, ready } = await c.startedRun();
      const w = await registered('sess-holder');
      const other = await registered('sess-other');
      const lease = await c.grantOne(token, ready.id, w.id);
      const forged = { jobId: ready.id, fence: lease.fence, workerId: w.id, session: other.session };
      const [renewal] = await c.store.renewLeases([forged], LONG_TTL_MS);
      expect(renewal).toMatchObject({ ok: false, code: 'LEASE_LOST', cause: 'old-session' });
      const complete = await refusedWith(completeJob(c.store, forged, { output: { by: 'impostor' } }), 'LEASE_LOST');
      expect(complete.details.cause).toBe('old-session');
      await refusedWith(c.store.failJob(forged, { error: 'sabotage', retryable: false }), 'LEASE_LOST');
      await refusedWith(c.store.releaseJob(forged), 'LEASE_LOST');
      expect(await c.store.getResult(ready.id)).toBeNull();
      expect(await c.store.getJob(ready.id)).toMatchObject({ state: 'leased', holder: w.id, fence: lease.fence });
      // The holder's own session still writes.
      expect(await completeJob(c.store, { ...forged, session: w.session }, { output: 1 })).toMatchObject({ state: 'succeeded' });
    });

    it('refuses a foreign holder as LEASE_LOST with cause foreign-holder', async () => {
      const { token, ready } = await c.startedRun();
      const w = await registered('sess-mine');
      const other = await registered('sess-theirs');
      const lease = await c.grantOne(token, ready.id, w.id);
      const err = await refusedWith(completeJob(c.store, { jobId: ready.id, fence: lease.fence, workerId: other.id, session: other.session }, { output: 1 }), 'LEASE_LOST');
      expect(err.details.cause).toBe('foreign-holder');
    });

    it("refuses the old session's writes once the worker registers a new one, even for leases granted before", async () => {
      const { token, ready } = await c.startedRun();
      const w = await registered('sess-restart');
      const lease = await c.grantOne(token, ready.id, w.id);
      await c.store.registerWorker({ id: w.id, slots: 1, nodeId: null, session: `${w.session}-restarted`, credentialId: null });
      const old = { jobId: ready.id, fence: lease.fence, workerId: w.id, session: w.session };
      expect((await c.store.renewLeases([old], LONG_TTL_MS))[0]).toMatchObject({ ok: false, code: 'LEASE_LOST', cause: 'old-session' });
      await refusedWith(completeJob(c.store, old, { output: 1 }), 'LEASE_LOST');
      // The new session was not the one the lease was granted to: it cannot write it either.
      await refusedWith(completeJob(c.store, { ...old, session: `${w.session}-restarted` }, { output: 1 }), 'LEASE_LOST');
      expect(await c.store.getResult(ready.id)).toBeNull();
    });

    it("lets the node hand back a lease it granted without a session, and no one else's session", async () => {
      const { token, ready } = await c.startedRun();
      const w = await registered('sess-node');
      const lease = await c.grantOne(token, ready.id, w.id);
      expect(await c.store.releaseJob({ jobId: ready.id, fence: lease.fence, workerId: w.id, session: null })).toMatchObject({ state: 'ready', holder: null });
    });
  });
}
