import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWorkerId, type JobId } from '@fenceline/core';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { signInThroughRoute } from './support/route-sign-in';

// A database of this file's own, named before the console reads its settings (once).
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = `fenceline_test_${randomBytes(6).toString('hex')}`;
process.env.DATABASE_URL = await createDatabase(ADMIN_URL, DB_NAME);
const { POST } = await import('../src/app/api/trpc/[trpc]/route');
const { GET } = await import('../src/app/api/jobs/[jobId]/attempts/[fence]/logs/route');
const { consoleStore } = await import('../src/server/store');

function download(jobId: string, fence: string, headers: Record<string, string> = {}): Promise<Response> {
  return GET(new Request(`http://console.test/api/jobs/${jobId}/attempts/${fence}/logs`, { headers }), { params: Promise.resolve({ jobId, fence }) });
}

describe('console: downloading an attempt’s logs', () => {
  let store: SqlStore;
  let jobId: JobId;
  const fences: number[] = [];
  beforeAll(async () => {
    store = await openStore({ databaseUrl: process.env.DATABASE_URL!, max: 2 });
    await store.initCluster(1);
    await store.putDag({ id: 'logged', tasks: [{ id: 'one', type: 'noop', retries: 1 }] }, 1);
    // This test leads the one shard itself: a failed attempt, then a successful one.
    const lead = (await store.acquireShard({ shard: 0, nodeId: 'test-node', ttlMs: 60_000 }))!.token;
    const run = await store.triggerRun('logged' as never);
    const [started] = await store.startRunsAcross([
      {
        token: lead,
        items: [{ runId: run.id, jobs: [{ taskId: 'one', state: 'ready', maxAttempts: 2, priority: 0, retryBackoffMs: 0, retryBackoffMaxMs: 0, timeoutMs: 60_000 }] }],
      },
    ]);
    jobId = (started as { id: JobId }[][])[0]![0]!.id;
    const grant = async () => ((await store.grantLeasesMany([{ token: lead, grants: [{ jobId, workerId: parseWorkerId('w1') }] }], 60_000))[0] as { fence: number }[])[0]!.fence;
    const first = await grant();
    await store.failJob({ jobId, fence: first, workerId: parseWorkerId('w1'), session: null }, { error: 'boom', retryable: true, logs: 'first try\n' });
    const second = await grant();
    await store.completeJobs([{ ref: { jobId, fence: second, workerId: parseWorkerId('w1'), session: null }, output: null, logs: 'second try\n' }]);
    fences.push(first, second);
  });
  afterAll(async () => {
    await store?.close();
    await (await consoleStore()).close();
    await dropDatabase(ADMIN_URL, DB_NAME);
  });

  it('gives a viewer each attempt’s whole log as a file', async () => {
    const cookie = await signInThroughRoute(POST, store, 'viewer');
    for (const [fence, text] of [
      [fences[0]!, 'first try\n'],
      [fences[1]!, 'second try\n'],
    ] as const) {
      const res = await download(jobId, String(fence), { cookie });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="job-${jobId}-fence-${fence}\\.log"$`));
      expect(await res.text()).toBe(text);
    }
  });

  it('gives a running attempt’s lines streamed so far', async () => {
    const cookie = await signInThroughRoute(POST, store, 'viewer');
    await store.putDag({ id: 'running', tasks: [{ id: 'one', type: 'noop' }] }, 1);
    const lead = (await store.acquireShard({ shard: 0, nodeId: 'test-node', ttlMs: 60_000 }))!.token;
    const run = await store.triggerRun('running' as never);
    const [started] = await store.startRunsAcross([
      {
        token: lead,
        items: [{ runId: run.id, jobs: [{ taskId: 'one', state: 'ready', maxAttempts: 1, priority: 0, retryBackoffMs: 0, retryBackoffMaxMs: 0, timeoutMs: 60_000 }] }],
      },
    ]);
    const running = (started as { id: JobId }[][])[0]![0]!.id;
    const [granted] = (await store.grantLeasesMany([{ token: lead, grants: [{ jobId: running, workerId: parseWorkerId('w2') }] }], 60_000))[0] as { fence: number }[];
    for (const log of ['one\n', 'two\n']) await store.renewLeases([{ jobId: running, fence: granted!.fence, workerId: parseWorkerId('w2'), session: null, log }], 60_000);
    const res = await download(running, String(granted!.fence), { cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="job-${running}-fence-${granted!.fence}-so-far.log"`);
    expect(await res.text()).toBe('one\ntwo\n');
  });

  it('asks for a session as tRPC does, and answers 404 for an attempt that is not there', async () => {
    expect((await download(jobId, String(fences[0]))).status).toBe(401);
    expect((await download(jobId, String(fences[0]), { cookie: 'fenceline_session=not-a-session' })).status).toBe(401);
    const cookie = await signInThroughRoute(POST, store, 'viewer');
    for (const [job, fence] of [
      [jobId, '999'],
      [jobId, '0'],
      [jobId, '1e3'],
      ['abc', '1'],
      ['9223372036854775807', '1'],
    ]) {
      const res = await download(job!, fence!, { cookie });
      expect(res.status, `${job}/${fence}`).toBe(404);
      expect(await res.text()).not.toMatch(/select|stack|\.ts:/);
    }
  });
});
