import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ARTIFACTS, SHARDS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';
import { fanOut } from './src/specs';
import { parseDagId } from '@fenceline/core';

/**
 * Detail pages in real Chromium against a real cluster: a DAG or run that does not exist, a
 * fan-out too wide to draw task by task, and the editor's wording. Selectors are data-testid
 * and React Flow's data-id, never text or CSS structure.
 */

let h: Harness;
let page: Page;

/** Children of the wide fan-out; with the root and the join the DAG has 202 tasks. */
const WIDE = 200;
/** Siblings the DAG and run pages draw on their own before grouping the rest (GRAPH_LIMITS.showEach). */
const SHOWN_EACH = 6;
/** How long a page for something missing is watched for further requests after it says so. */
const QUIET_MS = 4_000;

/**
 * Opens a detail page for something that does not exist and checks that it says so after a
 * single request (no retry), without a live indicator, and then asks nothing more.
 */
async function expectMissing(p: Page, path: string, procedure: string, shot: string): Promise<void> {
  let requests = 0;
  const errors: string[] = [];
  const onRequest = (r: { url(): string }) => {
    if (r.url().includes('/api/trpc/') && r.url().includes(procedure)) requests++;
  };
  const onConsole = (m: { type(): string; text(): string }) => {
    if (m.type() === 'error') errors.push(m.text());
  };
  p.on('request', onRequest);
  p.on('console', onConsole);
  try {
    const t0 = performance.now();
    await p.goto(`${h.consoleUrl}${path}`);
    const notFound = p.getByTestId('not-found');
    await notFound.waitFor({ timeout: 60_000 });
    const shownMs = performance.now() - t0;
    assert.equal(await notFound.getAttribute('data-code'), 'NOT_FOUND');
    assert.equal(requests, 1, `one ${procedure} request before the page says it does not exist (no retry)`);
    assert.equal(await p.locator('.live-dot').count(), 0, 'nothing there, so nothing claims to be live');
    assert.equal(await p.getByTestId('not-found-back').getAttribute('href'), '/dags');
    await screenshot(p, shot);

    const errorsWhenShown = errors.length;
    await new Promise((r) => setTimeout(r, QUIET_MS));
    assert.equal(requests, 1, `no ${procedure} request in the ${QUIET_MS} ms after the page said it does not exist`);
    assert.equal(errors.length, errorsWhenShown, `no new console errors while the page stays open: ${errors.slice(errorsWhenShown).join(' | ')}`);
    assert.equal(await notFound.count(), 1, 'the message stays');
    console.log(`${path}: not found shown ${shownMs.toFixed(0)} ms after navigation, ${requests} request in all`);

    await p.getByTestId('not-found-back').click();
    await p.waitForURL((url) => url.pathname === '/dags');
  } finally {
    p.off('request', onRequest);
    p.off('console', onConsole);
  }
}

before(async () => {
  h = await startHarness();
  await h.store.putDag(fanOut('e2e-wide', WIDE, 20), SHARDS);
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('detail pages', () => {
  test('unknown DAG: the page says at once that it does not exist, links back to the list, and stops asking', async () => {
    await expectMissing(page, '/dags/does-not-exist', 'dags.get', 'pages-01-dag-not-found');
  });

  test('unknown run: the page says at once that it does not exist, links back to the list, and stops asking', async () => {
    await expectMissing(page, '/runs/999999', 'runs.timeline', 'pages-02-run-not-found');
  });

  test('undecodable paths: next start answers a page with the not-found page (404) and an API path with 400, never a 5xx', async () => {
    for (const path of ['/runs/%FF', '/dags/%ED%A0%80', '/%', '/runs/%00', `/dags/${'x'.repeat(10 * 1024)}`]) {
      const res = await fetch(`${h.consoleUrl}${path}`, { redirect: 'manual' });
      const html = await res.text();
      assert.equal(res.status, 404, `${path.slice(0, 40)} answered ${res.status}`);
      // The not-found page comes in the payload the browser renders it from (checked in a browser below).
      assert.ok(html.includes('page-not-found'), `${path.slice(0, 40)} shows the not-found page`);
    }
    for (const path of ['/api/trpc/x%FF', '/api/jobs/%ED%A0%80/attempts/1/logs', '/api/v1/runs/%']) {
      const res = await fetch(`${h.consoleUrl}${path}`);
      const body = (await res.json()) as { code: string; message: string };
      assert.equal(res.status, 400, `${path} answered ${res.status}`);
      assert.equal(body.code, 'INVALID_INPUT');
      assert.match(body.message, /^path: /);
    }
    // A browser shows it too, and stays on the address it was given.
    await page.goto(`${h.consoleUrl}/runs/%FF`);
    await page.getByTestId('page-not-found').waitFor({ timeout: 60_000 });
    assert.match(page.url(), /\/runs\/%FF$/);
  });

  test('wide fan-out: the DAG and run pages draw 200 children as a few tasks and one group with its count by state', async () => {
    await page.goto(`${h.consoleUrl}/dags/e2e-wide`);
    const graph = page.getByTestId('dag-graph');
    const group = graph.getByTestId('task-group-node');
    await group.waitFor({ timeout: 60_000 });
    const grouped = WIDE - SHOWN_EACH;
    assert.equal(Number(await group.getAttribute('data-total')), grouped);
    assert.equal(await group.locator('.task-node-title').textContent(), `+${grouped} more tasks`);
    const range = group.locator('.task-node-meta').first();
    assert.equal(await range.textContent(), `part-00${SHOWN_EACH} … part-${WIDE - 1}`);
    assert.ok(await range.evaluate((el) => el.scrollWidth <= el.clientWidth), 'the range fits its node');
    // The root, the children shown on their own, the group and the join.
    assert.equal(await graph.locator('.react-flow__node').count(), 1 + SHOWN_EACH + 1 + 1);
    for (const id of ['split', 'part-000', `part-00${SHOWN_EACH - 1}`, 'merge']) await graph.locator(`.react-flow__node[data-id="${id}"]`).waitFor();
    // Fitted to the card, the drawing stays big enough to read rather than a thin line.
    const viewport = graph.locator('.react-flow__viewport');
    let scale = 0;
    await until(
      'the graph to fit at a readable size',
      async () => {
        scale = await viewport.evaluate((el) => new DOMMatrixReadOnly(getComputedStyle(el).transform).a);
        return scale >= 0.4;
      },
      10_000,
    ).catch(() => assert.fail(`the graph is drawn at ${scale.toFixed(2)}x`));
    await screenshot(page, 'pages-03-dag-wide');

    const run = await h.store.triggerRun(parseDagId('e2e-wide'));
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    const runGroup = page.getByTestId('dag-graph').getByTestId('task-group-node');
    await runGroup.waitFor({ timeout: 60_000 });
    const countOf = async (state: string) => Number(await runGroup.getAttribute(`data-count-${state}`));
    await until(
      'the group to count its members by their jobs states',
      async () => (await countOf('none')) === 0 && (await countOf('waiting')) + (await countOf('ready')) + (await countOf('leased')) + (await countOf('succeeded')) === grouped,
      60_000,
    );
    await until('every member of the group to succeed', async () => (await countOf('succeeded')) === grouped, 300_000);
    assert.equal(await runGroup.getAttribute('data-state'), 'succeeded');
    await screenshot(page, 'pages-04-run-wide');
    await page.getByTestId('dag-graph').screenshot({ path: join(ARTIFACTS, 'pages-04-run-wide-graph.png') });
  });

  test('editor: the issue count reads in the singular for one issue, and the catch-up choice fits its panel', async () => {
    await page.goto(`${h.consoleUrl}/editor`);
    const count = page.getByTestId('issue-count');
    // A new DAG has one issue: it has no tasks yet.
    await until('one issue', async () => ((await count.textContent()) ?? '') === '1 issue');
    await page.getByTestId('dag-id').fill('');
    await until('three issues', async () => ((await count.textContent()) ?? '') === '3 issues');

    const select = page.getByTestId('catchup-select');
    for (const policy of ['none', 'latest', 'all']) {
      await select.selectOption(policy);
      // The select's text, measured in its own font, must fit inside it beside the arrow.
      const fit = await select.evaluate((el) => {
        const s = el as HTMLSelectElement;
        const style = getComputedStyle(s);
        const context = document.createElement('canvas').getContext('2d')!;
        context.font = style.font;
        const text = context.measureText(s.selectedOptions[0]!.text).width;
        const room = s.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight) - 20;
        return { text, room };
      });
      assert.ok(fit.text <= fit.room, `"${policy}" needs ${fit.text.toFixed(0)} px, the select has ${fit.room.toFixed(0)} px`);
      assert.ok(((await page.getByTestId('catchup-meaning').textContent()) ?? '').length > 0, `the panel says what "${policy}" does`);
    }
    await screenshot(page, 'pages-05-editor-issue');
  });
});
