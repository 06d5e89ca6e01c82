import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { join } from 'node:path';
import { ARTIFACTS, fillSignIn, OPERATOR, SHARDS, screenshot, startHarness, until, type Harness } from './src/env';
import { chain, fanOut } from './src/specs';
import { parseDagId } from '@fenceline/core';

/**
 * The console on a phone, in real Chromium against a real cluster: every page fits a 390 px
 * screen without scrolling sideways, the navigation is a drawer behind a menu button, and
 * every time shown names its zone and follows the UTC / local switch. Selectors are
 * data-testid, never text or CSS structure.
 */

let h: Harness;
let runId = '';

const PHONE = { width: 390, height: 844 };
/** The browser's own zone in these tests, so "local" is something other than UTC. */
const BROWSER_ZONE = 'Europe/Berlin';
const BROWSER_LABEL = /^(CET|CEST)$/;
/** A DAG scheduled at 09:00 in New York, to show its next run in its own zone whatever the switch says. */
const CRON_DAG = 'e2e-cron-new-york';
const CHAIN_DAG = 'e2e-phone-chain';
/** A fan-out of long sleeps, so workers hold leases and fair share has DAGs to list while the pages are measured. */
const BUSY_DAG = 'e2e-phone-busy';

/** A page in a phone-sized window, signed in as the operator unless `signedIn` is false. */
async function phonePage(signedIn = true): Promise<Page> {
  // A plain window 390 px wide, not mobile emulation: an emulated phone zooms out to fit a page
  // that is too wide, which would hide exactly what these tests look for.
  const context = await h.browser.newContext({ viewport: PHONE, colorScheme: 'dark', timezoneId: BROWSER_ZONE });
  const page = await context.newPage();
  if (!signedIn) return page;
  await page.goto(`${h.consoleUrl}/signin`);
  await fillSignIn(page, OPERATOR);
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
  return page;
}

/**
 * How wide the page is against the window, and, when it is wider, the elements that stick out
 * past the right edge without a scrolling box around them: what to fix.
 */
async function sideways(p: Page): Promise<{ window: number; page: number; culprits: string[] }> {
  return p.evaluate(() => {
    const width = window.innerWidth;
    const culprits: string[] = [];
    if (document.documentElement.scrollWidth > width) {
      for (const el of Array.from(document.body.querySelectorAll('*'))) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 || r.right <= width + 0.5) continue;
        let inScroller = false;
        for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
          if (getComputedStyle(a).overflowX !== 'visible') {
            inScroller = true;
            break;
          }
        }
        if (inScroller) continue;
        const cls = typeof el.className === 'string' && el.className.trim() ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
        const id = el.getAttribute('data-testid');
        culprits.push(`${el.tagName.toLowerCase()}${cls}${id ? `[${id}]` : ''} ends at ${Math.round(r.right)} px`);
      }
    }
    return { window: width, page: document.documentElement.scrollWidth, culprits: culprits.slice(0, 10) };
  });
}

async function assertFits(p: Page, what: string): Promise<void> {
  const fit = await sideways(p);
  assert.ok(fit.page <= fit.window, `${what}: the page is ${fit.page} px wide in a ${fit.window} px window; sticking out: ${fit.culprits.join('; ')}`);
}

/** A time as Swedish writes it ("2026-12-02 15:05:03"), which is the console's own form: an oracle that is not the console's code. */
function wallClock(iso: string, zone: string): string {
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(iso));
}

/** Splits "2026-12-02 15:05:03 CET" into its wall clock and its zone label. */
function shownTime(text: string | null): { clock: string; label: string } {
  const m = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) (\S+)$/.exec(text ?? '');
  assert.ok(m, `"${text}" is a date, a 24-hour time and a zone`);
  return { clock: m[1]!, label: m[2]! };
}

async function openMenu(p: Page): Promise<void> {
  const button = p.getByTestId('menu-button');
  assert.equal(await button.getAttribute('aria-expanded'), 'false', 'the drawer starts closed');
  assert.equal(await p.getByTestId('console-nav').isVisible(), false, 'a closed drawer is not shown');
  await button.click();
  assert.equal(await button.getAttribute('aria-expanded'), 'true');
  await p.getByTestId('console-nav').waitFor({ state: 'visible' });
}

async function assertMenuClosed(p: Page, why: string): Promise<void> {
  await until(
    `the drawer to close ${why}`,
    async () => (await p.getByTestId('menu-button').getAttribute('aria-expanded')) === 'false' && !(await p.getByTestId('console-nav').isVisible()),
    10_000,
  );
}

interface PhonePage {
  name: string;
  path: () => string;
  /** Something the page shows once its data is in, so the width is measured on the full page. */
  ready: string;
  /** The console's pages have the shell, and so the menu; sign-in and the not-found page have neither. */
  shell: boolean;
  /** A section of the navigation other than this page's, to open from its menu. */
  goTo?: { testId: string; path: string };
}

const PAGES: PhonePage[] = [
  { name: 'overview', path: () => '/', ready: 'throughput-chart', shell: true, goTo: { testId: 'nav-dags', path: '/dags' } },
  { name: 'DAG list', path: () => '/dags', ready: 'dag-table', shell: true, goTo: { testId: 'nav-editor', path: '/editor' } },
  { name: 'DAG page', path: () => `/dags/${CRON_DAG}`, ready: 'next-run', shell: true, goTo: { testId: 'nav-shards', path: '/shards' } },
  { name: 'runs of a DAG', path: () => `/dags/${CHAIN_DAG}`, ready: 'run-history', shell: true, goTo: { testId: 'nav-workers', path: '/workers' } },
  { name: 'editor', path: () => '/editor', ready: 'issue-count', shell: true, goTo: { testId: 'nav-fair-share', path: '/fair-share' } },
  { name: 'runs list', path: () => '/runs', ready: 'runs-table', shell: true, goTo: { testId: 'nav-shards', path: '/shards' } },
  { name: 'run page', path: () => `/runs/${runId}`, ready: 'run-scheduled', shell: true, goTo: { testId: 'nav-simulator', path: '/simulator' } },
  { name: 'shards', path: () => '/shards', ready: 'leadership-history', shell: true, goTo: { testId: 'nav-overview', path: '/' } },
  { name: 'workers', path: () => '/workers', ready: 'worker-worker-1', shell: true, goTo: { testId: 'nav-dags', path: '/dags' } },
  { name: 'fair share', path: () => '/fair-share', ready: 'share-table', shell: true, goTo: { testId: 'nav-editor', path: '/editor' } },
  { name: 'limits', path: () => '/limits', ready: 'limits-table', shell: true, goTo: { testId: 'nav-fair-share', path: '/fair-share' } },
  { name: 'notifications', path: () => '/notifications', ready: 'rules-table', shell: true, goTo: { testId: 'nav-overview', path: '/' } },
  { name: 'simulator', path: () => '/simulator', ready: 'sim-run', shell: true, goTo: { testId: 'nav-overview', path: '/' } },
  { name: 'API reference', path: () => '/reference', ready: 'op-triggerDag', shell: true, goTo: { testId: 'nav-runs', path: '/runs' } },
  { name: 'missing DAG', path: () => '/dags/no-such-dag', ready: 'not-found', shell: true, goTo: { testId: 'nav-workers', path: '/workers' } },
  { name: 'not-found', path: () => '/no-such-page', ready: 'page-not-found', shell: false },
];

before(async () => {
  h = await startHarness();
  await h.store.putDag(
    {
      id: CRON_DAG,
      name: 'Nine in New York',
      schedule: { kind: 'cron', cron: '0 9 * * *', timezone: 'America/New_York' },
      tasks: [{ id: 'report', type: 'noop' }],
    },
    SHARDS,
  );
  await h.store.putDag(chain(CHAIN_DAG, 200), SHARDS);
  runId = String((await h.store.triggerRun(parseDagId(CHAIN_DAG))).id);
  await h.store.putDag(fanOut(BUSY_DAG, 12, 180_000), SHARDS);
  await h.store.triggerRun(parseDagId(BUSY_DAG));
  // A channel and a rule, so the Notifications page is measured with its tables, a long URL among them.
  const channel = await h.store.createNotificationChannel({ name: 'phone-hook', kind: 'slack', url: 'https://hooks.slack.com/services/T000000/B000000/a-rather-long-token-value' });
  await h.store.createNotificationRule({ channelId: channel.id, event: 'pool_no_worker', afterSeconds: 300, pool: 'gpu' });
  // A limit that one job holds while another waits, so the Limits page is measured with its list of who waits.
  await h.store.setResourceLimit({ name: 'phone-warehouse', capacity: 1 });
  await h.store.putDag(
    {
      id: 'phone-limited',
      schedule: { kind: 'manual' },
      tasks: ['load-a', 'load-b'].map((id) => ({ id, type: 'sleep', config: { durationMs: 180_000 }, resources: { 'phone-warehouse': 1 } })),
    },
    SHARDS,
  );
  await h.store.triggerRun(parseDagId('phone-limited'));
});

after(async () => {
  await h?.stop();
});

describe('console on a phone', () => {
  test('every page fits 390 px without scrolling sideways, and its menu opens, navigates and closes', async () => {
    const page = await phonePage();
    const signedOut = await phonePage(false);
    await signedOut.goto(`${h.consoleUrl}/signin`);
    await signedOut.getByTestId('signin-name').waitFor();
    await assertFits(signedOut, 'sign-in');
    await screenshot(signedOut, 'mobile-00-signin');
    await signedOut.context().close();

    for (const [i, c] of PAGES.entries()) {
      await page.goto(`${h.consoleUrl}${c.path()}`);
      await page.getByTestId(c.ready).first().waitFor({ timeout: 60_000 });
      // Charts take their measured width a frame after they appear.
      await page.waitForTimeout(300);
      await assertFits(page, c.name);
      await screenshot(page, `mobile-${String(i + 1).padStart(2, '0')}-${c.name.replace(/\W+/g, '-')}`);
      if (!c.shell) continue;

      await openMenu(page);
      await assertFits(page, `${c.name} with the menu open`);
      const target = page.getByTestId(c.goTo!.testId);
      assert.ok(await target.isVisible(), `the ${c.goTo!.testId} link is in the open drawer`);
      await target.click();
      await page.waitForURL((url) => url.pathname === c.goTo!.path);
      await assertMenuClosed(page, `after going from the ${c.name} to ${c.goTo!.path}`);
    }
    await page.context().close();
  });

  test('a table wider than the screen scrolls inside its card, not the page', async () => {
    const page = await phonePage();
    await page.goto(`${h.consoleUrl}/shards`);
    const table = page.getByTestId('leadership-history');
    await table.locator('tbody tr').first().waitFor({ timeout: 60_000 });
    const box = await table.evaluate((el) => {
      const scroller = el.parentElement!;
      return {
        table: el.getBoundingClientRect().width,
        room: scroller.clientWidth,
        overflowX: getComputedStyle(scroller).overflowX,
        scrolls: scroller.scrollWidth > scroller.clientWidth,
      };
    });
    assert.ok(box.table > box.room, `the leadership table needs more than its card at 390 px (${box.table} px in ${box.room} px)`);
    assert.equal(box.overflowX, 'auto');
    assert.ok(box.scrolls, 'its box scrolls sideways');
    await assertFits(page, 'shards');
    await page.context().close();
  });

  test('simulator: both sides of a comparison, with their charts and replay, fit the phone too', async () => {
    const page = await phonePage();
    await page.goto(`${h.consoleUrl}/simulator`);
    await page.getByTestId('sim-run').waitFor({ timeout: 60_000 });
    // 50 workers, a 50-job fan-out and five other DAGs: a few seconds of simulation per side.
    for (const [knob, value] of [
      ['workers', '50'],
      ['fanoutTasks', '50'],
      ['otherDags', '5'],
      ['seed', '1'],
    ] as const)
      await page.getByTestId(`sim-knob-${knob}`).fill(value);
    await page.getByTestId('sim-compare').click();
    for (const side of [0, 1]) {
      const view = page.getByTestId(`sim-side-${side}`);
      await view.waitFor({ timeout: 60_000 });
      await until(`side ${side} of the comparison to finish`, async () => ((await view.getAttribute('data-state')) === 'running' ? null : true), 120_000);
      assert.equal(await view.getAttribute('data-state'), 'done', (await page.getByTestId(`sim-status-${side}`).textContent()) ?? '');
    }
    await page.waitForTimeout(300);
    await assertFits(page, 'simulator with a comparison');
    await screenshot(page, 'mobile-13-simulator-compare');
    await page.context().close();
  });

  test('the menu closes on Escape and on a tap beside it; on a wide screen there is no menu button and the sidebar stays', async () => {
    const page = await phonePage();
    await page.goto(`${h.consoleUrl}/workers`);
    await openMenu(page);
    await page.screenshot({ path: join(ARTIFACTS, 'mobile-15-menu-open.png') });
    // The drawer runs from under the top bar to the foot of the screen, its account and time switch at the bottom.
    const drawer = await page.getByTestId('console-nav').boundingBox();
    assert.ok(drawer && Math.abs(drawer.y + drawer.height - PHONE.height) <= 1, `the drawer reaches the foot of the screen: ${JSON.stringify(drawer)}`);
    await page.keyboard.press('Escape');
    await assertMenuClosed(page, 'on Escape');
    await openMenu(page);
    await page.mouse.click(PHONE.width - 20, PHONE.height / 2);
    await assertMenuClosed(page, 'on a tap beside it');
    assert.equal(new URL(page.url()).pathname, '/workers', 'a tap beside the drawer goes nowhere');

    await page.setViewportSize({ width: 1440, height: 900 });
    await until('the wide layout', async () => !(await page.getByTestId('menu-button').isVisible()));
    assert.ok(await page.getByTestId('console-nav').isVisible(), 'the sidebar is always shown on a wide screen');
    await assertFits(page, 'workers at 1440 px');
    await screenshot(page, 'mobile-14-workers-wide');
    await page.context().close();
  });
});

describe('times', () => {
  test('every time names its zone; the UTC / local switch changes them and survives a reload', async () => {
    const page = await phonePage();
    await page.goto(`${h.consoleUrl}/runs/${runId}`);
    const scheduled = page.getByTestId('run-scheduled');
    await scheduled.waitFor({ timeout: 60_000 });
    const iso = (await scheduled.getAttribute('datetime'))!;
    assert.ok(iso, 'the time carries its instant in machine form');
    assert.equal(await page.getByTestId('zone-switch').getAttribute('data-choice'), 'local', 'local is the default');

    // Local: the browser's zone, labelled.
    let shown = shownTime(await scheduled.textContent());
    assert.equal(shown.clock, wallClock(iso, BROWSER_ZONE));
    assert.match(shown.label, BROWSER_LABEL);

    // The switch lives in the drawer on a phone; it changes the time shown at once.
    await openMenu(page);
    await page.getByTestId('zone-utc').click();
    assert.equal(await page.getByTestId('zone-utc').getAttribute('aria-pressed'), 'true');
    await until('the time to be shown in UTC', async () => ((await scheduled.textContent()) ?? '').endsWith(' UTC'), 5_000);
    shown = shownTime(await scheduled.textContent());
    assert.equal(shown.clock, wallClock(iso, 'UTC'));
    await screenshot(page, 'mobile-20-run-utc');

    // After a reload the choice holds; watched for a while, since the first paint is UTC anyway.
    await page.reload();
    await scheduled.waitFor({ timeout: 60_000 });
    for (let i = 0; i < 6; i++) {
      assert.equal(shownTime(await scheduled.textContent()).label, 'UTC', 'UTC is still chosen after a reload');
      await page.waitForTimeout(250);
    }
    assert.equal(await page.getByTestId('zone-switch').getAttribute('data-choice'), 'UTC');

    // The overview's store time carries its zone too.
    await page.goto(`${h.consoleUrl}/`);
    await until('the store time in UTC', async () => /^\d{2}:\d{2}:\d{2} UTC$/.test((await page.getByTestId('store-time').textContent()) ?? ''), 30_000);

    // A DAG's next run is in the DAG's own zone, labelled so, whichever way the switch is set.
    await page.goto(`${h.consoleUrl}/dags/${CRON_DAG}`);
    const nextRun = page.getByTestId('next-run');
    await nextRun.waitFor({ timeout: 60_000 });
    const next = shownTime(await nextRun.textContent());
    assert.match(next.clock, / 09:00:00$/, 'nine in the morning in New York');
    assert.match(next.label, /^E[SD]T$/);
    assert.equal(next.clock, wallClock((await nextRun.getAttribute('datetime'))!, 'America/New_York'));
    assert.match((await page.locator('.page-header .subtitle').textContent()) ?? '', /cron 0 9 \* \* \* \(America\/New_York\)/);

    await openMenu(page);
    await page.getByTestId('zone-local').click();
    assert.equal(await page.getByTestId('zone-switch').getAttribute('data-choice'), 'local');
    assert.equal(await nextRun.textContent(), `${next.clock} ${next.label}`, 'the switch leaves a schedule time in its own zone');

    // Back to local, which also holds after a reload, on another page.
    await page.goto(`${h.consoleUrl}/dags/${CHAIN_DAG}`);
    const row = page.getByTestId('run-history').locator('time').first();
    await row.waitFor({ timeout: 60_000 });
    await page.reload();
    await row.waitFor({ timeout: 60_000 });
    assert.match(shownTime(await row.textContent()).label, BROWSER_LABEL);
    assert.equal(await page.evaluate(() => window.localStorage.getItem('fenceline.time-zone')), 'local');
    await page.context().close();
  });
});
