import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { parseDagId, parseRunId } from '@fenceline/core';
import { seedRunGrid } from '@fenceline/db/testing';
import { axeScan, failingLines } from './src/axe';
import { ADMIN, SHARDS, fillSignIn, startHarness, until, type Harness } from './src/env';
import { chain } from './src/specs';

/**
 * The accessibility scan (axe-core in the page) over every page of the console, in light and
 * dark mode, in the states a page is seen in: empty (a new cluster), with data (DAGs, runs
 * that succeeded and failed, limits, a channel), and an error (something missing, a refused
 * input). Any serious or critical violation fails, named with its page, mode and nodes. One
 * browser and one cluster for all of it; each scan takes well under a second.
 */

let h: Harness;
let page: Page;
let context: BrowserContext;
const MODES = ['light', 'dark'] as const;

/** Every page in the navigation (an admin sees them all) and the sign-in page. */
const NAV_PAGES = ['/', '/dags', '/runs', '/editor', '/shards', '/fair-share', '/limits', '/workers', '/notifications', '/simulator', '/audit', '/tokens', '/reference', '/users'];
const OK_DAG = 'a11y-chain';
const FAILING_DAG = 'a11y-failing';
const PARAMS_DAG = 'a11y-params';
/** A seeded fan-out with ended runs, for the DAG page's grid of runs by task with a group of tasks open. */
const GRID_DAG = 'a11y-grid';
/** Two tasks that each hold the one unit of LIMIT for a minute: one runs, the other waits. */
const LIMITED_DAG = 'a11y-limited';
const LIMIT = 'a11y-warehouse';
/** An hourly DAG whose backfill stays running while the page is scanned. */
const HOURLY_DAG = 'a11y-hourly';

/** The page's data has arrived: its heading is there, nothing says Loading, and no console request is out. */
async function settled(page: Page): Promise<void> {
  await page.locator('h1').first().waitFor({ timeout: 60_000 });
  await until(
    'the page to finish loading',
    () =>
      page.evaluate(() => {
        const text = document.body.innerText;
        const busy = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/trpc/') && (e as PerformanceResourceTiming).responseEnd === 0);
        return !text.includes('Loading…') && busy.length === 0;
      }),
    30_000,
  );
}

/**
 * Opens `path`, brings it to the state under test, and scans it in light and then dark mode
 * (the same page, its colour scheme switched, so one load serves both); returns the failures.
 */
async function scan(path: string, state: string, prepare?: (page: Page) => Promise<void>): Promise<string[]> {
  const failures: string[] = [];
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(`${h.consoleUrl}${path}`);
  await settled(page);
  if (prepare) await prepare(page);
  for (const mode of MODES) {
    await page.emulateMedia({ colorScheme: mode });
    await page.waitForFunction((dark) => window.matchMedia('(prefers-color-scheme: dark)').matches === dark, mode === 'dark');
    const lines = failingLines(await axeScan(page));
    if (lines.length > 0) failures.push(`${path} (${state}, ${mode}):\n${lines.join('\n')}`);
  }
  return failures;
}

function expectClean(failures: string[]): void {
  assert.equal(failures.length, 0, `serious or critical accessibility violations:\n${failures.join('\n')}`);
}

before(async () => {
  h = await startHarness();
  context = await h.browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
  page = await context.newPage();
  await page.goto(`${h.consoleUrl}/signin`);
  await fillSignIn(page, ADMIN);
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
});

after(async () => {
  await context?.close().catch(() => undefined);
  await h?.stop();
});

describe('accessibility: no serious or critical violation on any page', () => {
  test('the sign-in page, and its refusal of a wrong password', async () => {
    const signedOut = await h.browser.newContext({ colorScheme: 'light' });
    try {
      const p = await signedOut.newPage();
      await p.goto(`${h.consoleUrl}/signin`);
      await p.getByTestId('signin-name').waitFor();
      const failures: string[] = [];
      const both = async (state: string) => {
        for (const mode of MODES) {
          await p.emulateMedia({ colorScheme: mode });
          for (const line of failingLines(await axeScan(p))) failures.push(`/signin (${state}, ${mode}):\n${line}`);
        }
      };
      await both('empty');
      await fillSignIn(p, { name: ADMIN.name, password: 'not-the-password-0000' });
      await p.getByTestId('api-error').waitFor();
      await both('refused');
      expectClean(failures);
    } finally {
      await signedOut.close();
    }
  });

  test('every page of an empty cluster', async () => {
    const failures: string[] = [];
    for (const path of NAV_PAGES) failures.push(...(await scan(path, 'empty')));
    expectClean(failures);
  });

  test('every page with data: DAGs, runs that succeeded and failed, a limit, a channel and a rule', async () => {
    await h.store.putDag(chain(OK_DAG, 50), SHARDS);
    await h.store.putDag(
      {
        id: FAILING_DAG,
        schedule: { kind: 'manual' },
        tasks: [
          { id: 'extract', type: 'noop' },
          { id: 'load', type: 'flaky', config: { succeedOnAttempt: 99 }, dependsOn: ['extract'], retries: 0 },
          { id: 'report', type: 'noop', dependsOn: ['load'] },
        ],
      },
      SHARDS,
    );
    await h.store.putDag(
      { id: PARAMS_DAG, schedule: { kind: 'manual' }, params: { batch: { type: 'integer', required: true, description: 'Rows a batch' } }, tasks: [{ id: 'only', type: 'noop' }] },
      SHARDS,
    );
    await seedRunGrid(h.store.db, { dagId: GRID_DAG, tasks: 20, runs: 12, shardCount: SHARDS });
    await h.store.setResourceLimit({ name: 'warehouse', capacity: 2 });
    const channel = await h.store.createNotificationChannel({ name: 'ops-hook', kind: 'webhook', url: 'http://127.0.0.1:9/hook' });
    await h.store.createNotificationRule({ channelId: channel.id, dagId: FAILING_DAG, event: 'run_failed' });
    const ok = await h.store.triggerRun(parseDagId(OK_DAG));
    const failed = await h.store.triggerRun(parseDagId(FAILING_DAG));
    await until(
      'both runs to end',
      async () => {
        const states = await Promise.all([ok, failed].map(async (r) => (await h.store.getRun(parseRunId(r.id))).state));
        return states[0] === 'succeeded' && states[1] === 'failed';
      },
      120_000,
    );

    const failures: string[] = [];
    for (const path of NAV_PAGES) failures.push(...(await scan(path, 'with data')));
    failures.push(...(await scan(`/dags/${OK_DAG}`, 'with data')));
    failures.push(...(await scan(`/dags/${FAILING_DAG}`, 'with data')));
    failures.push(
      ...(await scan(`/dags/${GRID_DAG}`, 'grid with a group open', async (page) => {
        await page.locator('[data-testid^="grid-toggle-"]').first().click();
        await page.locator('.grid-member').first().waitFor();
      })),
    );
    failures.push(...(await scan(`/runs/${ok.id}`, 'succeeded')));
    // A failed run with a task's panel open: its attempts, its error, its actions.
    failures.push(
      ...(await scan(`/runs/${failed.id}`, 'failed, task open', async (page) => {
        await page.locator('.react-flow__node[data-id="load"]').click();
        await page.getByTestId('job-actions').waitFor();
      })),
    );
    failures.push(...(await scan(`/editor?dag=${OK_DAG}`, 'editing a DAG')));
    failures.push(...(await scan(`/runs?dag=${FAILING_DAG}&state=failed`, 'filtered')));
    expectClean(failures);
  });

  test('every page in its error states: not found, refused input, a bad filter', async () => {
    const failures: string[] = [];
    failures.push(...(await scan('/dags/no-such-dag', 'not found', (p) => p.getByTestId('not-found').waitFor())));
    failures.push(...(await scan('/runs/999999', 'not found', (p) => p.getByTestId('not-found').waitFor())));
    failures.push(...(await scan('/no-such-page', 'not found')));
    failures.push(...(await scan('/runs?state=sleeping', 'bad filter')));
    failures.push(
      ...(await scan(`/dags/${PARAMS_DAG}`, 'trigger refused', async (p) => {
        await p.getByTestId('trigger-run').click();
        await p.getByTestId('param-batch').fill('lots');
        await p.getByTestId('trigger-submit').click();
        await p.getByTestId('param-error-batch').waitFor();
      })),
    );
    failures.push(
      ...(await scan('/editor', 'spec with issues', async (p) => {
        await p.getByTestId('dag-id').fill('');
        await until('the issues to show', async () => ((await p.getByTestId('issue-count').textContent()) ?? '').includes('issues'));
      })),
    );
    failures.push(
      ...(await scan('/notifications', 'refused channel', async (p) => {
        await p.getByTestId('channel-name').fill('bad');
        await p.getByTestId('channel-url').fill('ftp://127.0.0.1/x');
        await p.getByTestId('channel-add').click();
        await p.getByTestId('field-error-url').waitFor();
      })),
    );
    expectClean(failures);
  });

  test('the pages in the states a session leaves them in: a simulation run and compared, a limit waited for, tokens and users made, a run cleared, a backfill running', async () => {
    const failures: string[] = [];
    const knob = (p: Page, name: string) => p.getByTestId(`sim-knob-${name}`);
    const smallScenario = async (p: Page) => {
      for (const [name, value] of [
        ['workers', '50'],
        ['fanoutTasks', '50'],
        ['otherDags', '5'],
        ['seed', '1'],
      ] as const)
        await knob(p, name).fill(value);
    };
    failures.push(
      ...(await scan('/simulator', 'after Run', async (p) => {
        await smallScenario(p);
        await p.getByTestId('sim-run').click();
        await until(
          'the simulation to finish',
          async () =>
            (await p
              .getByTestId('sim-side-0')
              .getAttribute('data-state', { timeout: 1_000 })
              .catch(() => null)) === 'done',
          120_000,
        );
      })),
    );
    failures.push(
      ...(await scan('/simulator', 'after Compare', async (p) => {
        await smallScenario(p);
        await p.getByTestId('sim-compare').click();
        await until(
          'every side of the comparison to finish',
          async () => {
            const states = await Promise.all(
              [0, 1, 2].map((i) =>
                p
                  .getByTestId(`sim-side-${i}`)
                  .getAttribute('data-state', { timeout: 1_000 })
                  .catch(() => null),
              ),
            );
            return states.every((st) => st === 'done');
          },
          180_000,
        );
      })),
    );
    failures.push(
      ...(await scan('/simulator', 'refused settings', async (p) => {
        await knob(p, 'workers').fill('-5');
        await knob(p, 'workers-error').waitFor();
        await p.getByTestId('sim-run').click();
        await p.getByTestId('sim-knob-refusal').waitFor();
      })),
    );

    await h.store.setResourceLimit({ name: LIMIT, capacity: 1 });
    await h.store.putDag(
      {
        id: LIMITED_DAG,
        schedule: { kind: 'manual' },
        tasks: ['load-a', 'load-b'].map((id) => ({ id, type: 'sleep', config: { durationMs: 60_000 }, resources: { [LIMIT]: 1 } })),
      },
      SHARDS,
    );
    const limited = await h.store.triggerRun(parseDagId(LIMITED_DAG));
    await until('one job to wait for the limit', async () => (await h.store.listResourceLimits()).find((l) => l.name === LIMIT)?.waiting === 1, 60_000);
    failures.push(
      ...(await scan('/limits', 'a job waiting', async (p) => {
        await p.getByTestId(`limit-${LIMIT}-waiters`).waitFor();
      })),
    );
    failures.push(
      ...(await scan('/limits', 'refused capacity', async (p) => {
        await p.getByTestId('limit-name').fill('a11y-refused');
        await p.getByTestId('limit-capacity').fill('0');
        await p.getByTestId('limit-set').click();
        await p.getByTestId('api-error').waitFor();
      })),
    );

    failures.push(
      ...(await scan('/tokens', 'a token made', async (p) => {
        await p.getByTestId('new-token-name').fill('a11y-ci');
        await p.getByTestId('new-token-submit').click();
        await p.getByTestId('token-created').waitFor();
      })),
    );
    failures.push(
      ...(await scan('/tokens', 'refused name', async (p) => {
        await p.getByTestId('new-token-name').fill('bad/name');
        await p.getByTestId('new-token-submit').click();
        await p.getByTestId('api-error').waitFor();
      })),
    );
    failures.push(
      ...(await scan('/users', 'a user made', async (p) => {
        await p.getByTestId('new-user-name').fill('a11y-nina');
        await p.getByTestId('new-user-submit').click();
        await p.getByTestId('user-created').waitFor();
      })),
    );
    failures.push(
      ...(await scan('/users', 'refused password', async (p) => {
        await p.getByTestId('new-user-name').fill('a11y-bob');
        await p.getByTestId('new-user-password').fill('x');
        await p.getByTestId('new-user-submit').click();
        await p.getByTestId('api-error').waitFor();
      })),
    );

    // A failed run whose failed task was cleared: its attempts table names the clear.
    const [failed] = await h.store.listRuns({ dagId: parseDagId(FAILING_DAG), limit: 1 });
    assert.ok(failed, 'the failed run of the test before');
    await h.store.requestRunAction({ runId: parseRunId(failed.id), kind: 'clear', taskIds: ['load'], requestedBy: ADMIN.name });
    await until('the clear to be applied', async () => (await h.store.listRunActions(parseRunId(failed.id))).some((a) => a.kind === 'clear' && a.state === 'applied'), 60_000);
    failures.push(
      ...(await scan(`/runs/${failed.id}?task=load`, 'after a clear, task open', async (p) => {
        await p.getByTestId('attempt-clear').first().waitFor();
      })),
    );

    // A backfill that runs (an hour-long sleep per slot, one at a time), and one refused.
    await h.store.putDag({ id: HOURLY_DAG, schedule: { kind: 'interval', everyMs: 3_600_000 }, tasks: [{ id: 'slow', type: 'sleep', config: { durationMs: 3_600_000 } }] }, SHARDS);
    failures.push(
      ...(await scan(`/dags/${HOURLY_DAG}`, 'a backfill running', async (p) => {
        await p.getByTestId('backfill-from').fill('2026-01-01T00:00:00Z');
        await p.getByTestId('backfill-to').fill('2026-01-01T06:00:00Z');
        await p.getByTestId('backfill-max-active').fill('1');
        await p.getByTestId('backfill-start').click();
        await until(
          'the backfill to run',
          async () =>
            (await p
              .locator('[data-testid^="backfill-state-"]')
              .first()
              .getAttribute('data-state', { timeout: 1_000 })
              .catch(() => null)) === 'running',
          30_000,
        );
      })),
    );
    failures.push(
      ...(await scan(`/dags/${HOURLY_DAG}`, 'a backfill refused', async (p) => {
        await p.getByTestId('backfill-from').fill('2026-01-02T00:00:00Z');
        await p.getByTestId('backfill-to').fill('2026-01-01T00:00:00Z');
        await p.getByTestId('backfill-start').click();
        await p.getByTestId('api-error').waitFor();
      })),
    );
    for (const b of await h.store.listBackfills({ dagId: parseDagId(HOURLY_DAG) })) await h.store.cancelBackfill(b.id);
    await h.store.requestRunAction({ runId: parseRunId(limited.id), kind: 'cancel', requestedBy: ADMIN.name });
    expectClean(failures);
  });

  test('a page while the API is failing: every console request answered 500', async () => {
    const failing = (url: URL) => url.pathname.startsWith('/api/trpc/');
    await page.route(failing, (route) => route.fulfill({ status: 500, contentType: 'text/plain', body: 'Internal Server Error' }));
    try {
      // Not `scan`: with every read failing and retried, parts of the page stay "Loading…", so
      // the page is scanned once it shows its error.
      const failures: string[] = [];
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(`${h.consoleUrl}/dags`);
      await page.locator('h1').first().waitFor({ timeout: 60_000 });
      await page.getByTestId('api-error').first().waitFor({ timeout: 30_000 });
      for (const mode of MODES) {
        await page.emulateMedia({ colorScheme: mode });
        await page.waitForFunction((dark) => window.matchMedia('(prefers-color-scheme: dark)').matches === dark, mode === 'dark');
        const lines = failingLines(await axeScan(page));
        if (lines.length > 0) failures.push(`/dags (API failing, ${mode}):\n${lines.join('\n')}`);
      }
      expectClean(failures);
    } finally {
      await page.unroute(failing);
    }
  });
});
