import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseDagId } from '@fenceline/core';
import { SHARDS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * A parameterised trigger in real Chromium against a real cluster: the form is made from
 * the DAG's declaration, a bad value shows its field's error and queues nothing, and a good
 * one queues a run whose page shows its params. Selectors are data-testid.
 */

let h: Harness;
let page: Page;
const DAG = 'e2e-params';

before(async () => {
  h = await startHarness();
  await h.store.putDag(
    {
      id: DAG,
      params: {
        region: { type: 'string', enum: ['eu', 'us'], default: 'eu', description: 'Where the data lives' },
        batch: { type: 'integer', required: true },
        dryRun: { type: 'boolean', default: false },
      },
      tasks: [{ id: 'only', type: 'noop' }],
    },
    SHARDS,
  );
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

const runCount = async () => (await h.store.listRuns({ dagId: parseDagId(DAG), limit: 10 })).length;

describe('trigger with params', () => {
  test('the form comes from the declaration; a bad value shows its error, a good one makes a run that shows its params', async () => {
    await page.goto(`${h.consoleUrl}/dags/${DAG}`);
    await page.getByTestId('trigger-run').click();
    const form = page.getByTestId('trigger-form');
    await form.waitFor();
    // One field per declared parameter, of its kind, starting at its default.
    assert.equal(await page.getByTestId('param-region').evaluate((el) => el.tagName), 'SELECT');
    assert.equal(await page.getByTestId('param-region').inputValue(), 'eu');
    assert.equal(await page.getByTestId('param-dryRun').getAttribute('type'), 'checkbox');
    assert.equal(await page.getByTestId('param-batch').inputValue(), '');

    await page.getByTestId('param-batch').fill('lots');
    await page.getByTestId('trigger-submit').click();
    const error = page.getByTestId('param-error-batch');
    await error.waitFor();
    assert.equal(await error.textContent(), 'must be an integer, got "lots"');
    await screenshot(page, 'trigger-params-refused');
    assert.equal(await runCount(), 0, 'a refused trigger queues nothing');

    await page.getByTestId('param-batch').fill('25');
    await page.getByTestId('param-region').selectOption('us');
    await page.getByTestId('param-dryRun').check();
    await page.getByTestId('trigger-submit').click();
    await until('a run', async () => (await runCount()) === 1);
    await until('the form to close', async () => (await form.count()) === 0);
    const [run] = await h.store.listRuns({ dagId: parseDagId(DAG), limit: 1 });
    assert.deepEqual(run!.params, { batch: 25, dryRun: true, region: 'us' });

    await page.goto(`${h.consoleUrl}/runs/${run!.id}`);
    await page.getByTestId('run-params').waitFor();
    assert.equal(await page.getByTestId('run-param-batch').textContent(), '25');
    assert.equal(await page.getByTestId('run-param-region').textContent(), '"us"');
    assert.equal(await page.getByTestId('run-param-dryRun').textContent(), 'true');
    await until('the run to succeed', async () => (await page.getByTestId('run-state').getAttribute('data-state')) === 'succeeded', 45_000);
    await screenshot(page, 'trigger-params-run');
  });
});
