import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRPCClientError } from '@trpc/client';
import { parseDagId } from '@fenceline/core';
import { schedulerClient, typedRefusal } from '@fenceline/worker';
import { runCli } from './support/cli-process';
import { eventually, startFixture, type Fixture } from './support/cluster-fixture';

/**
 * Worker identity against a real scheduler process in its default mode (issued
 * credentials only), with credentials issued and revoked by the real CLI: a worker that
 * knows another's id and fence still cannot write for that worker's lease, and no answer
 * tells it anything about a lease that is not its own.
 */

/** A refusal as a caller sees it: the typed code, message and details, or the HTTP-level code. */
async function refused(call: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown>; text: string }> {
  try {
    await call;
  } catch (err) {
    const typed = typedRefusal(err);
    if (typed) return { code: typed.code, message: typed.message, details: typed.details, text: JSON.stringify({ message: typed.message, details: typed.details }) };
    if (err instanceof TRPCClientError) {
      return { code: String((err.data as { code?: string } | undefined)?.code ?? err.message), message: err.message, details: {}, text: err.message };
    }
    throw err;
  }
  throw new Error('the call was accepted');
}

async function issue(databaseUrl: string, pool: string): Promise<{ id: string; token: string }> {
  const out = await runCli(databaseUrl, 'worker-token', 'create', '--pool', pool);
  expect(out.code, out.stderr).toBe(0);
  const id = /created worker credential (\S+)/.exec(out.stdout)?.[1];
  const token = /token \(shown only now\): (\S+)/.exec(out.stdout)?.[1];
  expect(id && token, out.stdout).toBeTruthy();
  return { id: id!, token: token! };
}

describe('worker credentials and sessions against a real scheduler', () => {
  let f: Fixture;
  let url: string;
  let alpha: { id: string; token: string };
  let alphaTwo: { id: string; token: string };
  let beta: { id: string; token: string };
  beforeAll(async () => {
    f = await startFixture({ schedulers: 1, workers: 0, env: { FENCELINE_WORKER_AUTH: 'credentials' } });
    url = f.cluster.schedulerUrl(0);
    alpha = await issue(f.databaseUrl, 'alpha');
    alphaTwo = await issue(f.databaseUrl, 'alpha');
    beta = await issue(f.databaseUrl, 'beta');
  });
  afterAll(async () => f?.stop());

  /** A job leased to `alpha-1`, registered with the alpha credential. */
  async function leasedToAlpha(dag: string) {
    const holder = schedulerClient(url, alpha.token);
    const { session } = await holder.register.mutate({ workerId: 'alpha-1', slots: 1 });
    await f.store.putDag({ id: dag, tasks: [{ id: 'one', type: 'noop', pool: 'alpha' }] }, 4);
    const polled = holder.poll.mutate({ workerId: 'alpha-1', session, slots: 1, free: 1, waitMs: 10_000 });
    await f.store.triggerRun(parseDagId(dag));
    const [job] = await polled;
    expect(job).toBeDefined();
    return { holder, session, jobId: job!.jobId, fence: job!.fence };
  }

  it('refuses the fleet token, lists credentials without secrets, and names the field of a bad pool', async () => {
    const fleet = schedulerClient(url, f.cluster.opts.workerToken);
    expect((await refused(fleet.register.mutate({ workerId: 'alpha-9', slots: 1 }))).code).toBe('UNAUTHORIZED');
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${f.cluster.opts.workerToken}` } })).status).toBe(401);
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${alpha.token}` } })).status).toBe(200);
    const list = await runCli(f.databaseUrl, 'worker-token', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(alpha.id);
    expect(list.stdout).not.toContain(alpha.token.split('.')[2]);
    const bad = await runCli(f.databaseUrl, 'worker-token', 'create', '--pool', 'Not A Pool');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^INVALID_INPUT: pool: /m);
  });

  it("keeps another pool's credential off a worker's id, whatever it knows", async () => {
    const { holder, session, jobId, fence } = await leasedToAlpha('identity-foreign-pool');
    const intruder = schedulerClient(url, beta.token);
    const { session: betaSession } = await intruder.register.mutate({ workerId: 'beta-1', slots: 1 });
    // The holder's id, its fence, even its session: a beta credential may not act as alpha-1.
    const attempts = [
      () => intruder.register.mutate({ workerId: 'alpha-1', slots: 1 }),
      () => intruder.complete.mutate({ workerId: 'alpha-1', session: betaSession, jobId, fence, output: { by: 'beta' } }),
      () => intruder.complete.mutate({ workerId: 'alpha-1', session, jobId, fence, output: { by: 'beta' } }),
      () => intruder.renew.mutate({ workerId: 'alpha-1', session, leases: [{ jobId, fence }] }),
      () =>
        intruder.renewMany.mutate({
          renewals: [
            { workerId: 'beta-1', session: betaSession, jobId, fence },
            { workerId: 'alpha-1', session, jobId, fence },
          ],
        }),
      () => intruder.fail.mutate({ workerId: 'alpha-1', session, jobId, fence, error: 'sabotage', retryable: false }),
      () => intruder.release.mutate({ workerId: 'alpha-1', session, jobId, fence }),
      () => intruder.poll.mutate({ workerId: 'alpha-1', session, slots: 1, free: 1, waitMs: 0 }),
    ];
    for (const attempt of attempts) {
      const answer = await refused(attempt());
      expect(answer.code).toBe('FORBIDDEN');
      expect(answer.details.field).toMatch(/workerId$/);
    }
    // Under its own id it is simply not the holder, and the answer says nothing of who is.
    const own = await refused(intruder.complete.mutate({ workerId: 'beta-1', session: betaSession, jobId, fence: fence + 7 }));
    expect(own.code).toBe('LEASE_LOST');
    expect(own.details).toEqual({ jobId, fence: fence + 7, operation: 'complete' });
    expect(own.message).toBe(`complete refused: this worker holds no live lease on job ${jobId} with fence ${fence + 7}`);
    expect(await f.store.getResult(jobId)).toBeNull();
    expect((await holder.complete.mutate({ workerId: 'alpha-1', session, jobId, fence, output: { by: 'alpha-1' } })).state).toBe('succeeded');
    expect(await f.store.getResult(jobId)).toMatchObject({ workerId: 'alpha-1', output: { by: 'alpha-1' } });
  });

  it("refuses a second worker of the same pool writing with the holder's id and fence under its own session", async () => {
    const { holder, session, jobId, fence } = await leasedToAlpha('identity-same-pool');
    const other = schedulerClient(url, alphaTwo.token);
    const { session: otherSession } = await other.register.mutate({ workerId: 'alpha-2', slots: 1 });
    const answers = [
      await refused(other.complete.mutate({ workerId: 'alpha-1', session: otherSession, jobId, fence, output: { by: 'alpha-2' } })),
      await refused(other.fail.mutate({ workerId: 'alpha-1', session: otherSession, jobId, fence, error: 'sabotage', retryable: false })),
      await refused(other.release.mutate({ workerId: 'alpha-1', session: otherSession, jobId, fence })),
    ];
    for (const a of answers) expect(a.code).toBe('LEASE_LOST');
    const [renewal] = await other.renew.mutate({ workerId: 'alpha-1', session: otherSession, leases: [{ jobId, fence }] });
    expect(renewal).toMatchObject({ ok: false, code: 'LEASE_LOST' });
    const [batch] = await other.completeMany.mutate({ workerId: 'alpha-1', session: otherSession, results: [{ jobId, fence: fence + 1 }] });
    expect(batch).toMatchObject({ ok: false, error: { code: 'LEASE_LOST' } });
    for (const text of [...answers.map((a) => a.text), JSON.stringify(renewal), JSON.stringify(batch)]) expect(text).not.toMatch(/held by|recordFence|holder/);
    expect(await f.store.getJob(jobId)).toMatchObject({ state: 'leased', holder: 'alpha-1', fence });
    expect(await f.store.getResult(jobId)).toBeNull();
    // The real holder is not refused afterwards.
    expect((await holder.complete.mutate({ workerId: 'alpha-1', session, jobId, fence, output: 'mine' })).state).toBe('succeeded');

    const events = await eventually(
      'the precise reasons in the event log',
      async () => {
        const rows = await f.store.listEvents({ type: 'write:fenced', jobId, limit: 20 });
        return rows.length >= 5 ? rows : null;
      },
      5_000,
    );
    expect(new Set(events.map((e) => e.data.reason))).toEqual(new Set(['OLD_SESSION', 'FORGED_FENCE']));
    const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${alpha.token}` } })).text();
    expect(metrics).toMatch(/writes_refused_total\{reason="OLD_SESSION"\} [1-9]/);
  });

  it("refuses a restarted worker's old session, and its new session for the old leases", async () => {
    const { jobId, fence, session: before } = await leasedToAlpha('identity-restart');
    const restarted = schedulerClient(url, alpha.token);
    const { session: after } = await restarted.register.mutate({ workerId: 'alpha-1', slots: 1 });
    expect(after).not.toBe(before);
    const [old] = await restarted.renew.mutate({ workerId: 'alpha-1', session: before, leases: [{ jobId, fence }] });
    expect(old).toMatchObject({ ok: false, code: 'LEASE_LOST' });
    expect((await refused(restarted.complete.mutate({ workerId: 'alpha-1', session: before, jobId, fence }))).code).toBe('LEASE_LOST');
    expect((await refused(restarted.complete.mutate({ workerId: 'alpha-1', session: after, jobId, fence }))).code).toBe('LEASE_LOST');
    expect(await f.store.getResult(jobId)).toBeNull();
    // The old process is handed no more work: its polls are refused, the new one's are not.
    const stale = await refused(restarted.poll.mutate({ workerId: 'alpha-1', session: before, slots: 1, free: 1, waitMs: 0 }));
    expect(stale).toMatchObject({ code: 'UNAUTHORIZED', details: { field: 'session' } });
    expect(await restarted.poll.mutate({ workerId: 'alpha-1', session: after, slots: 1, free: 1, waitMs: 0 })).toEqual([]);
    const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${alpha.token}` } })).text();
    expect(metrics).toMatch(/^fenceline_polls_refused_total [1-9]/m);
  });

  it('runs jobs on a real worker process that has only its pool credential, named after its pool', async () => {
    const worker = f.cluster.spawn({
      name: 'worker-alpha',
      kind: 'worker',
      env: { ...f.cluster.commonEnv(), FENCELINE_WORKER_AUTH: 'credentials', FENCELINE_WORKER_TOKEN: alpha.token, FENCELINE_SCHEDULER_URLS: url, FENCELINE_WORKER_ID: '' },
    });
    try {
      // The worker serves its credential's pool, alpha, without being told.
      await f.store.putDag({ id: 'identity-real-worker', tasks: [{ id: 'one', type: 'noop', pool: 'alpha' }] }, 4);
      const run = await f.store.triggerRun(parseDagId('identity-real-worker'));
      const done = await eventually('the run to succeed on the credentialed worker', async () => ((await f.store.getRun(run.id)).state === 'succeeded' ? true : null), 30_000);
      expect(done).toBe(true);
      const [job] = await f.store.listJobs(run.id);
      expect((await f.store.getResult(job!.id))?.workerId).toMatch(/^alpha-/);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  });

  it('refuses a revoked credential at once, on every procedure and on /metrics', async () => {
    const doomed = await issue(f.databaseUrl, 'gamma');
    const client = schedulerClient(url, doomed.token);
    const { session } = await client.register.mutate({ workerId: 'gamma-1', slots: 1 });
    // Looked up once, so the revocation must reach the scheduler's cache, not only the store.
    await client.renew.mutate({ workerId: 'gamma-1', session, leases: [] });
    const out = await runCli(f.databaseUrl, 'worker-token', 'revoke', doomed.id);
    expect(out.code, out.stderr).toBe(0);
    expect((await refused(client.renew.mutate({ workerId: 'gamma-1', session, leases: [] }))).code).toBe('UNAUTHORIZED');
    expect((await refused(client.register.mutate({ workerId: 'gamma-1', slots: 1 }))).code).toBe('UNAUTHORIZED');
    expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${doomed.token}` } })).status).toBe(401);
    const list = await runCli(f.databaseUrl, 'worker-token', 'list');
    expect(list.stdout).toMatch(new RegExp(`${doomed.id}.*gamma.*\\d{4}-\\d{2}-\\d{2}T.*\\d{4}-\\d{2}-\\d{2}T`));
    expect((await runCli(f.databaseUrl, 'worker-token', 'revoke', 'wk-nothing')).code).toBe(1);
    // Issuing and revoking are in the audit log, under the CLI's user, with the pool.
    const entries = (await f.store.listAudit({ limit: 500 })).filter((e) => e.target === doomed.id);
    expect(entries.map((e) => e.action).sort()).toEqual(['worker_token.created', 'worker_token.revoked']);
    expect(entries.every((e) => e.actorKind === 'cli' && e.source === 'cli' && (e.details as { pool?: string }).pool === 'gamma')).toBe(true);
  });
});
