import { describe, expect, it } from 'vitest';
import { NOTIFY_LIMITS, type NotificationEventItem } from '../../notify/notifications';
import type { LeaderToken } from '../../store';
import type { ContractContext } from './context';
import { refusedWith, unique } from './fixtures';

/**
 * The store contract's part on what operators read and do with notifications: channel URLs
 * masked in every read but the delivering leader's, and a dead notification retried.
 */
export function notificationReadsContract(c: ContractContext): void {
  describe('notification reads and retries', () => {
    const token = 'T0SECRET/B0SECRET/xoxbsecrettoken9876';
    const slackUrl = `https://hooks.slack.com/services/${token}`;
    const failedRun = (dagId: string): NotificationEventItem => ({ event: 'run_failed', dagId, subject: unique('run'), payload: {} });

    /** A led shard with a channel (the Slack URL unless told) and a rule for its DAG's failed runs, and one notification queued. */
    async function queued(url = slackUrl): Promise<{ token: LeaderToken; channelId: string; id: string }> {
      const { token: lead, dagId } = await c.leadFreshShard();
      const ch = await c.store.createNotificationChannel({ name: unique('chan'), kind: 'slack', url });
      await c.store.createNotificationRule({ channelId: ch.id, dagId, event: 'run_failed' });
      const [n] = await c.store.enqueueNotifications(lead, [failedRun(dagId)]);
      return { token: lead, channelId: ch.id, id: n!.id };
    }

    /** Fails the notification's every attempt, so it is dead. */
    async function kill(lead: LeaderToken, id: string, error = 'HTTP 500'): Promise<void> {
      for (let i = 0; i < NOTIFY_LIMITS.maxAttempts; i++) await c.store.recordDelivery(lead, id, { kind: 'failed', error });
    }

    it('masks a channel URL in its create and list answers, and gives the delivering leader the whole URL', async () => {
      const { token: lead, channelId } = await queued();
      const listed = (await c.store.listNotificationChannels()).find((ch) => ch.id === channelId);
      expect(listed?.url).toBe('https://hooks.slack.com/…9876');
      const created = await c.store.createNotificationChannel({ name: unique('chan'), kind: 'slack', url: `${slackUrl}-two` });
      expect(created.url).toBe('https://hooks.slack.com/…-two');
      expect(JSON.stringify(await c.store.listNotificationChannels())).not.toContain('secrettoken');
      const due = await c.store.dueNotifications(lead, 10);
      expect(due.map((n) => n.channel.url)).toEqual([slackUrl]);
    });

    it('masks a URL that a delivery error quotes', async () => {
      const { token: lead, id } = await queued();
      await c.store.dueNotifications(lead, 10);
      await c.store.recordDelivery(lead, id, { kind: 'failed', error: `no answer: could not reach ${slackUrl}` });
      const listed = (await c.store.listNotifications({ limit: 1000 })).find((n) => n.id === id);
      expect(listed?.lastError).toBe('no answer: could not reach https://hooks.slack.com/…9876');
    });

    it('puts a dead notification back to pending with no attempts, due now, keeping its last error', async () => {
      const { token: lead, id } = await queued();
      await kill(lead, id);
      const now = (await c.store.now()).getTime();
      const retried = await c.store.retryNotification(id);
      expect(retried).toMatchObject({ id, state: 'pending', attempts: 0, lastError: 'HTTP 500', claimedEpoch: null });
      expect(Math.abs(retried.nextAttemptAt.getTime() - now)).toBeLessThan(5_000);
      expect((await c.store.listNotifications({ state: 'dead', limit: 1000 })).some((n) => n.id === id)).toBe(false);
      expect((await c.store.dueNotifications(lead, 10)).map((n) => n.id)).toEqual([id]);
      // It is pending again: a second retry is refused and changes nothing.
      expect((await refusedWith(c.store.retryNotification(id), 'INVALID_INPUT')).details).toMatchObject({ field: 'id' });
      const delivered = await c.store.recordDelivery(lead, id, { kind: 'delivered' });
      expect(delivered).toMatchObject({ state: 'delivered', attempts: 1 });
    });

    it('refuses to retry a delivered notification, one whose channel is gone, or an unknown one, changing nothing', async () => {
      const { token: lead, id } = await queued();
      await c.store.dueNotifications(lead, 10);
      await c.store.recordDelivery(lead, id, { kind: 'delivered' });
      expect((await refusedWith(c.store.retryNotification(id), 'INVALID_INPUT')).details).toMatchObject({ field: 'id' });
      expect((await c.store.listNotifications({ limit: 1000 })).find((n) => n.id === id)).toMatchObject({ state: 'delivered', attempts: 1 });

      const orphan = await queued();
      await kill(orphan.token, orphan.id);
      await c.store.deleteNotificationChannel(orphan.channelId);
      expect((await refusedWith(c.store.retryNotification(orphan.id), 'INVALID_INPUT')).details).toMatchObject({ field: 'id' });
      expect((await c.store.listNotifications({ limit: 1000 })).find((n) => n.id === orphan.id)).toMatchObject({ state: 'dead', attempts: NOTIFY_LIMITS.maxAttempts });

      await refusedWith(c.store.retryNotification('999999999999'), 'NOT_FOUND');
      await refusedWith(c.store.retryNotification('not-an-id'), 'NOT_FOUND');
    });
  });
}
