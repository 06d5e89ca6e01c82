import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, parseJobId, parseWorkerId } from '@fenceline/core';
import { issueWorkerToken } from '@fenceline/db/worker-credentials';
import { schedulerClient, typedRefusal } from '@fenceline/worker';
import { runCli } from './support/cli-process';
import { eventually, startFixture, type Fixture } from './support/cluster-fixture';

/**
 * The worker protocol's trust boundary against real scheduler processes in their default
 * mode (issued credentials only): a batch is judged item by item, so a forged item sent in
 * the same moment as the holder's own changes nothing the holder gets; and a credential
 * serves only its own pool, on every node, for every call.
 */

type Client = ReturnType<typeof schedulerClient>;

/** A credential for `pool`, issued as the CLI does (the CLI's own path is worker-identity.test.ts's). */
async function issue(f: Fixture, pool: string): Promise<string> {
  const issued = issueWorkerToken(pool);
  await f.store.createWorkerCredential({ id: issued.id, pool, secretHash: issued.secretHash });
  return issued.token;
}

/** The typed code a call was refused with, or 'OK'. */
async function outcome(call: Promise<unknown>): Promise<{ code: string; field?: unknown }> {
  try {
    await call;
    return { code: 'OK' };
  } catch (err) {
    const typed = typedRefusal(err);
    if (typed) return { code: typed.code, field: typed.details.field };
    throw err;
  }
}

const PROPERTY_SEED = Number(process.env.FENCELINE_PROPERTY_SEED ?? Date.now() % 1_000_000);

describe('the worker protocol trust boundary against real schedulers', () => {
  let f: Fixture;
  let urls: string[];
  let alpha: string;
  let alphaTwo: string;
  beforeAll(async () => {
    // Leases that outlive a slow moment of a busy machine: these tests hold them by hand.
    f = await startFixture({ schedulers: 2, workers: 0, env: { FENCELINE_WORKER_AUTH: 'credentials', FENCELINE_LEASE_TTL_MS: '120000', FENCELINE_RENEW_INTERVAL_MS: '40000' } });
    urls = [f.cluster.schedulerUrl(0), f.cluster.schedulerUrl(1)];
    alpha = await issue(f, 'alpha');
    alphaTwo = await issue(f, 'alpha');
  });
  afterAll(async () => f?.stop());

  /** Polls every node for `worker` until it holds `count` leases. */
  async function collect(clients: Client[], workerId: string, session: string, count: number, pool?: string) {
    const held: { jobId: string; fence: number; taskId: string }[] = [];
    await eventually(
      `${count} leases for ${workerId}`,
      async () => {
        const answers = await Promise.all(
          clients.map((c) => c.poll.mutate({ workerId, session, slots: count, free: count - held.length, waitMs: 500, ...(pool ? { offer: { pool } } : {}) })),
        );
        for (const jobs of answers) for (const j of jobs) if (!('revoked' in j)) held.push({ jobId: j.jobId, fence: j.fence, taskId: j.taskId });
        return held.length >= count ? held : null;
      },
      60_000,
      0,
    );
    return held;
  }

  it("keeps the holder's completions and live log whatever forged items share their batch", async () => {
    const JOBS = 6;
    const nodes = urls.map((u) => schedulerClient(u, alpha));
    const { session } = await nodes[0]!.register.mutate({ workerId: 'alpha-1', slots: JOBS });
    await nodes[1]!.register.mutate({ workerId: 'alpha-1', slots: JOBS, session });
    // Another worker process of the same pool, with a credential of its own: it knows the
    // holder's id and every fence, but not the holder's session.
    const intruder = schedulerClient(urls[0]!, alphaTwo);
    const { session: forged } = await intruder.register.mutate({ workerId: 'alpha-2', slots: 1, offer: { pool: 'alpha' } });
    const dag = 'trust-batch-race';
    // The whole pool for this DAG, so all of its jobs are leased at once to the one holder.
    await f.store.putDag({ id: dag, capFraction: 1, tasks: Array.from({ length: JOBS }, (_, k) => ({ id: `t${k}`, type: 'noop', pool: 'alpha' })) }, 4);
    await f.store.triggerRun(parseDagId(dag));
    const leases = await collect(nodes, 'alpha-1', session, JOBS);
    // The node that serves both: every forged item leaves first, in the same moment as the holder's.
    const holder = schedulerClient(urls[0]!, alpha);

    const renewals = await Promise.all(
      leases.flatMap((l) => [
        intruder.renew.mutate({ workerId: 'alpha-1', session: forged, leases: [{ jobId: l.jobId, fence: l.fence, log: `forged ${l.taskId}\n` }] }),
        holder.renew.mutate({ workerId: 'alpha-1', session, leases: [{ jobId: l.jobId, fence: l.fence, log: `honest ${l.taskId}\n` }] }),
      ]),
    );
    renewals.forEach((answer, i) => expect(answer[0], `renewal ${i}`).toMatchObject(i % 2 === 0 ? { ok: false, code: 'LEASE_LOST' } : { ok: true }));
    for (const l of leases) {
      const lines = (await f.store.listLogChunks({ jobId: parseJobId(l.jobId), fence: l.fence })).map((c) => c.text);
      expect(lines, `the live log of ${l.taskId}`).toEqual([`honest ${l.taskId}\n`]);
    }

    const completions = await Promise.all(
      leases.flatMap((l) => [
        intruder.completeMany.mutate({ workerId: 'alpha-1', session: forged, results: [{ jobId: l.jobId, fence: l.fence, output: { by: 'intruder' } }] }),
        holder.completeMany.mutate({ workerId: 'alpha-1', session, results: [{ jobId: l.jobId, fence: l.fence, output: { by: 'holder' } }] }),
      ]),
    );
    completions.forEach((answer, i) => {
      if (i % 2 === 0) expect(answer[0], `forged completion ${i}`).toMatchObject({ ok: false, error: { code: 'LEASE_LOST' } });
      else expect(answer[0], `the holder's completion ${i}`).toMatchObject({ ok: true, state: 'succeeded' });
    });
    for (const l of leases) expect(await f.store.getResult(parseJobId(l.jobId))).toMatchObject({ workerId: 'alpha-1', fence: l.fence, output: { by: 'holder' } });
  });

  it('issues no credential whose pool would share worker ids with another pool', async () => {
    // "alpha-x-1" would be a worker id of both "alpha" and "alpha-x".
    const out = await runCli(f.databaseUrl, 'worker-token', 'create', '--pool', 'alpha-x');
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^INVALID_INPUT: pool: "alpha-x" would share worker ids with pool "alpha"/m);
  });

  it('lets a credential offer, register, poll and write only for its own pool, on every node', async () => {
    // Generated calls: each protocol call, on either node, for a worker id or an offered
    // pool outside the credential's pool (a prefix of it, an extension, another pool).
    const otherPools = ['beta', 'default', 'alph', 'alphabet', 'alpha0'];
    const call = fc.constantFrom('register', 'poll', 'renew', 'renewMany', 'complete', 'completeMany', 'fail', 'failMany', 'release', 'releaseMany', 'upstream');
    const foreignId = fc.tuple(fc.constantFrom(...otherPools), fc.option(fc.constantFrom('-1', '-alpha', '-x-9'), { nil: '' })).map(([p, s]) => `${p}${s}`);
    const cases = fc.record({
      node: fc.integer({ min: 0, max: 1 }),
      call,
      // Another pool's worker id; one of alpha's ids offering another pool; or, to show the
      // check refuses no more than it should, one of alpha's ids offering alpha.
      who: fc.oneof(
        foreignId.map((workerId) => ({ kind: 'foreign-id' as const, workerId, pool: 'alpha' })),
        fc.constantFrom(...otherPools).map((pool) => ({ kind: 'foreign-pool' as const, workerId: 'alpha-offers-other', pool })),
        fc.constant({ kind: 'own' as const, workerId: 'alpha-gen', pool: 'alpha' }),
      ),
      labels: fc.array(fc.constantFrom('gpu', 'region=eu'), { maxLength: 2 }),
    });
    const session = 'x'.repeat(43);
    await fc.assert(
      fc.asyncProperty(cases, async ({ node, call: name, who, labels }) => {
        const c = schedulerClient(urls[node]!, alpha);
        const { workerId } = who;
        const ref = { workerId, session, jobId: '1', fence: 1 };
        const offer = { pool: who.pool, labels };
        const calls: Record<string, () => Promise<unknown>> = {
          register: () => c.register.mutate({ workerId, slots: 1, offer }),
          poll: () => c.poll.mutate({ workerId, session, slots: 1, free: 1, waitMs: 0, offer }),
          renew: () => c.renew.mutate({ workerId, session, leases: [{ jobId: '1', fence: 1 }] }),
          renewMany: () => c.renewMany.mutate({ renewals: [ref] }),
          complete: () => c.complete.mutate(ref),
          completeMany: () => c.completeMany.mutate({ workerId, session, results: [{ jobId: '1', fence: 1 }] }),
          fail: () => c.fail.mutate({ ...ref, error: 'x' }),
          failMany: () => c.failMany.mutate({ workerId, session, failures: [{ jobId: '1', fence: 1, error: 'x' }] }),
          release: () => c.release.mutate(ref),
          releaseMany: () => c.releaseMany.mutate({ workerId, session, releases: [{ jobId: '1', fence: 1 }] }),
          upstream: () => c.upstream.mutate({ ...ref, taskIds: [] }),
        };
        const answer = await outcome(calls[name]!());
        if (who.kind === 'foreign-id') {
          expect(answer.code, `${name} as ${workerId}`).toBe('FORBIDDEN');
          expect(String(answer.field)).toMatch(/workerId$/);
        } else if (who.kind === 'foreign-pool' && (name === 'register' || name === 'poll')) {
          expect(answer, `${name} offering ${who.pool}`).toEqual({ code: 'FORBIDDEN', field: 'offer.pool' });
        } else expect(answer.code, `${name} as ${workerId} offering ${who.pool}`).not.toBe('FORBIDDEN');
      }),
      { numRuns: 60, seed: PROPERTY_SEED },
    );
    // Nothing was registered for a foreign id, nor for an id of alpha that offered another pool.
    for (const id of ['beta', 'beta-1', 'default-1', 'alphabet-1', 'alpha-offers-other']) expect(await f.store.workerSession(parseWorkerId(id))).toBeNull();
  });

  it("is leased only its own pool's jobs, having said nothing of its pool", async () => {
    await f.store.putDag({ id: 'trust-pool-beta', tasks: [{ id: 'b', type: 'noop', pool: 'beta' }] }, 4);
    await f.store.putDag({ id: 'trust-pool-default', tasks: [{ id: 'd', type: 'noop' }] }, 4);
    await f.store.putDag({ id: 'trust-pool-alpha', tasks: [{ id: 'a', type: 'noop', pool: 'alpha' }] }, 4);
    const beta = await f.store.triggerRun(parseDagId('trust-pool-beta'));
    const plain = await f.store.triggerRun(parseDagId('trust-pool-default'));
    const nodes = urls.map((u) => schedulerClient(u, alpha));
    const { session } = await nodes[0]!.register.mutate({ workerId: 'alpha-3', slots: 3 });
    await nodes[1]!.register.mutate({ workerId: 'alpha-3', slots: 3, session });
    await f.store.triggerRun(parseDagId('trust-pool-alpha'));
    const leases = await collect(nodes, 'alpha-3', session, 1);
    expect(leases.map((l) => l.taskId)).toEqual(['a']);
    const ready = async () => (await Promise.all([beta, plain].map(async (run) => (await f.store.listJobs(run.id)).map((j) => j.state)))).flat();
    await eventually('the other pools’ jobs to be ready', async () => (await ready()).join() === 'ready,ready', 30_000);
    // A labelled offer that leaves the pool out is still alpha's; the other pools' jobs stay ready.
    const more = await Promise.all(nodes.map((c) => c.poll.mutate({ workerId: 'alpha-3', session, slots: 3, free: 2, waitMs: 1_000, offer: { labels: ['gpu'] } })));
    expect(more.flat()).toEqual([]);
    expect(await ready()).toEqual(['ready', 'ready']);
  });
});
