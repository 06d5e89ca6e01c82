import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId } from '@fenceline/core';
import { auditStore } from '@fenceline/db/audit';
import { workerRouter } from '@fenceline/scheduler';
import { schedulerClient } from '@fenceline/worker';
import { leakIn, toJsonText } from './support/bad-input';
import { startFixture, type Fixture } from './support/cluster-fixture';
import { hostileInput } from './support/hostile-input';
import { basesProblems } from './support/procedure-bases';
import { WORKER_BASES } from './support/worker-bases';

/**
 * Arbitrary JSON, hostile strings and deep nesting sent to every procedure of the worker
 * router (enumerated from the router, so a procedure added later is covered), each beside
 * an honest worker's completion carrying a canary: every answer is a 4xx or a success,
 * none carries SQL, a stack or the canary, every honest completion lands, and the store's
 * audit finds nothing wrong.
 */
describe('hostile input to every worker procedure, through a real scheduler', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 1, workers: 0 });
  });
  afterAll(async () => f?.stop());

  it('has a valid input for every procedure that takes one, so each of its fields is varied', () => {
    expect(basesProblems(workerRouter._def.procedures, WORKER_BASES)).toEqual([]);
  });

  it('is answered 4xx or success, never 5xx, never with another caller’s data', async () => {
    const url = f.cluster.schedulerUrl(0);
    const token = f.cluster.opts.workerToken;
    const client = schedulerClient(url, token);
    const canary = `canary-${randomBytes(6).toString('hex')}`;
    const honestWorker = `honest-${randomBytes(4).toString('hex')}`;
    const jobsWanted = 40;
    await f.store.putDag({ id: 'property', capFraction: 1, tasks: Array.from({ length: jobsWanted }, (_, i) => ({ id: `t${i}`, type: 'noop' })) }, 4);
    const { session } = await client.register.mutate({ workerId: honestWorker, slots: jobsWanted });
    const first = client.poll.mutate({ workerId: honestWorker, session, slots: jobsWanted, free: jobsWanted, waitMs: 10_000 });
    await f.store.triggerRun(parseDagId('property'));
    const leased = await first;
    while (leased.length < jobsWanted)
      leased.push(...(await client.poll.mutate({ workerId: honestWorker, session, slots: jobsWanted, free: jobsWanted - leased.length, waitMs: 10_000 })));

    const procedures = workerRouter._def.procedures as Record<string, { _def: { type: string } }>;
    const names = Object.keys(procedures);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const send = async (name: string, input: unknown, batched: boolean): Promise<{ status: number; text: string }> => {
      const body = toJsonText(batched ? { 0: input } : input);
      const res =
        procedures[name]!._def.type === 'query'
          ? await fetch(`${url}/trpc/${name}?input=${encodeURIComponent(toJsonText(input))}`, { headers })
          : await fetch(`${url}/trpc/${name}${batched ? '?batch=1' : ''}`, { method: 'POST', headers, body });
      return { status: res.status, text: await res.text() };
    };
    const honestDone: string[] = [];
    // The honest worker renews what it still holds, as a worker does (leases last 3 s here).
    const renewing = setInterval(() => {
      if (leased.length > 0) void client.renew.mutate({ workerId: honestWorker, session, leases: leased.map((j) => ({ jobId: j.jobId, fence: j.fence })) }).catch(() => undefined);
    }, 500);
    const call = fc.constantFrom(...names).chain((name) => fc.record({ name: fc.constant(name), input: hostileInput(WORKER_BASES[name] ?? {}), batched: fc.boolean() }));
    await fc
      .assert(
        fc.asyncProperty(call, async ({ name, input, batched }) => {
          const job = leased.pop();
          const honest = job
            ? client.complete
                .mutate({ workerId: honestWorker, session, jobId: job.jobId, fence: job.fence, output: { canary }, logs: `${canary} log` })
                .then((r) => honestDone.push(r.jobId))
            : Promise.resolve();
          const [answer] = await Promise.all([send(name, input, batched), honest]);
          expect(answer.status, `${name}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
          expect(leakIn(answer.text)).toBeNull();
          expect(answer.text).not.toContain(canary);
          expect(answer.text).not.toContain(honestWorker);
        }),
        { numRuns: 300, seed: Number(process.env.FENCELINE_PROPERTY_SEED ?? Date.now() % 1_000_000) },
      )
      .finally(() => clearInterval(renewing));
    expect(honestDone).toHaveLength(jobsWanted);
    for (const jobId of honestDone.slice(0, 5)) expect(await f.store.getResult(jobId as never)).toMatchObject({ workerId: honestWorker, output: { canary } });
    const audit = await auditStore(f.databaseUrl);
    expect(audit.resultsFromRevokedHolders).toEqual([]);
    expect(audit.doubleAccepted).toEqual([]);
    expect(audit.duplicateRuns).toEqual([]);
  });
});
