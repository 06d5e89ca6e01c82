import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * A scheduler failover seen on the shards page, in real Chromium against a real cluster of
 * two schedulers: the leader of shard 0 is killed and the other takes over at a higher epoch.
 */

let h: Harness;
let page: Page;

before(async () => {
  h = await startHarness();
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('failover', () => {
  test('shards: killing the leading scheduler shows a new leader with a higher epoch', async () => {
    await page.goto(`${h.consoleUrl}/shards`);
    const shard = page.getByTestId('shard-0');
    const leader = await until('shard 0 to have a leader', async () => (await shard.getAttribute('data-leader')) || null);
    const epoch = Number(await shard.getAttribute('data-epoch'));
    await screenshot(page, '10-shards-before');

    h.cluster.signal(leader, 'SIGKILL');
    const next = await until(
      'another node to lead shard 0 at a higher epoch',
      async () => {
        const now = await shard.getAttribute('data-leader');
        const e = Number(await shard.getAttribute('data-epoch'));
        return now && now !== leader && e > epoch ? { now, e } : null;
      },
      30_000,
    );
    assert.notEqual(next.now, leader);
    assert.ok(next.e > epoch);
    const history = page.getByTestId('leadership-history');
    await until('the takeover in the history', async () => /expired|stopped renewing/.test((await history.textContent()) ?? ''));
    await screenshot(page, '11-shards-after-failover');
  });
});
