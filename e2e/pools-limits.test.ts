import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseDagId, type DagSpecInput } from '@fenceline/core';
import { SHARDS, SLOTS, VIEWER, WORKERS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * Worker pools and resource limits in real Chromium against a real cluster: an operator
 * opens Limits from the navigation, creates a limit and sees who holds and who waits for it
 * as the store has it, a bad
 * capacity is refused naming the field, a viewer sees the limits but cannot set one, the
 * Workers page shows each worker's pool, and a job for a pool no live worker serves says why
 * it waits until a worker of that pool joins and runs it.
 */

let h: Harness;
let page: Page;

/** Two tasks that each hold the one unit of `warehouse` for a while: one runs, the other waits. */
const limited: DagSpecInput = {
  id: 'e2e-limited',
  schedule: { kind: 'manual' },
  tasks: [
    { id: 'load-a', type: 'sleep', config: { durationMs: 8000 }, resources: { warehouse: 1 } },
    { id: 'load-b', type: 'sleep', config: { durationMs: 8000 }, resources: { warehouse: 1 } },
  ],
};

/** A task for the gpu pool, which no worker serves until the test starts one. */
const onGpu: DagSpecInput = {
  id: 'e2e-gpu',
  schedule: { kind: 'manual' },
  tasks: [{ id: 'fit', type: 'noop', pool: 'gpu', labels: ['region=eu'] }],
};

before(async () => {
  h = await startHarness();
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('pools and limits', () => {
  test('an operator opens Limits from the navigation, creates a limit and sees its use and who waits, as the store has it', async () => {
    await page.goto(`${h.consoleUrl}/`);
    await page.getByTestId('nav-limits').click();
    await page.waitForURL((url) => url.pathname === '/limits');
    await page.getByTestId('limit-name').fill('warehouse');
    await page.getByTestId('limit-capacity').fill('0');
    await page.getByTestId('limit-set').click();
    const refused = page.getByTestId('api-error');
    await refused.waitFor();
    assert.equal(await refused.getAttribute('data-code'), 'INVALID_INPUT');
    assert.match((await refused.textContent()) ?? '', /capacity must be at least 1/);
    assert.deepEqual(await h.store.listResourceLimits(), [], 'a refused limit is not stored');

    await page.getByTestId('limit-capacity').fill('1');
    await page.getByTestId('limit-set').click();
    const row = page.getByTestId('limit-warehouse');
    await row.waitFor();
    assert.equal(await row.getAttribute('data-capacity'), '1');
    assert.equal(await page.getByTestId('api-error').count(), 0, 'the earlier refusal is gone once a set succeeds');
    const [entry] = await h.store.listAudit({ action: 'limit.set' });
    assert.equal(entry?.actor, 'e2e-operator');

    await h.store.putDag(limited, SHARDS);
    const run = await h.store.triggerRun(parseDagId(limited.id));
    await until(
      'one job to hold the unit and the other to wait for it',
      async () => (await row.getAttribute('data-used')) === '1' && (await row.getAttribute('data-waiting')) === '1',
      30_000,
    );
    assert.equal(await page.getByTestId('limit-warehouse-use').textContent(), '1 / 1');
    const waiters = (await page.getByTestId('limit-warehouse-waiters').textContent()) ?? '';
    assert.match(waiters, new RegExp(`e2e-limited · run ${run.id} · load-[ab]`));
    // The page's figures are the store's: its waiting count, and the ready job it names is the one that waits.
    await until(
      'the page to show the waiting job the store has',
      async () => {
        const [stored] = await h.store.listResourceLimits();
        const ready = (await h.store.listJobs(run.id)).filter((j) => j.state === 'ready').map((j) => j.taskId);
        const text =
          (await page
            .getByTestId('limit-warehouse-waiters')
            .textContent()
            .catch(() => '')) ?? '';
        return stored?.waiting === 1 && ready.length === 1 && (await row.getAttribute('data-waiting')) === String(stored.waiting) && text.includes(`· ${ready[0]}`);
      },
      10_000,
    );
    await screenshot(page, '40-limits');
  });

  test('a viewer sees the limits but has no form, and the API refuses a viewer who sets one', async () => {
    const viewer = await signedInPage(h, VIEWER);
    await viewer.goto(`${h.consoleUrl}/fair-share`);
    await viewer.getByTestId('limit-warehouse').waitFor();
    await viewer.getByTestId('limit-read-only').waitFor();
    assert.equal(await viewer.getByTestId('limit-form').count(), 0);
    assert.equal(await viewer.getByTestId('limit-delete-warehouse').count(), 0);
    const status = await viewer.evaluate(async () => {
      const res = await fetch('/api/trpc/limits.set', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ json: { name: 'warehouse', capacity: 9 } }),
      });
      return res.status;
    });
    assert.equal(status, 403);
    assert.equal((await h.store.listResourceLimits())[0]?.capacity, 1, 'the viewer changed nothing');
    await viewer.context().close();
  });

  test('the Workers page shows each worker pool and the pools; a job for a pool nobody serves says why it waits until one joins', async () => {
    await page.goto(`${h.consoleUrl}/workers`);
    await page.getByTestId('worker-pool-worker-1').waitFor();
    assert.match((await page.getByTestId('worker-pool-worker-1').textContent()) ?? '', /^default/);
    const defaultPool = page.getByTestId('pool-default');
    assert.equal(await defaultPool.getAttribute('data-workers'), String(WORKERS));
    assert.equal(await defaultPool.getAttribute('data-slots'), String(WORKERS * SLOTS));

    await h.store.putDag(onGpu, SHARDS);
    const run = await h.store.triggerRun(parseDagId(onGpu.id));
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    await page.getByTestId('gantt-row-fit').waitFor();
    await page.getByTestId('gantt-row-fit').click();
    const reason = page.getByTestId('waiting-reason');
    await until('the waiting reason to name the missing pool', async () => /no live worker in pool `gpu`/.test((await reason.textContent().catch(() => '')) ?? ''), 20_000);
    await screenshot(page, '41-run-waiting-for-pool');

    h.cluster.startWorker(WORKERS, { FENCELINE_WORKER_POOL: 'gpu', FENCELINE_WORKER_LABELS: 'gpu,region=eu' });
    const gpuWorker = `worker-${WORKERS + 1}`;
    await page.goto(`${h.consoleUrl}/workers`);
    const gpuPool = page.getByTestId('pool-gpu');
    await gpuPool.waitFor({ timeout: 30_000 });
    assert.equal(await gpuPool.getAttribute('data-workers'), '1');
    assert.equal(await gpuPool.getAttribute('data-slots'), String(SLOTS));
    assert.match((await page.getByTestId(`worker-pool-${gpuWorker}`).textContent()) ?? '', /^gpu/);
    assert.equal(await page.getByTestId(`worker-labels-${gpuWorker}`).textContent(), 'gpu, region=eu');
    await screenshot(page, '42-workers-pools');
    await until('the gpu job to run on the new worker', async () => (await h.store.getRun(run.id)).state === 'succeeded', 30_000);
    // Events are written in batches, so the grant's event may come a moment after the run's end.
    const granted = await until(
      'the grant event of the gpu job',
      async () => (await h.store.listEvents({ runId: run.id, limit: 100 })).find((e) => e.type === 'lease:granted'),
      15_000,
    );
    assert.equal(granted.workerId, gpuWorker);
  });

  test('the editor warns of a pool, labels or limit no live worker or limit serves, and still lets the draft be saved', async () => {
    await page.goto(`${h.consoleUrl}/editor`);
    await page.getByTestId('palette-pool-gpu').waitFor();
    await page.getByTestId('dag-id').fill('e2e-routed');
    await page.getByTestId('palette-noop').click();
    await page.getByTestId('task-pool').fill('tpu');
    const warnings = page.getByTestId('routing-warnings');
    await until('a warning for the pool nobody serves', async () => /no live worker in pool `tpu`/.test((await warnings.textContent().catch(() => '')) ?? ''), 10_000);
    await page.getByTestId('validation-ok').waitFor();
    assert.equal(await page.getByTestId('save-dag').isDisabled(), false, 'a warning never blocks a save');

    await page.getByTestId('task-pool').fill('gpu');
    await page.getByTestId('task-labels').fill('region=us');
    await until(
      'a warning for the missing label',
      async () => /no live worker in pool `gpu` has labels region=us/.test((await warnings.textContent().catch(() => '')) ?? ''),
      10_000,
    );
    await page.getByTestId('task-labels').fill('region=eu');
    await until('no warning once a live worker fits', async () => (await page.getByTestId('routing-warning').count()) === 0, 10_000);

    await page.getByTestId('task-resources').fill('warehouse=5');
    await until('a warning for a limit too small', async () => /limit `warehouse` has only 1 units/.test((await warnings.textContent().catch(() => '')) ?? ''), 10_000);
    await page.getByTestId('task-resources').fill('warehouse=1');
    await until('no warning once the units fit', async () => (await page.getByTestId('routing-warning').count()) === 0, 10_000);
    await screenshot(page, '43-editor-routing');
    await page.getByTestId('save-dag').click();
    await page.getByTestId('save-result').waitFor();
    const saved = await until('the saved DAG', async () => (await h.store.getDag(parseDagId('e2e-routed')).catch(() => null)) ?? null, 10_000);
    assert.deepEqual(
      saved.spec.tasks.map((t) => [t.pool, t.labels, t.resources]),
      [['gpu', ['region=eu'], { warehouse: 1 }]],
    );
  });
});
