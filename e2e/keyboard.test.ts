import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { parseDagId, parseRunId } from '@fenceline/core';
import { ADMIN, OPERATOR, SHARDS, startHarness, until, type Harness } from './src/env';
import { chain } from './src/specs';

/**
 * The console with the keyboard alone: signing in, every control of every page reached by
 * Tab with its focus ring showing, and an operator's everyday path (open a DAG, trigger a
 * run, open it, cancel it) without a mouse. A control the Tab key cannot reach, or one
 * that takes focus without showing it, fails with its page and its name.
 */

let h: Harness;
let context: BrowserContext;
/** A run of the chain that succeeded, for the run page's walk. */
let seedRunId = '';

const NAV_PAGES = ['/', '/dags', '/runs', '/editor', '/shards', '/fair-share', '/limits', '/workers', '/notifications', '/simulator', '/audit', '/tokens', '/reference', '/users'];
const DAG = 'keys-chain';
const LONG_DAG = 'keys-long';
const FAILING_DAG = 'keys-failing';
/** The failing DAG's service answers 500 while this holds, then 200: a service an operator repaired. */
let failing = true;
let server: Server | undefined;

/** A control as the tests tell it apart: where it is in the document, a short name, its radio group. */
interface Control {
  path: string;
  name: string;
  /** The name of the radio group it belongs to: a group is one Tab stop, moved in with the arrow keys. */
  group: string | null;
}

/** One stop of the Tab key, and whether its focus ring (an outline or a shadow) shows. */
interface Stop extends Control {
  ring: boolean;
}

declare global {
  interface Window {
    /** Installed in every page of the test's context (see `before`). */
    describeControl(el: Element): Control;
  }
}

/** Runs in the page: child indices from body as the path, the label or text as the name. */
function describeControlScript(): void {
  window.describeControl = (el: Element) => {
    const path: number[] = [];
    for (let n: Element | null = el; n && n !== document.body; n = n.parentElement) path.push(n.parentElement ? Array.prototype.indexOf.call(n.parentElement.children, n) : 0);
    const label = (el.getAttribute('aria-label') ?? el.textContent ?? el.getAttribute('name') ?? '').replace(/\s+/g, ' ').trim().slice(0, 40);
    const group = el instanceof HTMLInputElement && el.type === 'radio' ? el.name : null;
    return { path: path.reverse().join('.'), name: `${el.tagName.toLowerCase()} "${label}"`, group };
  };
}

/** What the focused element is, or null when focus is on the page itself. */
async function focused(page: Page): Promise<Stop | null> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body || el === document.documentElement) return null;
    const cs = getComputedStyle(el);
    const ring = (cs.outlineStyle !== 'none' && Number.parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none';
    return { ...window.describeControl(el), ring };
  });
}

/** Every control a user could act on that the page shows now: focusable by Tab, enabled, rendered. */
async function reachable(page: Page): Promise<Control[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, summary, [tabindex]'))
      .filter(
        (el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden' && !el.closest('[inert]'),
      )
      .filter((el) => !(el instanceof HTMLInputElement && el.type === 'hidden'))
      .map((el) => window.describeControl(el)),
  );
}

/**
 * Presses Tab from the top of the page until focus leaves the document or comes back to a
 * stop it has been to, and returns the stops in order. A radio group is one stop (its
 * other buttons are reached with the arrow keys), as in every browser.
 */
async function tabThrough(page: Page, max = 400): Promise<Stop[]> {
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.scrollTo(0, 0);
  });
  const stops: Stop[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const stop = await focused(page);
    if (!stop || seen.has(stop.path)) return stops;
    seen.add(stop.path);
    stops.push(stop);
  }
  throw new Error(`Tab went on for ${max} stops without leaving the page: a keyboard trap?`);
}

/** The page's data has arrived: its heading is there and nothing says Loading. */
async function settled(page: Page): Promise<void> {
  await page.locator('h1').first().waitFor({ timeout: 60_000 });
  await until('the page to finish loading', () => page.evaluate(() => !document.body.innerText.includes('Loading…')), 30_000);
}

/** Tabs forward until the focused element matches `testId`, then returns; fails if Tab never gets there. */
async function tabTo(page: Page, testId: string, max = 150): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((id) => document.activeElement?.getAttribute('data-testid') === id, testId)) return;
  }
  throw new Error(`Tab never reached [data-testid=${testId}]`);
}

/**
 * Blurs the focus, then Tabs from the top of the page until the focused element matches the
 * CSS `selector`, and returns whether its focus ring shows; fails if Tab never gets there.
 */
async function tabFromTop(page: Page, selector: string, max = 300): Promise<boolean> {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const stop = await page.evaluate((sel) => {
      const el = document.activeElement;
      if (!el || el === document.body || !el.matches(sel)) return null;
      const cs = getComputedStyle(el);
      return { ring: (cs.outlineStyle !== 'none' && Number.parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none' };
    }, selector);
    if (stop) return stop.ring;
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** The task whose panel the run page shows, from its URL (?task=...). */
function shownTask(page: Page): string | null {
  return new URL(page.url()).searchParams.get('task');
}

/** Signs in on /signin with the keyboard alone: Tab to each field, type, and Enter. */
async function signInByKeyboard(page: Page, user: { name: string; password: string }): Promise<void> {
  await page.goto(`${h.consoleUrl}/signin`);
  await page.getByTestId('signin-name').waitFor();
  await tabTo(page, 'signin-name');
  await page.keyboard.type(user.name);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'signin-password', 'Tab goes from the name to the password');
  await page.keyboard.type(user.password);
  await page.keyboard.press('Enter');
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'), { timeout: 30_000 });
}

before(async () => {
  h = await startHarness();
  server = createServer((_req, res) => {
    res.statusCode = failing ? 500 : 200;
    res.end(failing ? 'down for maintenance' : 'ok');
  });
  const port = await new Promise<number>((resolve) => server!.listen(0, '127.0.0.1', () => resolve((server!.address() as AddressInfo).port)));
  await h.store.putDag(
    {
      id: FAILING_DAG,
      tasks: [
        { id: 'extract', type: 'noop' },
        { id: 'load', type: 'http', config: { url: `http://127.0.0.1:${port}/load` }, dependsOn: ['extract'] },
        { id: 'report', type: 'noop', dependsOn: ['load'] },
      ],
    },
    SHARDS,
  );
  await h.store.putDag(chain(DAG, 3), SHARDS);
  await h.store.putDag({ id: LONG_DAG, tasks: [{ id: 'long', type: 'sleep', config: { durationMs: 300_000 } }] }, SHARDS);
  const run = await h.store.triggerRun(parseDagId(DAG));
  await until('the seed run to end', async () => (await h.store.getRun(parseRunId(run.id))).state === 'succeeded', 120_000);
  seedRunId = run.id;
  context = await h.browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(describeControlScript);
});

after(async () => {
  await context?.close().catch(() => undefined);
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  await h?.stop();
});

describe('the console with the keyboard alone', () => {
  test('an admin signs in by keyboard, and on every page, a DAG and a run included, Tab reaches every control with its focus showing', async () => {
    const page = await context.newPage();
    await signInByKeyboard(page, ADMIN);
    const problems: string[] = [];
    for (const path of [...NAV_PAGES, `/dags/${DAG}`, `/runs/${seedRunId}`]) {
      await page.goto(`${h.consoleUrl}${path}`);
      await settled(page);
      const stops = await tabThrough(page);
      const reached = new Set(stops.map((s) => s.path));
      const groups = new Set(stops.map((s) => s.group).filter((g) => g !== null));
      for (const s of stops) if (!s.ring) problems.push(`${path}: ${s.name} takes focus without showing it`);
      for (const c of await reachable(page)) {
        if (reached.has(c.path) || (c.group !== null && groups.has(c.group))) continue;
        problems.push(`${path}: ${c.name} cannot be reached with Tab`);
      }
      assert.ok(stops.length >= 5, `${path}: Tab stopped at only ${stops.length} controls`);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('an operator opens a DAG, triggers a run, opens it and cancels it without a mouse', async () => {
    const page = await context.newPage();
    page.on('dialog', (d) => void d.accept());
    await signInByKeyboard(page, OPERATOR);
    await page.goto(`${h.consoleUrl}/dags`);
    await settled(page);
    // The DAG list's link to the DAG, reached by Tab and followed with Enter.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    let onLink = false;
    for (let i = 0; i < 150 && !onLink; i++) {
      await page.keyboard.press('Tab');
      onLink = await page.evaluate((id) => (document.activeElement as HTMLAnchorElement | null)?.getAttribute('href') === `/dags/${id}`, LONG_DAG);
    }
    assert.ok(onLink, 'Tab reaches the link to the DAG');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === `/dags/${LONG_DAG}`);
    await settled(page);

    const before = await h.store.listRuns({ dagId: parseDagId(LONG_DAG), limit: 10 });
    await tabTo(page, 'trigger-run');
    await page.keyboard.press('Enter');
    const run = await until(
      'the triggered run to be stored',
      async () => (await h.store.listRuns({ dagId: parseDagId(LONG_DAG), limit: 10 })).find((r) => !before.some((b) => b.id === r.id)),
      30_000,
    );
    assert.equal((await h.store.listRuns({ dagId: parseDagId(LONG_DAG), limit: 10 })).length, before.length + 1, 'one Enter queues one run');

    // The new run's link on the DAG page, then its Cancel button, each by Tab and Enter.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    let onRun = false;
    for (let i = 0; i < 200 && !onRun; i++) {
      await page.keyboard.press('Tab');
      onRun = await page.evaluate((id) => ((document.activeElement as HTMLAnchorElement | null)?.getAttribute('href') ?? '').endsWith(`/runs/${id}`), run.id);
      if (!onRun && i === 199) break;
    }
    if (!onRun) {
      // The list may not show the run yet: reload the page and look again.
      await until(
        'the DAG page to list the new run',
        async () => {
          await page.reload();
          await settled(page);
          return (await page.locator(`a[href$="/runs/${run.id}"]`).count()) > 0;
        },
        30_000,
      );
      for (let i = 0; i < 200 && !onRun; i++) {
        await page.keyboard.press('Tab');
        onRun = await page.evaluate((id) => ((document.activeElement as HTMLAnchorElement | null)?.getAttribute('href') ?? '').endsWith(`/runs/${id}`), run.id);
      }
    }
    assert.ok(onRun, 'Tab reaches the link to the new run');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === `/runs/${run.id}`);
    await settled(page);
    await until('the job to be leased', async () => (await h.store.listJobs(parseRunId(run.id))).some((j) => j.state === 'leased'), 60_000);
    await tabTo(page, 'cancel-run');
    await page.keyboard.press('Enter');
    await until('the run to be cancelled', async () => (await h.store.getRun(parseRunId(run.id))).state === 'cancelled', 30_000);
    await page.close();
  });

  test('an operator opens a failed task from the graph and the timeline, retries the run from its failure and clears a task, all by keyboard', async () => {
    failing = true;
    const run = await h.store.triggerRun(parseDagId(FAILING_DAG));
    await until('the run to fail', async () => (await h.store.getRun(parseRunId(run.id))).state === 'failed', 60_000);
    const page = await context.newPage();
    await signInByKeyboard(page, OPERATOR);
    await page.goto(`${h.consoleUrl}/runs/${run.id}`);
    await settled(page);
    await page.getByTestId('gantt-open-load').waitFor();

    // The graph: Tab to the failed task's node, Enter opens its panel.
    const nodeRing = await tabFromTop(page, '.react-flow__node[data-id="load"]');
    assert.ok(nodeRing, 'the focused graph node shows its focus ring');
    await page.keyboard.press('Enter');
    await until('Enter on the node to open the panel of "load"', async () => shownTask(page) === 'load', 10_000);
    await page.getByTestId('job-detail').waitFor();
    assert.equal(await page.getByTestId('job-state').getAttribute('data-state'), 'failed', 'the panel is the failed job’s');

    // The timeline: each row's label is a button; Space opens another task, Enter the failed one again.
    const extractRing = await tabFromTop(page, '[data-testid="gantt-open-extract"]');
    assert.ok(extractRing, 'the focused timeline row shows its focus ring');
    await page.keyboard.press('Space');
    await until('Space on the row to open the panel of "extract"', async () => shownTask(page) === 'extract', 10_000);
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid')), 'gantt-open-load', 'Tab goes on to the next row');
    await page.keyboard.press('Enter');
    await until('Enter on the row to open the panel of "load"', async () => shownTask(page) === 'load', 10_000);

    // Retry from failure, by Tab and Enter: one action, and the run succeeds once the service is back.
    failing = false;
    const retryRing = await tabFromTop(page, '[data-testid="retry-failed"]');
    assert.ok(retryRing, 'Retry from failure shows its focus ring');
    await page.keyboard.press('Enter');
    await until('the retried run to succeed', async () => (await h.store.getRun(parseRunId(run.id))).state === 'succeeded', 60_000);
    const retries = (await h.store.listRunActions(parseRunId(run.id))).filter((a) => a.kind === 'retry_failed');
    assert.equal(retries.length, 1, 'one Enter is one retry');

    // Clear the task whose panel is open, by Tab and Enter: it runs again under a higher fence.
    const fenceBefore = (await h.store.listJobs(parseRunId(run.id))).find((j) => j.taskId === 'load')!.fence;
    await page.getByTestId('clear-task').and(page.locator(':enabled')).waitFor();
    const clearRing = await tabFromTop(page, '[data-testid="clear-task"]');
    assert.ok(clearRing, 'Clear shows its focus ring');
    await page.keyboard.press('Enter');
    await until(
      'the clear to be applied',
      async () => /clear applied: 1 task changed/.test((await page.getByTestId('job-actions').getByTestId('action-status').textContent()) ?? ''),
      30_000,
    );
    await until('the cleared run to succeed again', async () => (await h.store.getRun(parseRunId(run.id))).state === 'succeeded', 60_000);
    const load = (await h.store.listJobs(parseRunId(run.id))).find((j) => j.taskId === 'load')!;
    assert.ok(load.fence > fenceBefore, 'the cleared task ran again under a higher fence');
    assert.equal((await h.store.listRunActions(parseRunId(run.id))).filter((a) => a.kind === 'clear').length, 1, 'one Enter is one clear');
    await page.close();
  });
});
