import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRPCClientError } from '@trpc/client';
import { parseDagId, isJobId, MAX_SEQUENCE_ID } from '@fenceline/core';
import { workerRouter } from '@fenceline/scheduler';
import { schedulerClient, typedRefusal } from '@fenceline/worker';
import { eventually, startFixture, type Fixture } from './support/cluster-fixture';

/** The code of a typed refusal from the scheduler, or the transport's HTTP status. */
async function refusal(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    const typed = typedRefusal(err);
    if (typed) return typed.code;
    if (err instanceof TRPCClientError) return String((err.data as { code?: string } | undefined)?.code ?? err.message);
    throw err;
  }
  throw new Error('the call was accepted');
}

describe('worker protocol against a real scheduler', () => {
  let f: Fixture;
  let url: string;
  let token: string;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 1, workers: 0 });
    url = f.cluster.schedulerUrl(0);
    token = f.cluster.opts.workerToken;
  });
  afterAll(async () => f?.stop());

  it('refuses every procedure without the worker token, and answers /health without it', async () => {
    const names = Object.keys(workerRouter._def.procedures).filter((n) => n !== 'hello');
    expect(names.length).toBeGreaterThanOrEqual(6);
    for (const name of names) {
      const res = await fetch(`${url}/trpc/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status, name).toBe(401);
    }
    const wrong = await fetch(`${url}/trpc/register`, { method: 'POST', headers: { authorization: 'Bearer not-the-token', 'content-type': 'application/json' }, body: '{}' });
    expect(wrong.status).toBe(401);
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });

  it('refuses a body that is not declared JSON with 415, on the hot path and the adapter path', async () => {
    const body = JSON.stringify({ workerId: 'w', slots: 1 });
    for (const path of ['complete', 'completeMany', 'renew', 'register', 'register?batch=1']) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (type) headers['content-type'] = type;
        const res = await fetch(`${url}/trpc/${path}`, { method: 'POST', headers: type ? headers : { ...headers, 'content-type': '' }, body });
        expect(res.status, `${path} as ${type ?? 'no type'}`).toBe(415);
        expect(await res.text()).toMatch(/UNSUPPORTED_MEDIA_TYPE/);
      }
    }
  });

  it('refuses malformed input with a 400 and no write', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const res = await fetch(`${url}/trpc/complete`, { method: 'POST', headers, body: JSON.stringify({ workerId: 'w', jobId: 'drop table', fence: -1 }) });
    expect(res.status).toBe(400);
    const notJson = await fetch(`${url}/trpc/renew`, { method: 'POST', headers, body: '{"workerId": ' });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { data: { code: string } } }).error.data.code).toBe('PARSE_ERROR');
    const huge = await fetch(`${url}/trpc/completeMany`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ workerId: 'w', results: [{ jobId: '1', fence: 1, logs: 'x'.repeat(2 * 1024 * 1024) }] }),
    });
    expect(huge.status).toBe(413);
  });

  it('refuses stale, forged, foreign, unknown and replayed writes alike, and counts each by its reason', async () => {
    const client = schedulerClient(url, token);
    await f.store.putDag({ id: 'abuse', tasks: [{ id: 'one', type: 'noop' }] }, 4);
    const { session } = await client.register.mutate({ workerId: 'honest', slots: 1 });
    const { session: intruder } = await client.register.mutate({ workerId: 'intruder', slots: 1 });
    expect(session).not.toBe(intruder);
    const polled = client.poll.mutate({ workerId: 'honest', session, slots: 1, free: 1, waitMs: 10_000 });
    await f.store.triggerRun(parseDagId('abuse'));
    const [job] = await polled;
    expect(job).toBeDefined();
    const { jobId, fence } = job!;

    const renewals = await client.renew.mutate({
      workerId: 'honest',
      session,
      leases: [
        { jobId, fence: fence + 1 },
        { jobId, fence: fence - 1 },
        { jobId: '987654321', fence: 1 },
      ],
    });
    // One answer whatever the reason, so a caller cannot tell a stale fence from a forged one.
    expect(renewals.map((r) => (r.ok ? 'ok' : r.code))).toEqual(['LEASE_LOST', 'LEASE_LOST', 'LEASE_LOST']);
    const foreign = await client.renew.mutate({ workerId: 'intruder', session: intruder, leases: [{ jobId, fence }] });
    expect(foreign[0]).toMatchObject({ ok: false, code: 'LEASE_LOST' });
    expect(JSON.stringify(foreign)).not.toContain('honest');

    expect(await refusal(client.complete.mutate({ workerId: 'honest', session, jobId, fence: fence + 1 }))).toBe('LEASE_LOST');
    expect(await refusal(client.complete.mutate({ workerId: 'honest', session, jobId, fence: fence - 1 }))).toBe('LEASE_LOST');
    expect(await refusal(client.complete.mutate({ workerId: 'intruder', session: intruder, jobId, fence }))).toBe('LEASE_LOST');
    expect(await refusal(client.fail.mutate({ workerId: 'intruder', session: intruder, jobId, fence, error: 'sabotage' }))).toBe('LEASE_LOST');
    expect(await refusal(client.complete.mutate({ workerId: 'honest', session, jobId: '987654321', fence: 1 }))).toBe('LEASE_LOST');
    // The attack the old refusals allowed: the holder's id and the current fence, from another worker.
    expect(await refusal(client.complete.mutate({ workerId: 'honest', session: intruder, jobId, fence, output: { by: 'intruder' } }))).toBe('LEASE_LOST');
    expect(await f.store.getResult(jobId)).toBeNull();

    const done = await client.complete.mutate({ workerId: 'honest', session, jobId, fence, output: { answer: 42 } });
    expect(done.state).toBe('succeeded');
    expect(await refusal(client.complete.mutate({ workerId: 'honest', session, jobId, fence, output: { answer: 'replayed' } }))).toBe('LEASE_LOST');
    const result = await f.store.getResult(jobId);
    expect(result).toMatchObject({ fence, workerId: 'honest', outcome: 'succeeded', output: { answer: 42 } });

    const metrics = await eventually(
      'refusals in /metrics',
      async () => {
        const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
        return text.includes('reason="FORGED_FENCE"') ? text : null;
      },
      5_000,
    );
    const count = (reason: string): number => Number(metrics.match(new RegExp(`writes_refused_total\\{reason="${reason}"\\} (\\d+)`))?.[1] ?? 0);
    expect(count('FORGED_FENCE')).toBe(2);
    expect(count('STALE_FENCE')).toBe(2);
    expect(count('NOT_FOUND')).toBe(2);
    expect(count('FOREIGN_HOLDER')).toBe(3);
    expect(count('OLD_SESSION')).toBe(1);
    expect(count('LEASE_LOST')).toBe(1);
    // The process's own pauses are there too, so a slow dispatch can be told from a slow store.
    for (const name of ['runtime_gc_pauses_total', 'runtime_eventloop_stalls_total', 'runtime_rss_bytes']) {
      expect(metrics).toMatch(new RegExp(`^fenceline_${name} \\d+`, 'm'));
    }
    const events = await eventually(
      'refusals in the event log',
      async () => {
        const rows = await f.store.listEvents({ type: 'write:fenced', limit: 100 });
        return rows.length >= 11 ? rows : null;
      },
      5_000,
    );
    expect(events.filter((e) => e.workerId === 'intruder').length).toBe(3);
  });

  it('answers each item of a batched completion or renewal on its own', async () => {
    const client = schedulerClient(url, token);
    // The DAG may hold the whole (tiny) pool, so both jobs are leased to one worker at once.
    await f.store.putDag(
      {
        id: 'batched',
        capFraction: 1,
        tasks: [
          { id: 'one', type: 'noop' },
          { id: 'two', type: 'noop' },
        ],
      },
      4,
    );
    const { session } = await client.register.mutate({ workerId: 'batcher', slots: 2 });
    const { session: hostB } = await client.register.mutate({ workerId: 'host-b', slots: 1 });
    const polled = client.poll.mutate({ workerId: 'batcher', session, slots: 2, free: 2, waitMs: 10_000 });
    await f.store.triggerRun(parseDagId('batched'));
    let jobs = await polled;
    // The two jobs may come in one delivery or two.
    if (jobs.length < 2) jobs = [...jobs, ...(await client.poll.mutate({ workerId: 'batcher', session, slots: 2, free: 1, waitMs: 10_000 }))];
    expect(jobs).toHaveLength(2);
    type Granted = Extract<(typeof jobs)[number], { runId: string }>;
    const [a, b] = jobs as [Granted, Granted];

    const renewed = await client.renewMany.mutate({
      renewals: [
        { workerId: 'batcher', session, jobId: a.jobId, fence: a.fence },
        { workerId: 'host-b', session: hostB, jobId: b.jobId, fence: b.fence },
        { workerId: 'batcher', session, jobId: b.jobId, fence: b.fence + 1 },
      ],
    });
    expect(renewed.map((r) => (r.ok ? 'ok' : r.code))).toEqual(['ok', 'LEASE_LOST', 'LEASE_LOST']);

    const outcomes = await client.completeMany.mutate({
      workerId: 'batcher',
      session,
      results: [
        { jobId: a.jobId, fence: a.fence, output: { n: 'a' } },
        { jobId: b.jobId, fence: b.fence - 1, output: { n: 'stale' } },
        { jobId: '987654320', fence: 1 },
      ],
    });
    expect(outcomes.map((o) => (o.ok ? o.state : o.error.code))).toEqual(['succeeded', 'LEASE_LOST', 'LEASE_LOST']);
    expect(await f.store.getResult(a.jobId)).toMatchObject({ fence: a.fence, workerId: 'batcher', output: { n: 'a' } });
    expect(await f.store.getResult(b.jobId)).toBeNull();
    const last = await client.completeMany.mutate({ workerId: 'batcher', session, results: [{ jobId: b.jobId, fence: b.fence, output: { n: 'b' } }] });
    expect(last[0]).toMatchObject({ ok: true, state: 'succeeded', fence: b.fence });
    // The run finishes once both results are in: the leader's follow-up ran after the answers.
    await eventually('the run to succeed', async () => ((await f.store.getRun(a.runId)).state === 'succeeded' ? true : null), 10_000);
    const tooMany = await fetch(`${url}/trpc/completeMany`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workerId: 'batcher', session, results: [] }),
    });
    expect(tooMany.status).toBe(400);
  });

  it('answers each item of a batched failure or hand-back on its own', async () => {
    const client = schedulerClient(url, token);
    await f.store.putDag(
      {
        id: 'batched-ends',
        capFraction: 1,
        tasks: [
          { id: 'one', type: 'noop', retries: 1 },
          { id: 'two', type: 'noop' },
        ],
      },
      4,
    );
    const { session } = await client.register.mutate({ workerId: 'ender', slots: 2 });
    const polled = client.poll.mutate({ workerId: 'ender', session, slots: 2, free: 2, waitMs: 10_000 });
    await f.store.triggerRun(parseDagId('batched-ends'));
    let jobs = await polled;
    if (jobs.length < 2) jobs = [...jobs, ...(await client.poll.mutate({ workerId: 'ender', session, slots: 2, free: 1, waitMs: 10_000 }))];
    expect(jobs).toHaveLength(2);
    type Granted = Extract<(typeof jobs)[number], { runId: string }>;
    const [a, b] = jobs as [Granted, Granted];

    const failed = await client.failMany.mutate({
      workerId: 'ender',
      session,
      failures: [
        { jobId: b.jobId, fence: b.fence + 1, error: 'forged' },
        { jobId: a.jobId, fence: a.fence, error: 'boom', retryable: true },
        { jobId: a.jobId, fence: a.fence, error: 'twice' },
      ],
    });
    expect(failed.map((o) => (o.ok ? o.state : o.error.code))).toEqual(['LEASE_LOST', 'ready', 'LEASE_LOST']);
    expect(await f.store.getResult(a.jobId)).toMatchObject({ fence: a.fence, outcome: 'failed', error: 'boom' });
    expect(await f.store.getJob(b.jobId)).toMatchObject({ state: 'leased', fence: b.fence });

    const released = await client.releaseMany.mutate({
      workerId: 'ender',
      session,
      releases: [
        { jobId: b.jobId, fence: b.fence - 1 },
        { jobId: b.jobId, fence: b.fence, reason: 'no-free-slot' },
      ],
    });
    expect(released.map((o) => (o.ok ? o.state : o.error.code))).toEqual(['LEASE_LOST', 'ready']);
    expect(await f.store.getJob(b.jobId)).toMatchObject({ state: 'ready', fence: b.fence + 1, holder: null });
  });

  it('takes a job id by the rule every boundary uses: 1 to the largest bigint, no leading zero', async () => {
    const client = schedulerClient(url, token);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    // The store's 18-digit rule once refused ids this router took; '01' named job 1.
    const ids = [MAX_SEQUENCE_ID, '1'.repeat(19), '9223372036854775808', '1'.repeat(20), '0', '01', '', ' 1', '1e3', '-1'];
    const { session } = await client.register.mutate({ workerId: 'honest', slots: 1 });
    for (const jobId of ids) {
      if (isJobId(jobId)) {
        expect(await refusal(client.complete.mutate({ workerId: 'honest', session, jobId, fence: 1 })), jobId).toBe('LEASE_LOST');
        const [renewed] = await client.renew.mutate({ workerId: 'honest', session, leases: [{ jobId, fence: 1 }] });
        expect(renewed, jobId).toMatchObject({ ok: false, code: 'LEASE_LOST' });
        continue;
      }
      const res = await fetch(`${url}/trpc/renew`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          workerId: 'honest',
          session,
          leases: [
            { jobId: '1', fence: 1 },
            { jobId, fence: 1 },
          ],
        }),
      });
      expect(res.status, jobId).toBe(400);
      const body = (await res.json()) as { error: { message: string; data: { code: string } } };
      expect(body.error.data.code).toBe('BAD_REQUEST');
      const issues = JSON.parse(body.error.message) as { path: (string | number)[]; message: string }[];
      expect(
        issues.map((i) => i.path),
        jobId,
      ).toEqual([['leases', 1, 'jobId']]);
      expect(issues[0]!.message).toMatch(/^must be a numeric id/);
    }
    expect(isJobId(MAX_SEQUENCE_ID) && !isJobId('1'.repeat(20))).toBe(true);
  });
});
