import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { CAP_PERCENT, SHARDS, SLOTS, WORKERS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';
import { chain, fanOut } from './src/specs';
import { parseDagId } from '@fenceline/core';

/**
 * Fair share in real Chromium against a real cluster: a wide fan-out held to its cap while a
 * second DAG still gets leases and finishes, the waiting reason on a capped job, and the
 * overview and workers pages under that load.
 */

let h: Harness;
let page: Page;

const POOL = WORKERS * SLOTS;
const CAP = Math.max(1, Math.floor((CAP_PERCENT / 100) * POOL + 1e-9));

before(async () => {
  h = await startHarness();
  for (const spec of [fanOut('e2e-fanout', 60, 4000), chain('e2e-neighbour', 3000)]) await h.store.putDag(spec, SHARDS);
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('fair share', () => {
  test('fair share: a wide fan-out holds its cap and a second DAG still starts its jobs', async () => {
    await h.store.triggerRun(parseDagId('e2e-fanout'));
    await page.goto(`${h.consoleUrl}/fair-share`);
    const fan = page.getByTestId('share-e2e-fanout');
    await until('the fan-out to reach its cap', async () => Number(await fan.getAttribute('data-held')) === CAP, 60_000);
    assert.equal(Number(await fan.getAttribute('data-cap')), CAP);
    assert.equal(await page.getByTestId('cap-value').textContent(), String(CAP));
    assert.equal(await page.getByTestId('pool-slots').textContent(), String(POOL));
    await until('ready fan-out jobs to wait on the cap', async () => Number(await fan.getAttribute('data-capped')) > 0, 20_000);

    await h.store.triggerRun(parseDagId('e2e-neighbour'));
    const neighbour = page.getByTestId('share-e2e-neighbour');
    await until(
      'the neighbour DAG to hold a lease while the fan-out is capped',
      async () => {
        const held = Number(await neighbour.getAttribute('data-held'));
        const fanHeld = Number(await fan.getAttribute('data-held'));
        const fanCapped = Number(await fan.getAttribute('data-capped'));
        return held >= 1 && fanHeld <= CAP && fanCapped > 0;
      },
      30_000,
    );
    await screenshot(page, '06-fair-share');

    // Its whole chain finishes while the fan-out is still running.
    const runs = await h.store.listRuns({ dagId: parseDagId('e2e-neighbour'), limit: 1 });
    await page.goto(`${h.consoleUrl}/runs/${runs[0]!.id}`);
    await until('the neighbour run to succeed', async () => (await page.getByTestId('run-state').getAttribute('data-state')) === 'succeeded', 60_000);
    const fanRun = (await h.store.listRuns({ dagId: parseDagId('e2e-fanout'), limit: 1 }))[0]!;
    assert.equal((await h.store.getRun(fanRun.id)).state, 'running', 'the fan-out is still running when its neighbour is done');

    await page.goto(`${h.consoleUrl}/runs/${fanRun.id}`);
    await page.getByTestId('gantt').waitFor();
    // Four-second parts renew every second, and the timeline draws each renewal.
    await until('renewals on the timeline', async () => (await page.getByTestId('renewal-tick').count()) > 0, 20_000);
    await page.getByTestId('gantt-row-part-059').click();
    const reason = page.getByTestId('waiting-reason');
    await reason.waitFor();
    await screenshot(page, '07-run-fanout-waiting');

    await page.goto(`${h.consoleUrl}/`);
    await page.getByTestId('stat-running').waitFor();
    await screenshot(page, '08-overview');
    await page.goto(`${h.consoleUrl}/workers`);
    await page.getByTestId('worker-worker-1').waitFor();
    await screenshot(page, '09-workers');
  });
});
