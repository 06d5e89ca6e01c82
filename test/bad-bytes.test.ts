import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId } from '@fenceline/core';
import { auditStore } from '@fenceline/db/audit';
import { workerRouter } from '@fenceline/scheduler';
import { schedulerClient } from '@fenceline/worker';
import { BAD_VALUES, DEEP, leafPaths, leakIn, replaceAt, toJsonText } from './support/bad-input';
import { eventually, startFixture, type Fixture } from './support/cluster-fixture';
import { basesProblems } from './support/procedure-bases';
import { WORKER_BASES as BASES } from './support/worker-bases';

interface Answer {
  status: number;
  text: string;
}

describe('bad bytes at the worker protocol, through a real scheduler', () => {
  let f: Fixture;
  let url: string;
  let token: string;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 1, workers: 0 });
    url = f.cluster.schedulerUrl(0);
    token = f.cluster.opts.workerToken;
  });
  afterAll(async () => f?.stop());

  /** One call over HTTP: a mutation on the hot path, the same mutation batched (the adapter's path), or a query. */
  async function call(name: string, input: unknown, via: 'single' | 'batched'): Promise<Answer> {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const type = (workerRouter._def.procedures as Record<string, { _def: { type: string } }>)[name]!._def.type;
    const res =
      type === 'query'
        ? await fetch(`${url}/trpc/${name}?input=${encodeURIComponent(toJsonText(input))}`, { headers })
        : via === 'single'
          ? await fetch(`${url}/trpc/${name}`, { method: 'POST', headers, body: toJsonText(input) })
          : await fetch(`${url}/trpc/${name}?batch=1`, { method: 'POST', headers, body: toJsonText({ 0: input }) });
    return { status: res.status, text: await res.text() };
  }

  it('has a valid input for every procedure that takes one, so each of its fields is swept', () => {
    expect(basesProblems(workerRouter._def.procedures, BASES)).toEqual([]);
  });

  it('answers a NUL, a lone surrogate or 5,000-deep nesting in any field of any procedure with a 4xx naming the field', async () => {
    const names = Object.keys(workerRouter._def.procedures);
    expect(names.length).toBeGreaterThanOrEqual(9);
    const faults: string[] = [];
    let refusedNamingField = 0;
    for (const name of names) {
      const base = BASES[name] ?? {};
      const variants: { path: (string | number)[]; input: unknown }[] = [];
      for (const bad of BAD_VALUES) {
        variants.push({ path: [], input: bad });
        for (const path of leafPaths(base)) if (path.length > 0) variants.push({ path, input: replaceAt(base, path, bad) });
      }
      for (const { path, input } of variants) {
        for (const via of ['single', 'batched'] as const) {
          const answer = await call(name, input, via);
          const what = `${name} ${via} ${path.join('.') || '(root)'}: ${answer.status}`;
          if (answer.status >= 500) faults.push(`${what} ${answer.text.slice(0, 300)}`);
          const leak = leakIn(answer.text);
          if (leak) faults.push(`${what} leaks ${leak}`);
          if (answer.status === 400 && path.length > 0) {
            if (answer.text.includes(JSON.stringify(String(path[0]))) || answer.text.includes(`${String(path[0])}`)) refusedNamingField++;
            else faults.push(`${what} does not name ${String(path[0])}: ${answer.text.slice(0, 300)}`);
          }
        }
      }
    }
    expect(faults).toEqual([]);
    expect(refusedNamingField).toBeGreaterThan(50);
    // Nothing that was refused reached the store.
    expect(await f.store.getResult('987654321' as never)).toBeNull();
  });

  it('answers a body nested 400,000 levels deep with a 4xx on both transport paths', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const deep = '['.repeat(400_000) + ']'.repeat(400_000);
    const output = `{"workerId":"sweeper","jobId":"987654321","fence":1,"output":${deep}}`;
    for (const [path, body] of [
      ['complete', deep],
      ['complete', output],
      ['complete?batch=1', `{"0":${output}}`],
      ['register?batch=1', `{"0":{"workerId":"sweeper","slots":1,"meta":{"m":${deep}}}}`],
    ] as const) {
      const res = await fetch(`${url}/trpc/${path}`, { method: 'POST', headers, body });
      const text = await res.text();
      expect(res.status, `${path}: ${text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${path}: ${text.slice(0, 300)}`).toBeLessThan(500);
      expect(leakIn(text)).toBeNull();
    }
  });

  it('fails only the bad completions sent around an honest one, and tells each caller only of its own', async () => {
    const client = schedulerClient(url, token);
    const canary = `canary-${randomBytes(6).toString('hex')}`;
    const honestWorker = `honest-${randomBytes(4).toString('hex')}`;
    const rounds = 4;
    await f.store.putDag({ id: 'isolation', capFraction: 1, tasks: Array.from({ length: rounds }, (_, i) => ({ id: `t${i}`, type: 'noop' })) }, 4);
    const { session } = await client.register.mutate({ workerId: honestWorker, slots: rounds });
    const polled = client.poll.mutate({ workerId: honestWorker, session, slots: rounds, free: rounds, waitMs: 10_000 });
    await f.store.triggerRun(parseDagId('isolation'));
    let jobs = await polled;
    while (jobs.length < rounds) jobs = [...jobs, ...(await client.poll.mutate({ workerId: honestWorker, session, slots: rounds, free: rounds - jobs.length, waitMs: 10_000 }))];

    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown): Promise<Answer> => {
      const res = await fetch(`${url}/trpc/${path}`, { method: 'POST', headers, body: toJsonText(body) });
      return { status: res.status, text: await res.text() };
    };
    // The bad callers' sessions are well formed but their own; the bad bytes are refused first.
    const badSession = `bad-session-${randomBytes(16).toString('hex')}`;
    const badBodies = (i: number): { path: string; body: unknown }[] => {
      const kinds: unknown[] = [{ logs: `nul\u0000${i}` }, { output: { text: `nul\u0000${i}` } }, { output: `lone\ud800${i}` }, { output: DEEP }];
      return kinds.flatMap((extra, k) => [
        { path: 'complete', body: { workerId: `bad-${i}-${k}`, session: badSession, jobId: String(900_000_000 + i * 10 + k), fence: 1, ...(extra as object) } },
        { path: 'completeMany', body: { workerId: `bad-${i}-${k}`, session: badSession, results: [{ jobId: String(800_000_000 + i * 10 + k), fence: 1, ...(extra as object) }] } },
      ]);
    };
    for (const job of jobs) {
      const bad = badBodies(Number(job.jobId));
      const before = bad.slice(0, 4).map((b) => post(b.path, b.body));
      const honest = post('complete', { workerId: honestWorker, session, jobId: job.jobId, fence: job.fence, output: { canary }, logs: `${canary} log` });
      const after = bad.slice(4).map((b) => post(b.path, b.body));
      const [honestAnswer, ...badAnswers] = await Promise.all([honest, ...before, ...after]);
      expect(honestAnswer!.status, honestAnswer!.text).toBe(200);
      expect(JSON.parse(honestAnswer!.text)).toMatchObject({ result: { data: { jobId: job.jobId, state: 'succeeded', fence: job.fence } } });
      for (const answer of badAnswers) {
        expect(answer.status, answer.text).toBeLessThan(500);
        expect(answer.text).not.toContain(canary);
        expect(answer.text).not.toContain(honestWorker);
        expect(leakIn(answer.text)).toBeNull();
      }
      expect(await f.store.getResult(job.jobId)).toMatchObject({ workerId: honestWorker, output: { canary } });
    }
    const audit = await auditStore(f.databaseUrl);
    expect(audit.resultsFromRevokedHolders).toEqual([]);
    expect(audit.doubleAccepted).toEqual([]);
  });

  it('records in the event log a failure whose error is clipped at an emoji', async () => {
    const client = schedulerClient(url, token);
    const worker = `clipper-${randomBytes(4).toString('hex')}`;
    await f.store.putDag({ id: 'clipped', capFraction: 1, tasks: [{ id: 'one', type: 'noop' }] }, 4);
    const { session } = await client.register.mutate({ workerId: worker, slots: 1 });
    const polled = client.poll.mutate({ workerId: worker, session, slots: 1, free: 1, waitMs: 10_000 });
    await f.store.triggerRun(parseDagId('clipped'));
    const [job] = await polled;
    // The event keeps the first 500 UTF-16 units of the error; the emoji's pair straddles that cut.
    const failed = await client.fail.mutate({ workerId: worker, session, jobId: job!.jobId, fence: job!.fence, error: `${'x'.repeat(499)}\ud83d\ude00 after`, retryable: false });
    expect(failed.state).toBe('failed');
    const event = await eventually('the job:failed event', async () => (await f.store.listEvents({ type: 'job:failed', limit: 100 })).find((e) => e.jobId === job!.jobId), 10_000);
    expect(event.data).toMatchObject({ error: 'x'.repeat(499) });
  });
});
