import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import type { Page } from 'playwright-core';
import { parseDagId, parseUserName } from '@fenceline/core';
import { hashPassword, newSecret, secretHash } from '@fenceline/db/people';
import { registerSecret } from '../test/support/run-logs';
import { REPO_ROOT, SHARDS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * Effect outcomes on the run page, in real Chromium against a real cluster whose task
 * writes through @fenceline/effects: a job applied, a job refused as stale (and by which
 * fence), a job that recorded none, and a job whose first attempt was fenced out by a
 * paused worker, whose effect still landed once. Selectors are data-testid.
 */

let h: Harness;
let page: Page;
let sql: postgres.Sql;
/** An API token of a viewer, for the run API's read. */
let token: string;

const PAUSE_DAG = 'e2e-effects-paused';
const SHARED_DAG = 'e2e-effects-shared';

before(async () => {
  h = await startHarness({ tasksModule: join(REPO_ROOT, 'e2e', 'src', 'effect-tasks.ts') });
  sql = postgres(h.databaseUrl, { max: 2, onnotice: () => undefined });
  await sql`create table effect_rows (key text not null, task_id text not null, fence bigint not null)`;
  await sql`create table effect_seen (task_id text not null, fence bigint not null, what text not null, at timestamptz not null default now())`;
  const url = h.databaseUrl;
  await h.store.putDag({ id: PAUSE_DAG, tasks: [{ id: 'write', type: 'e2e-effect', config: { url, holdMs: 8_000 }, retries: 2 }] }, SHARDS);
  await h.store.putDag(
    {
      id: SHARED_DAG,
      tasks: [
        // Its first attempt fails, so its effect lands under fence 2; `late` then comes with
        // fence 1 for the same key and is refused.
        { id: 'first', type: 'e2e-effect', config: { url, key: 'e2e/shared', failFirst: true }, retries: 2, retryBackoffMs: 0 },
        { id: 'late', type: 'e2e-effect', config: { url, key: 'e2e/shared' }, dependsOn: ['first'] },
        { id: 'plain', type: 'noop' },
      ],
    },
    SHARDS,
  );
  page = await signedInPage(h);
  const reader = await h.store.createUser({ name: parseUserName('e2e-effects-reader'), role: 'viewer', passwordHash: await hashPassword('e2e-effects-reader-password') });
  token = newSecret('flt');
  registerSecret("the effects reader's API token", token);
  await h.store.createApiToken({ userId: reader.id, name: 'run-effects', role: 'viewer', secretHash: secretHash(token), ttlMs: 3_600_000 });
});

after(async () => {
  await sql?.end();
  await h?.stop();
});

async function seen(taskId: string, fence: number, what: string): Promise<boolean> {
  const rows = await sql`select 1 from effect_seen where task_id = ${taskId} and fence = ${fence} and what = ${what}`;
  return rows.length > 0;
}

async function effectCell(taskId: string): Promise<{ word: string | null; detail: string }> {
  const row = page.getByTestId(`effect-${taskId}`);
  if ((await row.count()) === 0) return { word: null, detail: '' };
  return { word: await row.getAttribute('data-effect'), detail: (await page.getByTestId(`effect-detail-${taskId}`).textContent()) ?? '' };
}

describe('effect outcomes on the run page', () => {
  test('a job refused as stale says by which fence; an applied job and one that recorded none say so', async () => {
    const run = await h.store.triggerRun(parseDagId(SHARED_DAG));
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    await until('the run to succeed', async () => (await page.getByTestId('run-state').getAttribute('data-state')) === 'succeeded', 90_000);
    await until('the stale refusal to be shown', async () => (await effectCell('late')).word === 'refused as stale', 20_000);
    assert.match((await effectCell('late')).detail, /fence 1 was refused: fence 2 was already recorded/);
    assert.equal((await effectCell('first')).word, 'applied');
    assert.match((await effectCell('first')).detail, /applied under fence 2/);
    assert.equal((await effectCell('plain')).word, 'not recorded');
    // One row for the shared key, from the fence that applied it.
    assert.deepEqual(
      (await sql`select task_id, fence::int from effect_rows where key = 'e2e/shared'`).map((r) => [r.task_id, r.fence]),
      [['first', 2]],
    );
    // The side panel says the same for the selected job, with each effect's line.
    await page.getByTestId('effect-late').locator('button').click();
    await until('the job panel to show its effect', async () => (await page.getByTestId('job-effect').getAttribute('data-effect')) === 'refused as stale', 20_000);
    assert.match((await page.getByTestId('job-effect').textContent()) ?? '', /e2e\/shared \(postgres\): refused under fence 1, fence 2 was already recorded/);
    // The run API carries the same outcomes.
    const api = await fetch(`${h.consoleUrl}/api/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(api.status, 200);
    const body = (await api.json()) as { jobs: { taskId: string; result: { effects: unknown[] } | null }[] };
    const late = body.jobs.find((j) => j.taskId === 'late')!;
    assert.deepEqual(late.result!.effects, [{ key: 'e2e/shared', sink: 'postgres', outcome: 'stale', fence: 1, recordedFence: 2 }]);
    assert.deepEqual(body.jobs.find((j) => j.taskId === 'plain')!.result!.effects, []);
    await screenshot(page, 'run-effects-01-stale');
  });

  test('a first attempt fenced out by a paused worker is refused at the sink, and the effect lands once', async () => {
    const run = await h.store.triggerRun(parseDagId(PAUSE_DAG));
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    await until('the first attempt to start', () => seen('write', 1, 'started'), 60_000);
    const holder = (await h.store.listJobs(run.id))[0]!.holder!;
    // Paused while it waits before its effect: its lease runs out and another worker takes the job.
    h.cluster.signal(holder, 'SIGSTOP');
    // The expiry raises the fence and the next grant again, so the later attempt's fence is read, not assumed.
    let later = 0;
    try {
      later = await until(
        'a later attempt to apply the effect',
        async () => Number((await sql`select fence from effect_seen where task_id = 'write' and fence > 1 and what = 'applied'`)[0]?.fence ?? 0),
        60_000,
      );
    } finally {
      h.cluster.signal(holder, 'SIGCONT');
    }
    // Woken, the first attempt tries its effect late and the ledger refuses it.
    await until('the fenced-out attempt to be refused as stale', () => seen('write', 1, 'stale'), 30_000);
    await until('the run to succeed', async () => (await page.getByTestId('run-state').getAttribute('data-state')) === 'succeeded', 60_000);
    await until('the applied effect to be shown', async () => (await effectCell('write')).word === 'applied', 20_000);
    assert.match((await effectCell('write')).detail, new RegExp(`applied under fence ${later}$`));
    const key = `${PAUSE_DAG}/${run.id}/write`;
    assert.deepEqual(
      (await sql`select fence::int from effect_rows where key = ${key}`).map((r) => r.fence),
      [later],
    );
    await screenshot(page, 'run-effects-02-fenced-out');
  });
});
