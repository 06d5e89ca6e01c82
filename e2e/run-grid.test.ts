import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseDagId, type DagSpecInput, type JobRow, type RunRow } from '@fenceline/core';
import { seedRunGrid } from '@fenceline/db/testing';
import { SHARDS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * The DAG page's grid of runs by task and the run page's duration against earlier runs, in
 * real Chromium against a real cluster: cells checked against the store's jobs, a cell
 * opening its job on the run page, the arrow keys moving between cells, each task's
 * duration line and the run's comparison with the median of the runs before it. A seeded
 * DAG of 200 tasks by 100 runs checks the grouping and that the grid stays quick.
 */

let h: Harness;
let page: Page;
const DAG = 'e2e-grid';
const WIDE = 'e2e-grid-wide';
const runs: RunRow[] = [];

function spec(load: DagSpecInput['tasks'][number]): DagSpecInput {
  return {
    id: DAG,
    schedule: { kind: 'manual' },
    tasks: [
      { id: 'extract', type: 'sleep', config: { durationMs: 50 } },
      { ...load, id: 'load', dependsOn: ['extract'] },
      { id: 'report', type: 'noop', dependsOn: ['load'] },
    ],
  };
}

/** Queues a run of the DAG as it now stands and waits for it to end in `state`. */
async function runTo(state: 'succeeded' | 'failed'): Promise<RunRow> {
  const queued = await h.store.triggerRun(parseDagId(DAG));
  const ended = await until(
    `run ${queued.id} to end`,
    async () => {
      const r = await h.store.getRun(queued.id);
      return r.endedAt ? r : null;
    },
    90_000,
  );
  assert.equal(ended.state, state, `run ${ended.id} ended ${ended.state}`);
  runs.push(ended);
  return ended;
}

const ms = (from: Date | null, to: Date | null) => (from && to ? to.getTime() - from.getTime() : null);
const near = (a: number | null, b: number | null, what: string) => assert.ok(a !== null && b !== null && Math.abs(a - b) <= 2, `${what}: ${a} against ${b}`);

before(async () => {
  h = await startHarness();
  await h.store.putDag(spec({ id: 'load', type: 'sleep', config: { durationMs: 100 } }), SHARDS);
  await runTo('succeeded');
  await runTo('succeeded');
  await h.store.putDag(spec({ id: 'load', type: 'flaky', config: { succeedOnAttempt: 99 }, retries: 0 }), SHARDS);
  await runTo('failed');
  await h.store.putDag(spec({ id: 'load', type: 'sleep', config: { durationMs: 2500 } }), SHARDS);
  await runTo('succeeded');
  await seedRunGrid(h.store.db, { dagId: WIDE, tasks: 200, runs: 100, shardCount: SHARDS });
  page = await signedInPage(h);
});

after(async () => {
  await page?.context().close();
  await h?.stop();
});

describe('the grid of runs by task', () => {
  test('shows each job of each run as the store has it, newest run on the right', async () => {
    await page.goto(`${h.consoleUrl}/dags/${DAG}`);
    await page.getByTestId('run-grid').waitFor();
    await until('every run in the grid', async () => (await page.locator('[data-testid^="grid-run-"]').count()) === runs.length);
    const columns = await page.locator('[data-testid^="grid-run-"]').evaluateAll((els) => els.map((el) => el.getAttribute('data-testid')!.slice('grid-run-'.length)));
    assert.deepEqual(
      columns,
      runs.map((r) => r.id),
      'oldest run on the left, newest on the right',
    );
    for (const run of runs) {
      const jobs: JobRow[] = await h.store.listJobs(run.id);
      assert.equal(jobs.length, 3);
      for (const job of jobs) {
        const cell = page.getByTestId(`grid-cell-${job.taskId}-${run.id}`);
        assert.equal(await cell.getAttribute('data-state'), job.state, `${job.taskId} in run ${run.id}`);
        const label = (await cell.getAttribute('aria-label')) ?? '';
        assert.match(label, new RegExp(`^${job.taskId}, run \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d \\S+, ${job.state.replace('_', ' ')}`));
        assert.ok(['✓', '✕', '↑'].includes((await cell.textContent()) ?? ''), 'a mark besides the colour');
      }
    }
    const failed = runs[2]!;
    assert.equal(await page.getByTestId(`grid-cell-load-${failed.id}`).getAttribute('data-state'), 'failed');
    assert.equal(await page.getByTestId(`grid-cell-report-${failed.id}`).getAttribute('data-state'), 'upstream_failed');
    await screenshot(page, 'run-grid');
  });

  test("draws each task's durations, and each run's bar as tall as it took", async () => {
    const newest = runs[runs.length - 1]!;
    const load = (await h.store.listJobs(newest.id)).find((j) => j.taskId === 'load')!;
    const trend = page.getByTestId('grid-trend-load');
    near(Number(await trend.getAttribute('data-latest-ms')), ms(load.leasedAt, load.endedAt), 'latest load duration');
    const name = (await trend.locator('svg').getAttribute('aria-label')) ?? '';
    assert.match(name, /^load: durations over 4 runs, fewest .+, median .+, most .+, latest .+$/);
    for (const run of runs) near(Number(await page.getByTestId(`grid-run-${run.id}`).getAttribute('data-duration-ms')), ms(run.startedAt, run.endedAt), `run ${run.id}`);
    const heights = await page.locator('[data-testid^="grid-run-"]').evaluateAll((els) => els.map((el) => el.getBoundingClientRect().height));
    const took = runs.map((r) => ms(r.startedAt, r.endedAt)!);
    assert.equal(heights[took.indexOf(Math.max(...took))], Math.max(...heights), 'the longest run has the tallest bar');
  });

  test('moves between cells with the arrow keys, with visible focus, and opens the job on Enter', async () => {
    const [, second, failed] = runs;
    await page.getByTestId(`grid-cell-load-${second!.id}`).focus();
    await page.keyboard.press('ArrowRight');
    const focused = await page.evaluate(() => ({ id: document.activeElement?.getAttribute('data-testid'), outline: getComputedStyle(document.activeElement!).outlineStyle }));
    assert.equal(focused.id, `grid-cell-load-${failed!.id}`);
    assert.notEqual(focused.outline, 'none', 'the focused cell shows its focus');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), `grid-cell-report-${failed!.id}`);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === `/runs/${failed!.id}` && url.searchParams.get('task') === 'load');
    await page.getByTestId('job-detail').waitFor();
    assert.equal(await page.getByTestId('job-detail').locator('.badge').first().getAttribute('data-state'), 'failed');
  });

  test('a click on a cell lands on the run page with that job open', async () => {
    const first = runs[0]!;
    await page.goto(`${h.consoleUrl}/dags/${DAG}`);
    await page.getByTestId(`grid-cell-extract-${first.id}`).click();
    await page.waitForURL((url) => url.pathname === `/runs/${first.id}` && url.searchParams.get('task') === 'extract');
    await page.getByTestId('job-detail').waitFor();
    assert.match((await page.locator('.card.side h2').textContent()) ?? '', /Job extract/);
  });

  test('groups a wide fan-out as the graph does, and draws 200 tasks by 100 runs quickly', async () => {
    await page.goto(`${h.consoleUrl}/dags/${WIDE}`);
    await page.getByTestId('run-grid').waitFor();
    await page.getByTestId('grid-size').selectOption('100');
    await until('100 runs in the grid', async () => (await page.locator('[data-testid^="grid-run-"]').count()) === 100);
    // The root, six parts on their own, one group of the other 193.
    const group = page.locator('[data-testid^="grid-toggle-group:"]');
    assert.equal(await group.count(), 1);
    assert.match((await group.textContent()) ?? '', /part-007 … part-199 \(193 tasks\)/);
    const started = Date.now();
    await group.click({ timeout: 120_000 });
    await until('the group to open', async () => (await page.locator('.grid-member').count()) === 193, 120_000);
    const openMs = Date.now() - started;
    assert.equal(await group.getAttribute('aria-expanded'), 'true');
    assert.equal(await page.locator('.run-grid a.grid-cell').count(), 100 * 201, 'a cell per task and run, and one per run for the group');
    // Seeded rule: in run r part p failed when (r * 7 + p) % 23 = 0. The newest column is run 100.
    const grid = await page.locator('[data-testid^="grid-run-"]').evaluateAll((els) => els.map((el) => el.getAttribute('data-testid')!.slice('grid-run-'.length)));
    const newest = grid[grid.length - 1]!;
    for (const p of [1, 8, 50, 199]) {
      const task = `part-${String(p).padStart(3, '0')}`;
      const expected = (100 * 7 + p) % 23 === 0 ? 'failed' : 'succeeded';
      assert.equal(await page.getByTestId(`grid-cell-${task}-${newest}`).getAttribute('data-state'), expected, task);
    }
    // Generous, for a loaded machine: this catches a grid that lays out or redraws per cell, not a slow second.
    assert.ok(openMs < 60_000, `opening 19,300 cells took ${openMs} ms`);
    console.log(`grid: opened a group of 193 tasks by 100 runs in ${openMs} ms`);
  });
});

describe("the run page's duration against earlier runs", () => {
  test('compares the run with the median of the succeeded runs before it', async () => {
    const last = runs[runs.length - 1]!;
    const earlier = runs.slice(0, -1).filter((r) => r.state === 'succeeded');
    await page.goto(`${h.consoleUrl}/runs/${last.id}`);
    const summary = page.getByTestId('run-duration-summary');
    await summary.waitFor();
    near(Number(await summary.getAttribute('data-run-ms')), ms(last.startedAt, last.endedAt), 'this run');
    const durations = earlier.map((r) => ms(r.startedAt, r.endedAt)!).sort((a, b) => a - b);
    const median = (durations[0]! + durations[1]!) / 2;
    near(Number(await summary.getAttribute('data-median-ms')), median, 'median');
    assert.match((await summary.textContent()) ?? '', /This run took .+; median of the last 2 succeeded runs: .+ \(\d+\.\d× the median\)\./);
    const slow = ms(last.startedAt, last.endedAt)! / median >= 1.5;
    assert.equal(await page.getByTestId('run-slow').count(), slow ? 1 : 0, 'called out as slow exactly when 1.5 times the median');
    const bars = page.getByTestId('run-duration-chart').locator('rect');
    assert.equal(await bars.count(), 3);
    const labels = await bars.evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')));
    assert.match(labels[0]!, new RegExp(`^run #${earlier[0]!.id}, .+, took `));
    assert.match(labels[2]!, /^this run, took /);
  });
});
