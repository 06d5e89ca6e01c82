import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseDagId, parseRunId } from '@fenceline/core';
import { SHARDS, VIEWER, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * Operator actions on the run page, in real Chromium against a real cluster: cancel a
 * running run, retry a failed one from its failure, clear a task, and what a viewer sees.
 * Selectors are data-testid, never text or CSS structure.
 */

let h: Harness;
let page: Page;
let server: Server;
let failing = true;

const CANCEL_DAG = 'e2e-cancel';
const RETRY_DAG = 'e2e-retry-from-failure';
/** A one-task DAG whose task fails while the service does: a failed run to retry, as often as needed. */
const ONCE_DAG = 'e2e-retry-once';
/** Gaps between a user's two clicks on "Retry from failure". */
const CLICK_GAPS_MS = [0, 130, 300, 1_000];

/** Answers 500 while `failing`, then 200: a service that an operator repaired. */
function startServer(): Promise<number> {
  server = createServer((_req, res) => {
    res.statusCode = failing ? 500 : 200;
    res.end(failing ? 'down for maintenance' : 'ok');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

async function runState(p: Page): Promise<string | null> {
  return p.getByTestId('run-state').getAttribute('data-state');
}

before(async () => {
  h = await startHarness();
  const port = await startServer();
  await h.store.putDag(
    {
      id: CANCEL_DAG,
      tasks: [
        { id: 'long', type: 'sleep', config: { durationMs: 300_000 } },
        { id: 'after', type: 'noop', dependsOn: ['long'] },
      ],
    },
    SHARDS,
  );
  await h.store.putDag(
    {
      id: RETRY_DAG,
      tasks: [
        { id: 'extract', type: 'noop' },
        { id: 'load', type: 'http', config: { url: `http://127.0.0.1:${port}/load` }, dependsOn: ['extract'] },
        { id: 'report', type: 'noop', dependsOn: ['load'] },
      ],
    },
    SHARDS,
  );
  await h.store.putDag({ id: ONCE_DAG, tasks: [{ id: 'load', type: 'http', config: { url: `http://127.0.0.1:${port}/load` } }] }, SHARDS);
  page = await signedInPage(h);
  page.on('dialog', (d) => void d.accept());
});

/** A run of ONCE_DAG that failed, open on the page with its Retry from failure button enabled. */
async function failedRunOpen(p: Page): Promise<string> {
  failing = true;
  const run = await h.store.triggerRun(parseDagId(ONCE_DAG));
  await until('the run to fail', async () => (await h.store.getRun(run.id)).state === 'failed', 60_000);
  await p.goto(`${h.consoleUrl}/runs/${run.id}`);
  await until('Retry from failure to be enabled', async () => (await p.getByTestId('retry-failed').count()) === 1 && !(await p.getByTestId('retry-failed').isDisabled()), 30_000);
  return run.id;
}

/**
 * Clicks "Retry from failure" with the real mouse, twice `gapMs` apart (a double click when
 * 0), and returns once every action request the clicks sent has been answered, with the
 * action ids of the answers.
 */
async function clickRetry(p: Page, gapMs: number): Promise<string[]> {
  const sent: string[] = [];
  const answered: string[] = [];
  const isRequest = (url: string) => url.includes('runActions.request');
  const onRequest = (r: { url(): string }) => {
    if (isRequest(r.url())) sent.push(r.url());
  };
  const onResponse = async (r: { url(): string; json(): Promise<unknown> }) => {
    if (!isRequest(r.url())) return;
    const body = (await r.json().catch(() => null)) as { result?: { data?: { json?: { id?: string } } } }[] | null;
    answered.push(body?.[0]?.result?.data?.json?.id ?? 'refused');
  };
  p.on('request', onRequest);
  p.on('response', onResponse);
  try {
    const box = (await p.getByTestId('retry-failed').boundingBox())!;
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    if (gapMs === 0) await p.mouse.dblclick(x, y);
    else {
      await p.mouse.click(x, y);
      // The gap is what is under test: the second click lands this long after the first.
      await new Promise((r) => setTimeout(r, gapMs));
      await p.mouse.click(x, y);
    }
    await until('every action request to be answered', async () => sent.length > 0 && answered.length === sent.length, 30_000);
    return answered;
  } finally {
    p.off('request', onRequest);
    p.off('response', onResponse);
  }
}

after(async () => {
  await new Promise((r) => server?.close(r));
  await h?.stop();
});

describe('operator actions on the run page', () => {
  test('cancel stops a running run: its jobs end cancelled and the lease is revoked', async () => {
    const run = await h.store.triggerRun(parseDagId(CANCEL_DAG));
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    await until('the sleep job to be leased', async () => (await h.store.listJobs(run.id)).some((j) => j.state === 'leased'), 60_000);
    const before = (await h.store.listJobs(run.id)).find((j) => j.taskId === 'long')!;
    await page.getByTestId('cancel-run').click();
    await until('the run page to show the run cancelled', async () => (await runState(page)) === 'cancelled', 30_000);
    // The page follows the action until its leader applied it, and says what changed.
    await until(
      'the action to be shown applied',
      async () => /cancel applied: 2 tasks changed; run is cancelled/.test((await page.getByTestId('action-status').textContent()) ?? ''),
      15_000,
    );
    const jobs = await h.store.listJobs(run.id);
    assert.deepEqual(
      jobs.map((j) => j.state),
      ['cancelled', 'cancelled'],
    );
    assert.equal(jobs.find((j) => j.taskId === 'long')!.fence, before.fence + 1, 'the revoked lease has a higher fence');
    assert.equal(await page.getByTestId('cancel-run').isDisabled(), true, 'a cancelled run cannot be cancelled again from the page');
    const audit = await h.store.listAudit({ action: 'run.action_requested', limit: 20 });
    assert.ok(
      audit.some((a) => a.target === run.id),
      'the request is in the audit log',
    );
    await screenshot(page, 'run-actions-01-cancelled');
  });

  test('retry from failure reruns the failed task and its downstream once the service is back', async () => {
    failing = true;
    const run = await h.store.triggerRun(parseDagId(RETRY_DAG));
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    await until('the run to fail', async () => (await runState(page)) === 'failed', 60_000);
    failing = false;
    await page.getByTestId('retry-failed').click();
    await until('the retried run to succeed', async () => (await runState(page)) === 'succeeded', 60_000);
    const jobs = await h.store.listJobs(run.id);
    assert.deepEqual(
      jobs.map((j) => [j.taskId, j.state]),
      [
        ['extract', 'succeeded'],
        ['load', 'succeeded'],
        ['report', 'succeeded'],
      ],
    );
    await page.getByTestId('action-history').locator('..').locator('summary').click();
    await until(
      'the history to show the retry applied',
      async () => /retry failed by e2e-operator · 2 changed/.test((await page.getByTestId('action-history').textContent()) ?? ''),
      15_000,
    );
    await screenshot(page, 'run-actions-02-retried');

    // The retried task's attempts are numbered through its whole life, apart from its retry
    // budget, which the retry reset; the table says where the retry fell and who asked for it.
    await page.getByTestId('gantt-row-load').click();
    const attemptsCell = page.getByTestId('job-attempts');
    await until('the attempts after the retry to be counted', async () => Number(await attemptsCell.getAttribute('data-seen')) >= 2, 20_000);
    const seen = Number(await attemptsCell.getAttribute('data-seen'));
    const budget = Number(await attemptsCell.getAttribute('data-budget'));
    assert.ok(budget < seen, `the budget (${budget}) restarted below the attempts seen (${seen})`);
    assert.match((await attemptsCell.textContent()) ?? '', new RegExp(`^${seen} in all; retry budget ${budget} of \\d+ since the retry from failure by e2e-operator$`));
    for (let n = 1; n <= seen; n++) await page.getByTestId(`attempt-row-${n}`).waitFor();
    assert.equal(await page.getByTestId(`attempt-row-${seen + 1}`).count(), 0);
    assert.match((await page.getByTestId('attempt-clear').textContent()) ?? '', /Retry from failure by e2e-operator/);
    await until('the last attempt’s log to be listed', async () => (await page.getByTestId('attempt-logs').locator('summary').count()) >= 2, 20_000);
    const headers = await page.getByTestId('attempt-logs').locator('summary').allTextContents();
    const numbers = headers.map((t) => Number(/^attempt (\d+)/.exec(t)?.[1]));
    assert.equal(new Set(numbers).size, numbers.length, `each attempt's log has its own number: ${headers.join(' | ')}`);
    assert.equal(numbers.at(-1), seen, 'the last log is the last attempt');

    // Clear one finished task from its panel: it runs again, and the run ends succeeded again.
    await page.getByTestId('gantt-row-report').click();
    await page.getByTestId('clear-task').click();
    await until(
      'the clear to be applied',
      async () => /clear applied: 1 task changed/.test((await page.getByTestId('job-actions').getByTestId('action-status').textContent()) ?? ''),
      30_000,
    );
    await until('the cleared run to succeed again', async () => (await h.store.getRun(run.id)).state === 'succeeded', 60_000);
    const report = (await h.store.listJobs(run.id)).find((j) => j.taskId === 'report')!;
    assert.ok(report.fence > jobs.find((j) => j.taskId === 'report')!.fence, 'the cleared task ran under a higher fence');
  });

  test('a viewer sees the run but no action buttons', async () => {
    const viewer = await signedInPage(h, VIEWER);
    const [run] = await h.store.listRuns({ dagId: parseDagId(RETRY_DAG), limit: 1 });
    await viewer.goto(`${h.consoleUrl}/runs/${run!.id}`);
    await viewer.getByTestId('run-actions').waitFor();
    assert.equal(await viewer.getByTestId('cancel-run').count(), 0);
    assert.equal(await viewer.getByTestId('retry-failed').count(), 0);
    await viewer.getByTestId('gantt-row-load').click();
    await viewer.getByTestId('job-detail').waitFor();
    assert.equal(await viewer.getByTestId('job-actions').count(), 0);
    await viewer.context().close();
  });
});

describe('one click, one action: Retry from failure', () => {
  for (const gap of CLICK_GAPS_MS) {
    test(`two clicks on Retry from failure ${gap === 0 ? 'as a double click' : `${gap} ms apart`} ask for one retry`, async () => {
      const runId = await failedRunOpen(page);
      const answers = await clickRetry(page, gap);
      assert.ok(
        answers.every((id) => id === answers[0] && id !== 'refused'),
        `every answer names one action: ${answers.join(', ')}`,
      );
      const retries = (await h.store.listRunActions(parseRunId(runId))).filter((a) => a.kind === 'retry_failed');
      assert.equal(retries.length, 1, `clicks ${gap} ms apart stored ${retries.length} retries`);
      assert.equal(retries[0]!.id, answers[0]);
    });
  }

  test('Retry from failure is disabled while its request is out, and the held request is one retry', async () => {
    const runId = await failedRunOpen(page);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived = 0;
    const isRequest = (url: URL) => url.pathname.includes('runActions.request');
    await page.route(isRequest, async (route) => {
      arrived += 1;
      await held;
      await route.continue();
    });
    try {
      const retry = page.getByTestId('retry-failed');
      await retry.click();
      await until('the request to be out', async () => arrived === 1, 10_000);
      assert.equal(await retry.isDisabled(), true, 'Retry from failure is disabled while the request is out');
      release();
      await until('the retry to be stored', async () => (await h.store.listRunActions(parseRunId(runId))).length === 1, 30_000);
      assert.equal(arrived, 1, 'one request in all');
    } finally {
      release();
      await page.unroute(isRequest);
    }
  });
});
