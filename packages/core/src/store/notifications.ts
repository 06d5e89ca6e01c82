import type { ListNotificationsQuery, NewNotificationChannel, NewNotificationRule, NotificationChannelRow, NotificationRow, NotificationRuleRow } from '../notify/notifications';

/**
 * Notification channels and rules, set by operators, and the notifications, read by the
 * console and the CLI. A channel's secret is written here and read back by no list: a
 * row says only whether one is set. Its URL, which may hold a credential too, is read back
 * masked (maskChannelUrl) by every call here; only NotificationLeaderStore.dueNotifications,
 * which the delivering leader calls, carries it whole.
 */
export interface NotificationStore {
  /** Throws InvalidInputError naming the field (name empty or taken, kind, url not http(s), secret); a refusal stores nothing. */
  createNotificationChannel(input: NewNotificationChannel): Promise<NotificationChannelRow>;
  listNotificationChannels(): Promise<NotificationChannelRow[]>;
  /** Deletes the channel and its rules; false if there was none. Its notifications stay, and are no longer due. */
  deleteNotificationChannel(id: string): Promise<boolean>;
  /** Throws InvalidInputError naming the field (an unknown channel, event or a bad DAG id); a refusal stores nothing. */
  createNotificationRule(input: NewNotificationRule): Promise<NotificationRuleRow>;
  listNotificationRules(): Promise<NotificationRuleRow[]>;
  deleteNotificationRule(id: string): Promise<boolean>;
  /** Notifications newest first, optionally of one state, at most `limit` (100 by default, 1,000 at most). */
  listNotifications(query: ListNotificationsQuery): Promise<NotificationRow[]>;
  /**
   * Puts a dead notification back to pending, due now, with its attempts at 0 (its last
   * error is kept, to show what failed before). Throws NotFoundError for an unknown id, and
   * InvalidInputError naming `id` for one that is not dead or whose channel was deleted,
   * changing nothing.
   */
  retryNotification(id: string): Promise<NotificationRow>;
}
