import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { NOTIFY_LIMITS, parseDagId, shardOf, type DagSpecInput, type NotificationRow } from '@fenceline/core';
import { ADMIN, SHARDS, VIEWER, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';
import { registerSecret } from '../test/support/run-logs';
import { Receiver } from '../test/support/webhook-receiver';

/**
 * The Notifications page in real Chromium against a real cluster and a real webhook
 * receiver on 127.0.0.1: an admin adds a signed channel (a bad URL is refused next to its
 * field, the URL is shown masked) and a run_failed rule, a run fails and its notification
 * shows delivered; a dead letter is retried from its view once its receiver is fixed; and a
 * viewer sees it all without a control.
 */

const SECRET = 'e2e-notify-secret-0123';
/** The path part a masked URL must not show: a receiver's URL often is its credential. */
const HOOK_PATH = '/hooks/e2e-delivery-endpoint';
const BROKEN_PATH = '/hooks/e2e-broken-receiver';
const FAILING_DAG = 'e2e-notify-fails';
const DEAD_DAG = 'e2e-notify-dead';

let h: Harness;
let page: Page;
const receiver = new Receiver(SECRET);
/** The status each path answers with (200 unless told), so one receiver stands for a healthy channel and a broken one. */
const statusOf = new Map<string, number>();
receiver.answer = (r) => statusOf.get(r.path) ?? 200;
const at = (path: string) => receiver.received.filter((r) => r.path === path);

/** A DAG of one task that fails on its only attempt. */
function failing(id: string): DagSpecInput {
  return { id, schedule: { kind: 'manual' }, tasks: [{ id: 'boom', type: 'flaky', config: { succeedOnAttempt: 99 }, retries: 0 }] };
}

async function failedRun(dagId: string): Promise<string> {
  await h.store.putDag(failing(dagId), SHARDS);
  const run = await h.store.triggerRun(parseDagId(dagId));
  await until('the run to fail', async () => (await h.store.getRun(run.id)).state === 'failed', 30_000);
  return run.id;
}

async function notificationOf(dagId: string): Promise<NotificationRow | undefined> {
  return (await h.store.listNotifications({ limit: 1000 })).find((n) => n.dagId === dagId);
}

before(async () => {
  // The channel's secret and its URL's path are the run's secrets: no process may log them.
  registerSecret("the e2e channel's secret", SECRET);
  registerSecret("the path of the e2e channel's URL", HOOK_PATH);
  await receiver.start();
  h = await startHarness();
  page = await signedInPage(h, ADMIN);
});

after(async () => {
  await h?.stop();
  await receiver.stop();
});

describe('notifications', () => {
  test('an admin adds a channel and a run_failed rule, and sees the failed run’s notification delivered', async () => {
    await page.goto(`${h.consoleUrl}/notifications`);
    await page.getByTestId('channel-form').waitFor();
    await page.getByTestId('channel-name').fill('e2e-hook');
    await page.getByTestId('channel-url').fill(`ftp://127.0.0.1${HOOK_PATH}`);
    await page.getByTestId('channel-add').click();
    const urlError = page.getByTestId('field-error-url');
    await urlError.waitFor();
    assert.match((await urlError.textContent()) ?? '', /url must be an http or https URL/);
    assert.equal(await page.getByTestId('field-error-name').count(), 0, 'the refusal is shown next to the field it names only');
    assert.deepEqual(await h.store.listNotificationChannels(), [], 'a refused channel is not stored');

    await page.getByTestId('channel-url').fill(`${receiver.url}${HOOK_PATH}`);
    await page.getByTestId('channel-secret').fill(SECRET);
    await page.getByTestId('channel-add').click();
    const row = page.getByTestId('channel-e2e-hook');
    await row.waitFor();
    assert.equal(await page.getByTestId('field-error-url').count(), 0, 'the earlier refusal is gone once the add succeeds');
    assert.equal(await page.getByTestId('channel-e2e-hook-url').textContent(), `${receiver.url}/…oint`);
    assert.equal(await page.getByTestId('channel-e2e-hook-signed').textContent(), 'signed');
    const shown = await page.content();
    assert.ok(!shown.includes(HOOK_PATH), 'the page never shows the URL’s path');
    assert.ok(!shown.includes(SECRET), 'the page never shows the secret');
    assert.equal((await h.store.listAudit({ action: 'notify.channel_created' }))[0]?.actor, ADMIN.name);

    // The form asks for what the chosen event takes, and no more.
    const event = page.getByTestId('rule-event');
    assert.equal(await page.getByTestId('rule-after').count(), 0);
    await event.selectOption('deadline_missed');
    await page.getByTestId('rule-after').waitFor();
    assert.equal(await page.getByTestId('rule-pool').count(), 0);
    await page.getByTestId('rule-add').click();
    await page.getByTestId('field-error-afterSeconds').waitFor();
    assert.deepEqual(await h.store.listNotificationRules(), [], 'a timed rule without its seconds is not stored');
    await event.selectOption('pool_no_worker');
    await page.getByTestId('rule-pool').waitFor();
    assert.equal(await page.getByTestId('rule-dag').count(), 0, 'a cluster event names no DAG');
    await event.selectOption('run_failed');
    assert.equal(await page.getByTestId('rule-after').count(), 0);
    await page.getByTestId('rule-dag').fill(FAILING_DAG);
    await page.getByTestId('rule-add').click();
    const [rule] = await until('the rule to be stored', async () => {
      const rules = await h.store.listNotificationRules();
      return rules.length > 0 ? rules : null;
    });
    assert.equal(rule?.dagId, FAILING_DAG);
    await page.getByTestId(`rule-${rule!.id}`).waitFor();
    assert.equal(await page.getByTestId(`rule-${rule!.id}-dag`).textContent(), FAILING_DAG);

    const runId = await failedRun(FAILING_DAG);
    const delivered = await until(
      'the notification recorded delivered',
      async () => {
        const n = await notificationOf(FAILING_DAG);
        return n?.state === 'delivered' ? n : null;
      },
      30_000,
    );
    await until('the delivered row on the page', async () => (await page.getByTestId(`notification-${delivered.id}`).getAttribute('data-state')) === 'delivered', 15_000);
    // The state filter lists only the notifications in the chosen state.
    const filter = page.getByTestId('notifications-state');
    await filter.selectOption('dead');
    await page.getByTestId(`notification-${delivered.id}`).waitFor({ state: 'detached' });
    await filter.selectOption('delivered');
    await page.getByTestId(`notification-${delivered.id}`).waitFor();
    await filter.selectOption('');
    const [hook] = at(HOOK_PATH);
    assert.equal(hook?.event, 'run_failed');
    assert.ok(hook?.signatureOk, 'the receiver got a body signed with the channel’s secret');
    assert.deepEqual((hook?.body.data as { runId?: string } | undefined)?.runId, runId);
    await screenshot(page, '50-notifications-delivered');

    // An admin's page has both forms; at a phone's width they wrap, and nothing sticks out sideways.
    const phone = await signedInPage(h, ADMIN, { width: 390, height: 844 });
    await phone.goto(`${h.consoleUrl}/notifications`);
    await phone.getByTestId('channel-e2e-hook').waitFor();
    const widths = await phone.evaluate(() => ({ page: document.documentElement.scrollWidth, window: window.innerWidth }));
    assert.ok(widths.page <= widths.window, `the page is ${widths.page} px wide in a ${widths.window} px window`);
    await screenshot(phone, '53-notifications-admin-phone');
    await phone.context().close();
  });

  test('an operator retries a dead letter from its view once the receiver is fixed, and it is delivered', async () => {
    statusOf.set(BROKEN_PATH, 500);
    const channel = await h.store.createNotificationChannel({ name: 'e2e-broken', kind: 'webhook', url: `${receiver.url}${BROKEN_PATH}`, secret: SECRET });
    await h.store.createNotificationRule({ channelId: channel.id, dagId: DEAD_DAG, event: 'run_failed' });
    await failedRun(DEAD_DAG);
    const queued = await until('the notification to be queued', () => notificationOf(DEAD_DAG), 20_000);
    // Dying takes eight failed attempts with a backoff of minutes, so the test records the
    // rest of them as the shard's current leader would, under that leader's own token.
    const shard = shardOf(parseDagId(DEAD_DAG), SHARDS);
    await until(
      'the notification to be dead',
      async () => {
        const lease = (await h.store.listShards()).find((s) => s.shard === shard);
        if (!lease?.holder) return false;
        for (let i = 0; i < NOTIFY_LIMITS.maxAttempts; i++) {
          await h.store.recordDelivery({ shard, nodeId: lease.holder, epoch: lease.epoch }, queued.id, { kind: 'failed', error: 'the receiver answered HTTP 500' });
        }
        return (await notificationOf(DEAD_DAG))?.state === 'dead';
      },
      30_000,
    );

    const operator = await signedInPage(h);
    await operator.goto(`${h.consoleUrl}/notifications`);
    const deadRow = operator.getByTestId(`dead-${queued.id}`);
    await deadRow.waitFor();
    assert.equal(await operator.getByTestId(`dead-${queued.id}-attempts`).textContent(), String(NOTIFY_LIMITS.maxAttempts));
    assert.match((await operator.getByTestId(`dead-${queued.id}-error`).textContent()) ?? '', /HTTP 500/);
    assert.equal(await operator.getByTestId('channel-form').count(), 0, 'an operator adds no channel');
    await screenshot(operator, '51-notifications-dead-letter');

    const viewer = await signedInPage(h, VIEWER);
    await viewer.goto(`${h.consoleUrl}/notifications`);
    await viewer.getByTestId(`dead-${queued.id}`).waitFor();
    assert.equal(await viewer.getByTestId(`dead-retry-${queued.id}`).count(), 0, 'a viewer sees the dead letter without Retry');
    await viewer.context().close();

    statusOf.set(BROKEN_PATH, 200);
    const callsBefore = at(BROKEN_PATH).length;
    await operator.getByTestId(`dead-retry-${queued.id}`).click();
    await deadRow.waitFor({ state: 'detached' });
    await until('the retried notification delivered', async () => (await notificationOf(DEAD_DAG))?.state === 'delivered', 30_000);
    await until('the delivered row on the page', async () => (await operator.getByTestId(`notification-${queued.id}`).getAttribute('data-state')) === 'delivered', 15_000);
    assert.ok(at(BROKEN_PATH).length > callsBefore, 'the receiver was called again after the retry');
    const [entry] = await h.store.listAudit({ action: 'notify.retried' });
    assert.equal(entry?.target, queued.id);
    await operator.context().close();
  });

  test('a viewer sees channels, rules and notifications without a control, and the API refuses a viewer’s changes', async () => {
    const viewer = await signedInPage(h, VIEWER);
    await viewer.goto(`${h.consoleUrl}/notifications`);
    await viewer.getByTestId('channel-e2e-hook').waitFor();
    await viewer.getByTestId('notifications-table').waitFor();
    await viewer.getByTestId('channel-read-only').waitFor();
    await viewer.getByTestId('rule-read-only').waitFor();
    for (const form of ['channel-form', 'rule-form']) assert.equal(await viewer.getByTestId(form).count(), 0, form);
    assert.equal(await viewer.locator('[data-testid^="channel-delete-"], [data-testid^="rule-delete-"], [data-testid^="dead-retry-"]').count(), 0);
    // A plain loop: a function declared inside the page's code would be rewritten by the test's compiler into a helper the page lacks.
    const statuses = await viewer.evaluate(async () => {
      const answers: number[] = [];
      for (const [path, json] of [
        ['notifications.retry', { id: '1' }],
        ['notifications.deleteRule', { id: '1' }],
        ['notifications.deleteChannel', { id: '1' }],
      ] as const) {
        const res = await fetch(`/api/trpc/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ json }) });
        answers.push(res.status);
      }
      return answers;
    });
    assert.deepEqual(statuses, [403, 403, 403]);
    assert.equal((await h.store.listNotificationChannels()).length, 2, 'the viewer changed nothing');
    await screenshot(viewer, '52-notifications-viewer');
    await viewer.context().close();
  });
});
