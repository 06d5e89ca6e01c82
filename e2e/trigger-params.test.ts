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
/** Gaps between a user's two clicks on "Trigger run": a double click, quick ones, impatient ones after the answer. */
const CLICK_GAPS_MS = [0, 60, 130, 300, 1_000, 3_000];
const onceDag = (gapMs: number) => `e2e-once-${gapMs}`;
/** Gaps between two clicks on the params form's "Queue the run". */
const SUBMIT_GAPS_MS = [0, 130, 300, 1_000];
const formDag = (gapMs: number) => `e2e-form-once-${gapMs}`;
const SLOW_DAG = 'e2e-form-slow';
/** The console's window after an answer in which a click repeats the last trigger (KEY_KEPT_MS). */
const KEY_KEPT_MS = 10_000;

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
  for (const gap of CLICK_GAPS_MS) await h.store.putDag({ id: onceDag(gap), schedule: { kind: 'manual' }, tasks: [{ id: 'only', type: 'noop' }] }, SHARDS);
  for (const id of [...SUBMIT_GAPS_MS.map(formDag), SLOW_DAG]) {
    await h.store.putDag({ id, schedule: { kind: 'manual' }, params: { batch: { type: 'integer', default: 1 } }, tasks: [{ id: 'only', type: 'noop' }] }, SHARDS);
  }
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

const runCount = async (dag = DAG) => (await h.store.listRuns({ dagId: parseDagId(dag), limit: 10 })).length;

/**
 * Clicks "Trigger run" with the real mouse: twice `gapMs` apart (a double click when 0), and
 * returns once every trigger request the clicks sent has been answered, with their run ids.
 */
async function clickTrigger(p: Page, gapMs: number | null, testId = 'trigger-run'): Promise<string[]> {
  const sent: string[] = [];
  const answered: string[] = [];
  const onRequest = (r: { url(): string }) => {
    if (r.url().includes('dags.trigger')) sent.push(r.url());
  };
  const onResponse = async (r: { url(): string; json(): Promise<unknown> }) => {
    if (!r.url().includes('dags.trigger')) return;
    const body = (await r.json().catch(() => null)) as { result?: { data?: { json?: { id?: string } } } }[] | null;
    answered.push(body?.[0]?.result?.data?.json?.id ?? 'refused');
  };
  p.on('request', onRequest);
  p.on('response', onResponse);
  try {
    const box = (await p.getByTestId(testId).boundingBox())!;
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    if (gapMs === 0) await p.mouse.dblclick(x, y);
    else {
      await p.mouse.click(x, y);
      if (gapMs !== null) {
        // The gap is what is under test: the second click lands this long after the first.
        await new Promise((r) => setTimeout(r, gapMs));
        await p.mouse.click(x, y);
      }
    }
    await until('every trigger request to be answered', async () => sent.length > 0 && answered.length === sent.length, 30_000);
    return answered;
  } finally {
    p.off('request', onRequest);
    p.off('response', onResponse);
  }
}

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

describe('one click, one run', () => {
  for (const gap of CLICK_GAPS_MS) {
    test(`two clicks on Trigger run ${gap === 0 ? 'as a double click' : `${gap} ms apart`} queue one run`, async () => {
      const dag = onceDag(gap);
      await page.goto(`${h.consoleUrl}/dags/${dag}`);
      await page.getByTestId('trigger-run').waitFor();
      const answers = await clickTrigger(page, gap);
      assert.ok(
        answers.every((id) => id === answers[0] && id !== 'refused'),
        `every answer names one run: ${answers.join(', ')}`,
      );
      assert.equal(await runCount(dag), 1, `clicks ${gap} ms apart queued ${await runCount(dag)} runs`);
      await page.getByTestId('trigger-status').waitFor();
      assert.match((await page.getByTestId('trigger-status').textContent()) ?? '', new RegExp(`run #${answers[0]}`));
    });
  }

  test('a click after the window queues a new run, so the clicks above were told apart from separate triggers', async () => {
    const dag = onceDag(CLICK_GAPS_MS.at(-1)!);
    assert.equal(await runCount(dag), 1);
    const [first] = (await h.store.listRuns({ dagId: parseDagId(dag), limit: 1 })).map((r) => r.id);
    // The window runs from the last answer, which the test above waited for; this waits it out.
    await new Promise((r) => setTimeout(r, KEY_KEPT_MS + 500));
    const [second] = await clickTrigger(page, null);
    assert.notEqual(second, first);
    await until('a second run', async () => (await runCount(dag)) === 2);
  });
});

describe('one click, one run: the params form', () => {
  for (const gap of SUBMIT_GAPS_MS) {
    test(`two clicks on the form's submit ${gap === 0 ? 'as a double click' : `${gap} ms apart`} queue one run`, async () => {
      const dag = formDag(gap);
      await page.goto(`${h.consoleUrl}/dags/${dag}`);
      await page.getByTestId('trigger-run').click();
      await page.getByTestId('trigger-form').waitFor();
      // The second click lands where the button was, whether or not the answer has closed the form.
      const answers = await clickTrigger(page, gap, 'trigger-submit');
      assert.ok(
        answers.every((id) => id === answers[0] && id !== 'refused'),
        `every answer names one run: ${answers.join(', ')}`,
      );
      assert.equal(await runCount(dag), 1, `clicks ${gap} ms apart queued ${await runCount(dag)} runs`);
    });
  }

  test('the submit button is disabled while its request is out, and the held request queues one run', async () => {
    await page.goto(`${h.consoleUrl}/dags/${SLOW_DAG}`);
    await page.getByTestId('trigger-run').click();
    await page.getByTestId('trigger-form').waitFor();
    // The trigger request is held at the browser until the test lets it go.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived = 0;
    const isTrigger = (url: URL) => url.pathname.includes('dags.trigger');
    await page.route(isTrigger, async (route) => {
      arrived += 1;
      await held;
      await route.continue();
    });
    try {
      const submit = page.getByTestId('trigger-submit');
      await submit.click();
      await until('the request to be out', async () => arrived === 1, 10_000);
      assert.equal(await submit.isDisabled(), true, 'the submit button is disabled while the request is out');
      assert.equal(await page.getByTestId('trigger-run').isDisabled(), true, 'so is Trigger run');
      // A click on a disabled button sends nothing.
      await submit.click({ force: true });
      assert.equal(arrived, 1);
      release();
      await until('a run', async () => (await runCount(SLOW_DAG)) === 1, 30_000);
      await until('the form to close', async () => (await page.getByTestId('trigger-form').count()) === 0, 10_000);
      assert.equal(arrived, 1, 'one request in all');
    } finally {
      release();
      await page.unroute(isTrigger);
    }
  });
});
