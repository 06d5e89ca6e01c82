import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { CAP_PERCENT, SHARDS, SLOTS, WORKERS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';
import { chain, fanOut } from './src/specs';
import { parseDagId, reserveOf } from '@fenceline/core';
import { DEFAULT_NODE_CONFIG } from '@fenceline/core/engine';

/**
 * Fair share in real Chromium against a real cluster that lends by default: a wide fan-out
 * borrows every idle slot above the reserve, the page shows its lent leases as the store
 * records them, a second DAG still starts from the reserve and finishes, the waiting reason
 * on a job of the fan-out, and the overview and workers pages under that load.
 */

let h: Harness;
let page: Page;

const POOL = WORKERS * SLOTS;
const CAP = Math.max(1, Math.floor((CAP_PERCENT / 100) * POOL + 1e-9));
// The schedulers' default reserve, by their own rule: 1 of the 12 slots.
const RESERVE = reserveOf({ fraction: DEFAULT_NODE_CONFIG.lendReserveFraction!, minSlots: DEFAULT_NODE_CONFIG.lendReserveMinSlots }, POOL);
// Enough four-second parts that the fan-out still runs when its neighbour's chain is done.
const PARTS = 150;

before(async () => {
  h = await startHarness();
  for (const spec of [fanOut('e2e-fanout', PARTS, 4000), chain('e2e-neighbour', 3000)]) await h.store.putDag(spec, SHARDS);
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('fair share', () => {
  test('fair share: a wide fan-out borrows idle slots above the reserve, shown as the store holds them, and a second DAG still starts its jobs', async () => {
    const fanRunId = (await h.store.triggerRun(parseDagId('e2e-fanout'))).id;
    await page.goto(`${h.consoleUrl}/fair-share`);
    const fan = page.getByTestId('share-e2e-fanout');
    assert.equal(RESERVE, 1);
    // The pool counts its workers as they poll, so its line is read once all of them have.
    await until('the pool line to count every worker', async () => (await page.getByTestId('pool-slots').textContent()) === String(POOL), 60_000);
    await until('the pool line to show the reserve', async () => (await page.getByTestId('pool-reserve').textContent()) === String(RESERVE), 30_000);
    assert.equal(await page.getByTestId('cap-value').textContent(), String(CAP));
    // The page's figures, read back to back with the store's leases of the fan-out, until
    // both agree on a moment the fan-out borrows: the lent leases are those above its cap.
    let lentSeen = 0;
    await until(
      'the page to show the leases the store lends the fan-out',
      async () => {
        const storeHeld = (await h.store.listJobs(fanRunId)).filter((j) => j.state === 'leased').length;
        const held = Number(await fan.getAttribute('data-held'));
        const lent = Number(await fan.getAttribute('data-lent'));
        const cell = (await page.getByTestId('share-e2e-fanout-lent').textContent())?.trim();
        const poolLent = Number(await page.getByTestId('pool-lent').textContent());
        const again = (await h.store.listJobs(fanRunId)).filter((j) => j.state === 'leased').length;
        if (storeHeld !== again || held !== storeHeld || storeHeld <= CAP) return false;
        assert.equal(lent, storeHeld - CAP, 'the lent figure is what the store holds above the cap');
        assert.equal(cell, `+${lent}`);
        assert.equal(poolLent, lent, 'the pool lends to the fan-out alone');
        lentSeen = lent;
        return true;
      },
      60_000,
    );
    assert.ok(lentSeen > 0 && lentSeen <= POOL - RESERVE - CAP, `lent ${lentSeen} of at most ${POOL - RESERVE - CAP}`);
    assert.equal(Number(await fan.getAttribute('data-cap')), CAP);
    await screenshot(page, '06-fair-share');

    await h.store.triggerRun(parseDagId('e2e-neighbour'));
    const neighbour = page.getByTestId('share-e2e-neighbour');
    await until(
      'the neighbour DAG to hold a lease while the fan-out borrows',
      async () => {
        const held = Number(await neighbour.getAttribute('data-held'));
        const fanLent = Number(await fan.getAttribute('data-lent'));
        return held >= 1 && fanLent > 0;
      },
      30_000,
    );

    // Its whole chain finishes while the fan-out is still running.
    const runs = await h.store.listRuns({ dagId: parseDagId('e2e-neighbour'), limit: 1 });
    await page.goto(`${h.consoleUrl}/runs/${runs[0]!.id}`);
    await until('the neighbour run to succeed', async () => (await page.getByTestId('run-state').getAttribute('data-state')) === 'succeeded', 60_000);
    const fanRun = await h.store.getRun(fanRunId);
    assert.equal(fanRun.state, 'running', 'the fan-out is still running when its neighbour is done');

    await page.goto(`${h.consoleUrl}/runs/${fanRun.id}`);
    await page.getByTestId('gantt').waitFor();
    // Four-second parts renew every second, and the timeline draws each renewal.
    await until('renewals on the timeline', async () => (await page.getByTestId('renewal-tick').count()) > 0, 20_000);
    await page.getByTestId(`gantt-row-part-${PARTS - 1}`).click();
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
