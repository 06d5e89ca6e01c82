import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseDagId, type RunRow } from '@fenceline/core';
import { SHARDS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * The Runs page in real Chromium against a real cluster: its filters and order live in the
 * URL, its pages follow the store's cursor (no run twice, none missed), the overview's
 * failed counter opens it filtered, and a DAG page pages its own runs.
 */

let h: Harness;
let page: Page;

const OK_DAG = 'e2e-list-ok';
const BAD_DAG = 'e2e-list-bad';
const OK_RUNS = 23;
const BAD_RUNS = 3;
const TAIL_DAG = 'e2e-tail';

/** The ids of the rows of a table, in the order shown. */
async function shownIds(p: Page, testId: string): Promise<string[]> {
  const ids = await p
    .getByTestId(testId)
    .locator('[data-testid^="run-row-"]')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-testid')!.slice('run-row-'.length)));
  return ids;
}

/** Waits until the table shows exactly these runs, in this order. */
async function untilShown(p: Page, testId: string, ids: string[]): Promise<void> {
  await until(`the table to show ${ids.join(', ')}`, async () => JSON.stringify(await shownIds(p, testId)) === JSON.stringify(ids), 20_000);
}

async function terminalRuns(dagId: string): Promise<RunRow[]> {
  return (await h.store.listRuns({ dagId: parseDagId(dagId), limit: 100 })).filter((r) => r.state === 'succeeded' || r.state === 'failed');
}

before(async () => {
  h = await startHarness();
  await h.store.putDag({ id: OK_DAG, tasks: [{ id: 'one', type: 'noop' }] }, SHARDS);
  // Port 1 refuses the connection: every run of this DAG fails at its only attempt.
  await h.store.putDag({ id: BAD_DAG, tasks: [{ id: 'call', type: 'http', config: { url: 'http://127.0.0.1:1/' }, retries: 0 }] }, SHARDS);
  for (let i = 0; i < OK_RUNS; i++) await h.store.triggerRun(parseDagId(OK_DAG));
  for (let i = 0; i < BAD_RUNS; i++) await h.store.triggerRun(parseDagId(BAD_DAG));
  await until('every run to end', async () => (await terminalRuns(OK_DAG)).length === OK_RUNS && (await terminalRuns(BAD_DAG)).length === BAD_RUNS, 90_000);
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('runs list', () => {
  test('runs list: filters go into the URL, survive a reload, and show only matching runs', async () => {
    await page.goto(`${h.consoleUrl}/runs`);
    await page.getByTestId('runs-table').waitFor({ timeout: 60_000 });
    await page.getByTestId('filter-state').selectOption('failed');
    await page.getByTestId('filter-apply').click();
    await page.waitForURL(/[?&]state=failed/);
    const failed = (await terminalRuns(BAD_DAG)).filter((r) => r.state === 'failed');
    assert.equal(failed.length, BAD_RUNS);
    await untilShown(
      page,
      'runs-table',
      failed.map((r) => r.id),
    );
    await page.reload();
    await untilShown(
      page,
      'runs-table',
      failed.map((r) => r.id),
    );
    assert.equal(await page.getByTestId('filter-state').inputValue(), 'failed');
    // A DAG and a trigger together; a trigger no run has shows none.
    await page.goto(`${h.consoleUrl}/runs?dag=${OK_DAG}&trigger=manual&state=succeeded&limit=100`);
    await until('every run of the DAG', async () => (await shownIds(page, 'runs-table')).length === OK_RUNS, 20_000);
    assert.equal(await page.getByTestId('filter-dag').inputValue(), OK_DAG);
    await page.goto(`${h.consoleUrl}/runs?trigger=backfill`);
    await page.getByText('No runs match.').waitFor();
    // A hand-edited parameter is answered with what is wrong with it.
    await page.goto(`${h.consoleUrl}/runs?state=done`);
    await page.getByTestId('api-error').waitFor();
    assert.match((await page.getByTestId('api-error').textContent()) ?? '', /state: must be one of/);
    await screenshot(page, 'runs-list-01-bad-filter');
  });

  test('runs list: next and previous pages walk every run once, in either order', async () => {
    const all = [...(await terminalRuns(OK_DAG))].sort((a, b) => b.scheduledAt.getTime() - a.scheduledAt.getTime() || Number(b.id) - Number(a.id));
    await page.goto(`${h.consoleUrl}/runs?dag=${OK_DAG}&limit=10`);
    const pages: string[][] = [];
    await untilShown(
      page,
      'runs-table',
      all.slice(0, 10).map((r) => r.id),
    );
    for (;;) {
      pages.push(await shownIds(page, 'runs-table'));
      const next = page.getByTestId('runs-pager-next');
      if ((await next.getAttribute('data-disabled')) === 'true') break;
      const before = page.url();
      await next.click();
      await page.waitForURL((url) => url.toString() !== before && url.searchParams.has('cursor'));
      await until('the next page', async () => {
        const ids = await shownIds(page, 'runs-table');
        return ids.length > 0 && ids[0] !== pages.at(-1)![0];
      });
    }
    assert.deepEqual(
      pages.map((p) => p.length),
      [10, 10, 3],
    );
    assert.deepEqual(
      pages.flat(),
      all.map((r) => r.id),
      'every run once, newest first',
    );
    assert.match(page.url(), /dag=e2e-list-ok/, 'the filter stays with the pages');
    await screenshot(page, 'runs-list-02-last-page');
    // Back to the first page by previous links.
    for (let i = pages.length - 2; i >= 0; i--) {
      await page.getByTestId('runs-pager-prev').click();
      await untilShown(page, 'runs-table', pages[i]!);
    }
    assert.equal(await page.getByTestId('runs-pager-prev').getAttribute('data-disabled'), 'true');
    // Oldest first from the column's header.
    await page.getByTestId('sort-scheduled').click();
    await page.waitForURL(/order=oldest/);
    await untilShown(
      page,
      'runs-table',
      [...all]
        .reverse()
        .slice(0, 10)
        .map((r) => r.id),
    );
  });

  test('runs list: the overview’s failed counter opens the runs list filtered to failed runs', async () => {
    await page.goto(`${h.consoleUrl}/`);
    await page.getByTestId('failed-runs-link').click();
    await page.waitForURL(/\/runs\?.*state=failed/);
    const url = new URL(page.url());
    assert.ok(Date.parse(url.searchParams.get('from')!) > Date.now() - 2 * 3_600_000, 'from is an hour before store time');
    await untilShown(
      page,
      'runs-table',
      (await terminalRuns(BAD_DAG)).map((r) => r.id),
    );
  });

  test('runs list: the job panel tails a running job’s log live, and downloads it', async () => {
    await h.store.putDag({ id: TAIL_DAG, tasks: [{ id: 'tick', type: 'ticker', config: { lines: 40, everyMs: 250 } }] }, SHARDS);
    const run = await h.store.triggerRun(parseDagId(TAIL_DAG));
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    await page.getByTestId('gantt-row-tick').click({ timeout: 30_000 });
    const tail = page.getByTestId('live-log-text');
    await until('the first ticks in the live log', async () => /tick 2 of 40/.test((await tail.textContent()) ?? ''), 20_000);
    // The job is still running: the tail grows while it does.
    const [job] = await h.store.listJobs(run.id);
    assert.equal(job!.state, 'leased');
    const before = ((await tail.textContent()) ?? '').split('\n').length;
    await until('more ticks', async () => ((await tail.textContent()) ?? '').split('\n').length > before + 2, 20_000);
    await screenshot(page, 'runs-list-03-live-log');
    // The download so far is a file of the lines streamed.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('live-log-download').click()]);
    assert.match(download.suggestedFilename(), /^job-\d+-fence-\d+-so-far\.log$/);
    // Once the job ends its log is its attempt's, listed with a download of its own.
    await until('the run to succeed', async () => (await page.getByTestId('run-state').getAttribute('data-state')) === 'succeeded', 30_000);
    const fence = (await h.store.getJob(job!.id)).fence;
    await until('the attempt’s whole log', async () => /tick 40 of 40/.test((await page.getByTestId(`attempt-log-${fence}`).textContent()) ?? ''), 20_000);
    const [whole] = await Promise.all([page.waitForEvent('download'), page.getByTestId(`attempt-download-${fence}`).click()]);
    assert.equal(whole.suggestedFilename(), `job-${job!.id}-fence-${fence}.log`);
  });

  test('runs list: a DAG page pages its runs by cursor in its URL', async () => {
    const all = (await h.store.pageRuns({ dagId: parseDagId(OK_DAG), limit: 100 })).rows.map((r) => r.id);
    await page.goto(`${h.consoleUrl}/dags/${OK_DAG}`);
    await untilShown(page, 'run-history', all.slice(0, 20));
    await page.getByTestId('dag-runs-pager-next').click();
    await page.waitForURL(/runs\.cursor=/);
    await untilShown(page, 'run-history', all.slice(20));
    await page.reload();
    await untilShown(page, 'run-history', all.slice(20));
    await page.getByTestId('dag-runs-pager-prev').click();
    await untilShown(page, 'run-history', all.slice(0, 20));
  });
});
