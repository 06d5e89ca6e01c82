import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { SHARDS, SLOTS, WORKERS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';
import { parseDagId } from '@fenceline/core';

/**
 * The run page's timeline, its not-found answer, and the workers page, in real Chromium
 * against a real cluster. Selectors are data-testid, never text or CSS structure.
 */

let h: Harness;
let page: Page;
let flakyServer: Server;
let flakyPort = 0;

const BACKOFF_MS = 1500;
const RETRY_DAG = 'e2e-retry';
const LONG_DAG = 'e2e-workers-page-with-a-rather-long-dag-identifier';
const LONG_TASK = 'transform-customer-orders-into-the-daily-summary-table';

/** Fails the first request to each path with a 500, then answers 200: a service that recovers. */
function startFlakyServer(): Promise<number> {
  const seen = new Set<string>();
  flakyServer = createServer((req, res) => {
    const first = !seen.has(req.url ?? '');
    seen.add(req.url ?? '');
    res.statusCode = first ? 500 : 200;
    res.end(first ? 'not yet' : 'ok');
  });
  return new Promise((resolve) => flakyServer.listen(0, '127.0.0.1', () => resolve((flakyServer.address() as AddressInfo).port)));
}

/** The page shows no raw validation answer (JSON of issues) anywhere. */
async function assertNoRawJson(p: Page): Promise<void> {
  const text = (await p.locator('main, body').first().textContent()) ?? '';
  assert.ok(!/\[\s*\{|"code"\s*:|"path"\s*:/.test(text), `no JSON on the page: ${text.slice(0, 300)}`);
}

async function segments(row: Locator): Promise<{ kind: string; cls: string; fromMs: number; toMs: number; width: number }[]> {
  return row.getByTestId('gantt-seg').evaluateAll((els) =>
    els.map((el) => ({
      kind: el.getAttribute('data-kind') ?? '',
      cls: el.className,
      fromMs: Number(el.getAttribute('data-from-ms')),
      toMs: Number(el.getAttribute('data-to-ms')),
      width: el.getBoundingClientRect().width,
    })),
  );
}

before(async () => {
  h = await startHarness();
  flakyPort = await startFlakyServer();
  await h.store.putDag(
    {
      id: RETRY_DAG,
      tasks: [
        { id: 'prepare', type: 'noop' },
        { id: 'call-service', type: 'http', config: { url: `http://127.0.0.1:${flakyPort}/hook` }, dependsOn: ['prepare'], retries: 2, retryBackoffMs: BACKOFF_MS },
        { id: 'report', type: 'noop', dependsOn: ['call-service'] },
      ],
    },
    SHARDS,
  );
  await h.store.putDag({ id: LONG_DAG, tasks: [{ id: LONG_TASK, type: 'sleep', config: { durationMs: 120_000 } }] }, SHARDS);
  page = await signedInPage(h);
});

after(async () => {
  await new Promise((r) => flakyServer?.close(r));
  await h?.stop();
});

describe('runs and workers pages', () => {
  test('a run id or DAG id that cannot exist gets the same "no such" page as an unknown one, not a validation error', async () => {
    for (const [path, what] of [
      ['/runs/abc', 'run'],
      [`/dags/${'x'.repeat(300)}`, 'DAG'],
    ] as const) {
      await page.goto(`${h.consoleUrl}${path}`);
      const notFound = page.getByTestId('not-found');
      await notFound.waitFor({ timeout: 60_000 });
      assert.equal(await notFound.getAttribute('data-code'), 'NOT_FOUND', `${path}: the ${what} does not exist`);
      assert.equal(await page.getByTestId('api-error').count(), 0, `${path}: no error box beside it`);
      await assertNoRawJson(page);
    }
    await screenshot(page, 'runs-01-run-abc');
  });

  test('the timeline draws a failed attempt, its backoff and the retry at the store times, and the earlier error is said to be earlier', async () => {
    const run = await h.store.triggerRun(parseDagId(RETRY_DAG));
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    await until('the run to succeed', async () => (await page.getByTestId('run-state').getAttribute('data-state')) === 'succeeded', 60_000);
    const row = page.getByTestId('gantt-row-call-service');
    // Events are written a flush after they happen: wait until both attempts are drawn.
    await until('both attempts on the timeline', async () => (await segments(row)).filter((s) => s.kind === 'attempt').length === 2, 15_000);
    const segs = await segments(row);
    assert.deepEqual(
      segs.map((s) => s.kind),
      ['dependencies', 'ready', 'attempt', 'backoff', 'ready', 'attempt'],
    );
    const [, , failed, backoff, , retried] = segs as [never, never, (typeof segs)[0], (typeof segs)[0], never, (typeof segs)[0]];
    assert.match(failed.cls, /outcome-retrying/);
    assert.match(retried.cls, /outcome-succeeded/);
    assert.ok(failed.width >= 1, `the failed attempt is drawn with a width (${failed.width} px)`);
    assert.equal(backoff.toMs - backoff.fromMs, BACKOFF_MS, 'the backoff lasts the spec’s retryBackoffMs');
    // Its drawn width is its share of the axis, within a pixel.
    const gantt = page.getByTestId('gantt');
    const span = Number(await gantt.getAttribute('data-end-ms')) - Number(await gantt.getAttribute('data-start-ms'));
    const trackWidth = (await row.locator('.gantt-track').boundingBox())!.width;
    assert.ok(
      Math.abs(backoff.width - (BACKOFF_MS / span) * trackWidth) <= 1,
      `backoff drawn ${backoff.width.toFixed(1)} px of ${trackWidth.toFixed(0)} for ${BACKOFF_MS} of ${span} ms`,
    );

    // The bars sit at the times the store wrote in the jobs' rows.
    const jobs = new Map((await h.store.listJobs(run.id)).map((j) => [j.taskId, j]));
    const flaky = jobs.get('call-service')!;
    assert.equal(retried.fromMs, flaky.leasedAt!.getTime(), 'the retry starts at the lease the store granted');
    assert.equal(retried.toMs, flaky.endedAt!.getTime(), 'and ends when the store recorded its result');
    assert.equal(failed.toMs, backoff.fromMs);
    assert.equal(backoff.fromMs, flaky.readyAt!.getTime(), 'the failed attempt ends when the store made the job ready again');
    const report = await segments(page.getByTestId('gantt-row-report'));
    assert.equal(report[0]!.kind, 'dependencies');
    assert.ok(report[0]!.toMs >= flaky.endedAt!.getTime(), 'report is ready only once its upstream has ended');
    await screenshot(page, 'runs-02-timeline-retry');

    // The succeeded job's last error belongs to attempt 1, and is not shown as the job's error.
    await row.click();
    const detail = page.getByTestId('job-detail');
    const note = detail.getByTestId('earlier-error');
    await note.waitFor();
    const noteText = (await note.textContent()) ?? '';
    assert.match(noteText, /Attempt 1 failed and was retried/);
    assert.match(noteText, /the job has since succeeded/);
    assert.match(noteText, /answered 500/);
    assert.equal(await detail.locator('.error-box').count(), 0, 'no error box for a job that succeeded');
    await screenshot(page, 'runs-03-earlier-error');
  });

  test('workers page: each worker says what it runs, job names stay on one line, and counts read in the singular for one', async () => {
    const run = await h.store.triggerRun(parseDagId(LONG_DAG));
    const [job] = await until(
      'the long job to be leased',
      async () => {
        const jobs = await h.store.listJobs(run.id);
        return jobs[0]?.state === 'leased' ? jobs : null;
      },
      30_000,
    );
    await page.goto(`${h.consoleUrl}/workers`);
    const link = page.getByTestId(`worker-job-${job!.id}`);
    await link.waitFor({ timeout: 30_000 });
    assert.equal(await link.getAttribute('title'), `${LONG_DAG} / ${LONG_TASK}`, 'the full name is in the tooltip');
    // Each part of the name is one line, cut short with an ellipsis when it does not fit.
    for (const part of ['.job-task', '.job-dag']) {
      const lines = await link.locator(part).evaluate((el) => {
        const style = getComputedStyle(el);
        return el.getBoundingClientRect().height / Number.parseFloat(style.lineHeight || '0') || el.getClientRects().length;
      });
      assert.ok(lines < 1.5, `${part} takes ${lines.toFixed(2)} lines`);
    }
    const holder = job!.holder!;
    assert.equal(await page.getByTestId(`worker-running-${holder}`).textContent(), '1 job');
    const idle = [1, 2, 3].map((i) => `worker-${i}`).find((id) => id !== holder)!;
    assert.equal(await page.getByTestId(`worker-running-${idle}`).textContent(), 'nothing: idle');
    const subtitle = (await page.locator('.subtitle').first().textContent()) ?? '';
    assert.match(subtitle, new RegExp(`${WORKERS} live · ${WORKERS * SLOTS} slots · 1 job running`));
    await screenshot(page, 'runs-04-workers');

    await page.goto(`${h.consoleUrl}/`);
    await until('the overview to count one active run', async () => /· 1 active run ·/.test((await page.locator('.subtitle').first().textContent()) ?? ''), 15_000);
    await page.goto(`${h.consoleUrl}/dags`);
    await page.getByTestId('dag-search').fill('e2e-workers-page');
    await until('one DAG matching', async () => /^1 DAG matching/.test((await page.getByTestId('dag-list-total').textContent()) ?? ''), 15_000);
    await screenshot(page, 'runs-05-one-dag');
  });
});
