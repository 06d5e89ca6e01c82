import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseBackfillId, parseDagId } from '@fenceline/core';
import { SHARDS, VIEWER, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * A backfill driven from the DAG page in real Chromium against a real cluster: the form,
 * the confirmation of a large range, the progress bar filling as the runs end, and cancel.
 * Selectors are data-testid, never text or CSS structure.
 */

let h: Harness;
let page: Page;

const DAG = 'e2e-backfill';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
const iso = (ms: number) => new Date(ms).toISOString();
/** Gaps between a user's two clicks on "Backfill": a double click, and impatient ones after the answer. */
const CLICK_GAPS_MS = [0, 300, 1_000];
const onceDag = (gapMs: number) => `e2e-backfill-once-${gapMs}`;

/** The newest backfill row's id, once the list shows more than `known` of them. */
async function newBackfillId(p: Page, known: number): Promise<string> {
  return until('a new backfill in the list', async () => {
    const rows = await p
      .getByTestId('backfill-list')
      .locator('tbody tr')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-testid')?.replace('backfill-', '') ?? ''));
    return rows.length > known ? rows[0]! : null;
  });
}

async function progressOf(p: Page, id: string): Promise<number> {
  return Number(await p.getByTestId(`backfill-progress-${id}`).getAttribute('aria-valuenow'));
}

async function startBackfill(p: Page, from: number, to: number, maxActive: number): Promise<void> {
  await p.getByTestId('backfill-from').fill(iso(from));
  await p.getByTestId('backfill-to').fill(iso(to));
  await p.getByTestId('backfill-max-active').fill(String(maxActive));
  await p.getByTestId('backfill-start').click();
}

before(async () => {
  h = await startHarness();
  await h.store.putDag(
    {
      id: DAG,
      schedule: { kind: 'interval', everyMs: HOUR_MS },
      maxActiveRuns: 4,
      capFraction: 1,
      tasks: [{ id: 'work', type: 'sleep', config: { durationMs: 300 } }],
    },
    SHARDS,
  );
  for (const gap of CLICK_GAPS_MS) await h.store.putDag({ id: onceDag(gap), schedule: { kind: 'interval', everyMs: HOUR_MS }, tasks: [{ id: 'work', type: 'noop' }] }, SHARDS);
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('backfill from the DAG page', () => {
  test('a refused range shows the store\u2019s reason and starts nothing', async () => {
    await page.goto(`${h.consoleUrl}/dags/${DAG}`);
    await startBackfill(page, hour, hour - DAY_MS, 2);
    const error = page.getByTestId('api-error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'INVALID_INPUT');
    assert.match((await error.textContent()) ?? '', /to: must be after from/);
    assert.deepEqual(await h.store.listBackfills({ dagId: parseDagId(DAG) }), []);
  });

  test('the form starts a backfill whose progress bar fills as its runs end, up to done', async () => {
    await page.goto(`${h.consoleUrl}/dags/${DAG}`);
    await startBackfill(page, hour - 12 * HOUR_MS, hour, 3);
    const id = await newBackfillId(page, 0);
    const stored = await h.store.getBackfill(parseBackfillId(id));
    assert.equal(stored.totalSlots, 12);
    assert.equal(stored.maxActiveRuns, 3);
    assert.equal(stored.requestedBy, 'e2e-operator');
    // The bar moves part way before it is full: the runs take a while each, three at a time.
    await until('the bar to move', async () => (await progressOf(page, id)) > 0, 60_000);
    await screenshot(page, 'backfill-running');
    await until('the backfill to be done', async () => (await page.getByTestId(`backfill-state-${id}`).getAttribute('data-state')) === 'done', 120_000);
    assert.equal(await progressOf(page, id), 12);
    assert.match((await page.getByTestId(`backfill-counts-${id}`).textContent()) ?? '', /12\/12 slots · 12 runs created · 0 skipped · 0 unfinished/);
    assert.equal(await page.getByTestId(`backfill-cancel-${id}`).count(), 0);
    await until('the audit entry', async () => ((await page.getByTestId('dag-audit').textContent()) ?? '').includes('backfill.created'));
  });

  test('a large range is confirmed first, and cancel stops it and ends its queued runs', async () => {
    await page.goto(`${h.consoleUrl}/dags/${DAG}`);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await startBackfill(page, hour - 30 * DAY_MS, hour - 12 * HOUR_MS, 2);
    const id = await newBackfillId(page, 1);
    assert.match(dialogs[0] ?? '', /needs confirmation/);
    const b = parseBackfillId(id);
    assert.equal((await h.store.getBackfill(b)).totalSlots, 708);
    await until('some runs of it', async () => (await h.store.getBackfill(b)).createdRuns >= 2, 60_000);
    await page.getByTestId(`backfill-cancel-${id}`).click();
    await until('the cancelled state', async () => (await page.getByTestId(`backfill-state-${id}`).getAttribute('data-state')) === 'cancelled');
    assert.match(dialogs[1] ?? '', /Cancel backfill/);
    const settled = await until('its queued runs settled', async () => {
      const row = await h.store.getBackfill(b);
      return row.endedAt !== null ? row : null;
    });
    assert.ok(settled.createdRuns < 708);
    const runs = await h.store.listRuns({ dagId: parseDagId(DAG), state: 'queued', limit: 100 });
    assert.deepEqual(runs, []);
    await screenshot(page, 'backfill-cancelled');
    await until('the cancel audit entry', async () => ((await page.getByTestId('dag-audit').textContent()) ?? '').includes('backfill.cancelled'));
  });

  test('a viewer sees the progress but neither the form nor a cancel button', async () => {
    const viewer = await signedInPage(h, VIEWER);
    await viewer.goto(`${h.consoleUrl}/dags/${DAG}`);
    await viewer.getByTestId('backfill-list').waitFor();
    assert.equal(await viewer.getByTestId('backfill-form').count(), 0);
    assert.equal(await viewer.locator('[data-testid^="backfill-cancel-"]').count(), 0);
    await viewer.context().close();
  });

  for (const gap of CLICK_GAPS_MS) {
    test(`two clicks on Backfill ${gap === 0 ? 'as a double click' : `${gap} ms apart`} start one backfill`, async () => {
      const dag = onceDag(gap);
      await page.goto(`${h.consoleUrl}/dags/${dag}`);
      await page.getByTestId('backfill-from').fill(iso(hour - 3 * HOUR_MS));
      await page.getByTestId('backfill-to').fill(iso(hour));
      const sent: string[] = [];
      const answered: string[] = [];
      const onRequest = (r: { url(): string }) => {
        if (r.url().includes('backfills.create')) sent.push(r.url());
      };
      const onResponse = async (r: { url(): string; json(): Promise<unknown> }) => {
        if (!r.url().includes('backfills.create')) return;
        const body = (await r.json().catch(() => null)) as { result?: { data?: { json?: { id?: string } } } }[] | null;
        answered.push(body?.[0]?.result?.data?.json?.id ?? 'refused');
      };
      page.on('request', onRequest);
      page.on('response', onResponse);
      try {
        // The card sits below the fold, under cards that grow as their data arrives: scroll to
        // the button and take its place once it has stopped moving between two looks.
        const button = page.getByTestId('backfill-start');
        let box = (await button.boundingBox())!;
        await until('the button to stay in place', async () => {
          await button.scrollIntoViewIfNeeded();
          const now = (await button.boundingBox())!;
          const still = now.x === box.x && now.y === box.y;
          box = now;
          return still;
        });
        const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
        if (gap === 0) await page.mouse.dblclick(x, y);
        else {
          await page.mouse.click(x, y);
          // The gap is what is under test: the second click lands this long after the first.
          await new Promise((r) => setTimeout(r, gap));
          await page.mouse.click(x, y);
        }
        await until('every backfill request to be answered', async () => sent.length > 0 && answered.length === sent.length, 30_000);
      } finally {
        page.off('request', onRequest);
        page.off('response', onResponse);
      }
      assert.ok(
        answered.every((id) => id === answered[0] && id !== 'refused'),
        `every answer names one backfill: ${answered.join(', ')}`,
      );
      const stored = await h.store.listBackfills({ dagId: parseDagId(dag) });
      assert.equal(stored.length, 1, `clicks ${gap} ms apart started ${stored.length} backfills`);
    });
  }
});
