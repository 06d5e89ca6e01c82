import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { seedDags } from '@fenceline/db/testing';
import { SHARDS, screenshot, signedInPage, startHarness, type Harness } from './src/env';

/**
 * The DAG list in real Chromium over 100,000 DAGs: how long the first page takes through the
 * API and the page, and search, sorting and paging done by the server.
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

describe('DAG list', () => {
  test('DAG list: the first page with 100,000 DAGs', async () => {
    const seedStart = performance.now();
    await seedDags(h.store.db, { count: 100_000, prefix: 'bulk', shardCount: SHARDS });
    console.log(`seeded 100,000 DAGs in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

    // The API alone, measured from the browser (session cookie and all), warm and cold.
    const apiTimes = await page.evaluate(async () => {
      const input = encodeURIComponent(JSON.stringify({ json: { sort: 'id', direction: 'asc', limit: 50, offset: 0 } }));
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const res = await fetch(`/api/trpc/dags.list?input=${input}`);
        await res.json();
        times.push(performance.now() - t0);
      }
      return times;
    });

    const t0 = performance.now();
    await page.goto(`${h.consoleUrl}/dags`);
    await page.getByTestId('dag-row-bulk-000000').waitFor();
    const pageMs = performance.now() - t0;
    const storeMs = Number(await page.getByTestId('dag-list-query-ms').textContent());
    const total = (await page.getByTestId('dag-list-total').textContent()) ?? '';
    console.log(
      `DAG list, first page of 50 with 100,000 DAGs: page load to first row ${pageMs.toFixed(0)} ms; ` +
        `tRPC round trips ${apiTimes.map((t) => t.toFixed(0)).join(' / ')} ms; store queries ${storeMs} ms; header "${total}"`,
    );
    assert.match(total, /100,0\d\d|≈/);
    await screenshot(page, '12-dag-list-100k');

    // Search and paging are server-side too.
    await page.getByTestId('dag-search').fill('bulk-09999');
    await page.getByTestId('dag-row-bulk-099999').waitFor();
    await page.getByTestId('dag-search').fill('');
    await page.getByTestId('sort-id').click();
    await page.getByTestId('dag-row-bulk-099999').waitFor();
    await page.getByTestId('page-next').click();
    await page.getByTestId('dag-row-bulk-099949').waitFor();
  });
});
