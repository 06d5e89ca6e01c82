import { sql, type SQL } from 'drizzle-orm';
import {
  checkChannelInput,
  checkDeliveryOutcome,
  checkEventItems,
  checkListNotificationsQuery,
  checkRuleInput,
  InvalidInputError,
  maskChannelUrl,
  maskUrlsIn,
  NotFoundError,
  NOTIFY_LIMITS,
  type DeliveryOutcome,
  type DueNotification,
  type ListNotificationsQuery,
  type NewNotificationChannel,
  type NewNotificationRule,
  type NotificationChannelRow,
  type NotificationEventItem,
  type NotificationRow,
  type NotificationRuleRow,
  type RunEnd,
  type RunId,
} from '@fenceline/core';
import { type LeaderToken } from '@fenceline/core/store';
import { array, firstRow, msInterval, rows, type Executor, type RawRow } from './db';
import { leadCte, selectWithLead, writtenRows } from './lead';
import { isId, str, strOrNull, toDate, toDateOrNull, toId, toNumber, toNumberOrNull, toRunId } from './rows';

/**
 * Notification channels, rules and notifications (NotificationStore and
 * NotificationLeaderStore). Every leader statement carries the lead check of lead.ts, so
 * a deposed leader queues, claims and records nothing; the dedupe key's unique index makes
 * an event queued twice one notification.
 */

const CHANNEL_COLUMNS = sql`id, name, kind, url, secret is not null as has_secret, created_at`;
const RULE_COLUMNS = sql`id, channel_id, dag_id, event, after_seconds, pool, created_at`;
export const NOTIFICATION_COLUMNS = sql`id, dedupe_key, rule_id, channel_id, shard, dag_id, event, payload, state, attempts, next_attempt_at, last_error, claimed_epoch, created_at, delivered_at`;

/** A channel as every read shows it, its URL masked; the delivering leader reads it whole in dueNotifications. */
function channelFromRow(r: RawRow): NotificationChannelRow {
  return {
    id: toId(r.id),
    name: str(r.name),
    kind: str(r.kind) as NotificationChannelRow['kind'],
    url: maskChannelUrl(str(r.url)),
    hasSecret: r.has_secret === true,
    createdAt: toDate(r.created_at),
  };
}

function ruleFromRow(r: RawRow): NotificationRuleRow {
  return {
    id: toId(r.id),
    channelId: toId(r.channel_id),
    dagId: strOrNull(r.dag_id),
    event: str(r.event) as NotificationRuleRow['event'],
    afterSeconds: r.after_seconds === null || r.after_seconds === undefined ? null : Number(r.after_seconds),
    pool: strOrNull(r.pool),
    createdAt: toDate(r.created_at),
  };
}

export function notificationFromRow(r: RawRow): NotificationRow {
  return {
    id: toId(r.id),
    dedupeKey: str(r.dedupe_key),
    ruleId: toId(r.rule_id),
    channelId: toId(r.channel_id),
    shard: toNumber(r.shard),
    dagId: strOrNull(r.dag_id),
    event: str(r.event) as NotificationRow['event'],
    payload: (r.payload as Record<string, unknown> | null) ?? {},
    state: str(r.state) as NotificationRow['state'],
    attempts: toNumber(r.attempts),
    nextAttemptAt: toDate(r.next_attempt_at),
    // An error may quote the address a delivery failed to reach; it is shown masked like the channel's URL.
    lastError: r.last_error === null || r.last_error === undefined ? null : maskUrlsIn(str(r.last_error)),
    claimedEpoch: toNumberOrNull(r.claimed_epoch),
    createdAt: toDate(r.created_at),
    deliveredAt: toDateOrNull(r.delivered_at),
  };
}

export async function createNotificationChannel(db: Executor, input: NewNotificationChannel): Promise<NotificationChannelRow> {
  const c = checkChannelInput(input);
  const row = await firstRow(
    db,
    sql`insert into notification_channels (name, kind, url, secret) values (${c.name}, ${c.kind}, ${c.url}, ${c.secret}::text)
        on conflict (name) do nothing returning ${CHANNEL_COLUMNS}`,
  );
  if (!row) throw new InvalidInputError(`name: a channel named ${c.name} already exists`, { field: 'name' });
  return channelFromRow(row);
}

export async function listNotificationChannels(db: Executor): Promise<NotificationChannelRow[]> {
  return (await rows(db, sql`select ${CHANNEL_COLUMNS} from notification_channels order by name`)).map(channelFromRow);
}

export async function deleteNotificationChannel(db: Executor, id: string): Promise<boolean> {
  if (!isId(id)) return false;
  return (await firstRow(db, sql`delete from notification_channels where id = ${id} returning id`)) !== undefined;
}

export async function createNotificationRule(db: Executor, input: NewNotificationRule): Promise<NotificationRuleRow> {
  const r = checkRuleInput(input);
  // One statement: the rule is inserted only if its channel exists, so a channel deleted
  // meanwhile cannot leave a rule behind (the foreign key would refuse it anyway).
  const row = isId(r.channelId)
    ? await firstRow(
        db,
        sql`insert into notification_rules (channel_id, dag_id, event, after_seconds, pool)
            select id, ${r.dagId}::text, ${r.event}, ${r.afterSeconds}::integer, ${r.pool}::text from notification_channels where id = ${r.channelId}
            returning ${RULE_COLUMNS}`,
      )
    : undefined;
  if (!row) throw new InvalidInputError(`channelId: no channel ${r.channelId}`, { field: 'channelId' });
  return ruleFromRow(row);
}

export async function listNotificationRules(db: Executor): Promise<NotificationRuleRow[]> {
  return (await rows(db, sql`select ${RULE_COLUMNS} from notification_rules order by id`)).map(ruleFromRow);
}

export async function deleteNotificationRule(db: Executor, id: string): Promise<boolean> {
  if (!isId(id)) return false;
  return (await firstRow(db, sql`delete from notification_rules where id = ${id} returning id`)) !== undefined;
}

export async function listNotifications(db: Executor, query: ListNotificationsQuery): Promise<NotificationRow[]> {
  const q = checkListNotificationsQuery(query);
  const where: SQL = q.state === null ? sql`true` : sql`state = ${q.state}`;
  return (await rows(db, sql`select ${NOTIFICATION_COLUMNS} from notifications where ${where} order by id desc limit ${q.limit}`)).map(notificationFromRow);
}

export async function retryNotification(db: Executor, id: string): Promise<NotificationRow> {
  if (!isId(id)) throw new NotFoundError(`no notification ${id}`);
  // One statement: the row is locked, checked and changed together, so a leader that records
  // a delivery meanwhile (it changes only pending rows) cannot be undone or doubled here.
  const row = await firstRow(
    db,
    sql`with t as (
          select n.id, n.state, exists (select 1 from notification_channels ch where ch.id = n.channel_id) as has_channel
          from notifications n where n.id = ${id} for update
        ),
        w as (
          update notifications n set state = 'pending', attempts = 0, next_attempt_at = now(), claimed_epoch = null
          from t where n.id = t.id and t.state = 'dead' and t.has_channel
          returning n.*
        )
        select t.state as prior_state, t.has_channel, w.* from t left join w on true`,
  );
  if (!row) throw new NotFoundError(`no notification ${id}`);
  if (row.id === null || row.id === undefined) {
    const prior = str(row.prior_state);
    if (prior !== 'dead') throw new InvalidInputError(`id: notification ${id} is ${prior}; only a dead notification is retried`, { field: 'id' });
    throw new InvalidInputError(`id: the channel of notification ${id} was deleted, so it cannot be sent again`, { field: 'id' });
  }
  return notificationFromRow(row);
}

export async function enqueueNotifications(db: Executor, token: LeaderToken, items: NotificationEventItem[]): Promise<NotificationRow[]> {
  checkEventItems(items);
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        items as (
          select * from unnest(${array(
            items.map((i) => i.event),
            'text',
          )}, ${array(
            items.map((i) => i.dagId),
            'text',
          )}, ${array(
            items.map((i) => i.subject),
            'text',
          )}, ${array(
            items.map((i) => JSON.stringify(i.payload ?? {})),
            'text',
          )}) as i(event, dag_id, subject, payload)
        ),
        w as (
          insert into notifications (dedupe_key, rule_id, channel_id, shard, dag_id, event, payload)
          select i.event || ':' || i.subject || ':' || r.id::text, r.id, r.channel_id, lead.shard, i.dag_id, i.event, i.payload::jsonb
          from items i join notification_rules r on r.event = i.event and (r.dag_id is null or r.dag_id = i.dag_id) cross join lead
          order by r.id
          on conflict (dedupe_key) do nothing
          returning ${NOTIFICATION_COLUMNS}
        )
        ${selectWithLead('id')}`,
  );
  return writtenRows(result, token, 'enqueueNotifications').map(notificationFromRow);
}

/** An ISO-8601 text of a timestamp in UTC with milliseconds, as Date.toISOString writes it. */
export function isoText(column: SQL): SQL {
  return sql`to_char((${column}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

export async function catchUpNotifications(db: Executor, token: LeaderToken): Promise<NotificationRow[]> {
  // The payloads and subjects are the ones the leader builds (Notifier.runEnded and
  // Notifier.taskFailed), so a notification the live path queued already is the same key
  // and nothing new. A recovery is a succeeded run whose previous ended run of the DAG
  // (by scheduled time, as previousRunEnd judges it) failed. Each part is read only while a
  // rule of its event exists (a one-time check the planner makes before the scan), so a
  // takeover in a cluster without such rules scans none of the shard's ended runs or jobs.
  const window = msInterval(NOTIFY_LIMITS.catchUpMs);
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        ended as (
          select 'run_failed' as event, r.id::text as subject, r.dag_id, r.ended_at,
            jsonb_build_object('runId', r.id::text, 'dagId', r.dag_id, 'scheduledAt', ${isoText(sql`r.scheduled_at`)}, 'state', 'failed') as payload
          from runs r join lead on r.shard = lead.shard
          where r.state = 'failed' and r.ended_at > now() - ${window} and exists (select 1 from notification_rules where event = 'run_failed')
          union all
          select 'run_recovered', r.id::text, r.dag_id, r.ended_at,
            jsonb_build_object('runId', r.id::text, 'dagId', r.dag_id, 'scheduledAt', ${isoText(sql`r.scheduled_at`)}, 'state', 'succeeded')
          from runs r join lead on r.shard = lead.shard
          where r.state = 'succeeded' and r.ended_at > now() - ${window} and exists (select 1 from notification_rules where event = 'run_recovered')
            and (select p.state from runs p
                 where p.dag_id = r.dag_id and (p.scheduled_at, p.id) < (r.scheduled_at, r.id) and p.state in ('succeeded', 'failed', 'cancelled')
                 order by p.scheduled_at desc, p.id desc limit 1) = 'failed'
          union all
          select 'task_failed', j.id::text, j.dag_id, j.ended_at,
            jsonb_build_object('runId', j.run_id::text, 'jobId', j.id::text, 'taskId', j.task_id, 'dagId', j.dag_id)
          from jobs j join lead on j.shard = lead.shard
          where j.state = 'failed' and j.ended_at > now() - ${window} and exists (select 1 from notification_rules where event = 'task_failed')
        ),
        w as (
          insert into notifications (dedupe_key, rule_id, channel_id, shard, dag_id, event, payload)
          select e.event || ':' || e.subject || ':' || r.id::text, r.id, r.channel_id, lead.shard, e.dag_id, e.event, e.payload
          from ended e join notification_rules r on r.event = e.event and (r.dag_id is null or r.dag_id = e.dag_id) and r.created_at <= e.ended_at
          cross join lead
          order by e.ended_at, e.subject, r.id
          on conflict (dedupe_key) do nothing
          returning ${NOTIFICATION_COLUMNS}
        )
        ${selectWithLead('id')}`,
  );
  return writtenRows(result, token, 'catchUpNotifications').map(notificationFromRow);
}

export async function dueNotifications(db: Executor, token: LeaderToken, limit: number): Promise<DueNotification[]> {
  const bounded = Math.max(1, Math.min(Math.floor(limit), NOTIFY_LIMITS.maxDueLimit));
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        c as (
          select n.id from notifications n join notification_channels ch on ch.id = n.channel_id
          where n.shard = (select shard from lead) and n.state = 'pending'
            and (n.next_attempt_at <= now() or n.claimed_epoch < ${token.epoch})
          order by n.next_attempt_at, n.id limit ${bounded}
          for update of n skip locked
        ),
        w as (
          update notifications n set claimed_epoch = ${token.epoch}, next_attempt_at = now() + ${msInterval(NOTIFY_LIMITS.claimMs)}
          from c where n.id = c.id
          returning n.*
        )
        select exists (select 1 from lead) as led, w.id is not null as w_found, w.*,
          ch.kind as channel_kind, ch.url as channel_url, ch.secret as channel_secret
        from (select 1) as one left join w on true left join notification_channels ch on ch.id = w.channel_id
        order by w.id`,
  );
  return writtenRows(result, token, 'dueNotifications').map((r) => ({
    ...notificationFromRow(r),
    channel: { kind: str(r.channel_kind) as DueNotification['channel']['kind'], url: str(r.channel_url), secret: strOrNull(r.channel_secret) },
  }));
}

export async function recordDelivery(db: Executor, token: LeaderToken, notificationId: string, outcome: DeliveryOutcome): Promise<NotificationRow | null> {
  const o = checkDeliveryOutcome(outcome);
  if (!isId(notificationId)) return null;
  const delivered = o.kind === 'delivered';
  const error = o.kind === 'failed' ? o.error : null;
  // A failure ends the claim (claimed_epoch null), so only the backoff decides when the
  // notification is due again. The backoff after the (attempts + 1)-th failure is notificationBackoffMs(attempts + 1),
  // computed here on the store's clock: 5 s doubling per earlier attempt, at most 10 minutes.
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        w as (
          update notifications n set
            attempts = n.attempts + 1,
            state = case when ${delivered} then 'delivered' when n.attempts + 1 >= ${NOTIFY_LIMITS.maxAttempts} then 'dead' else 'pending' end,
            delivered_at = case when ${delivered} then now() else null end,
            last_error = case when ${delivered} then n.last_error else ${error}::text end,
            claimed_epoch = case when ${delivered} then ${token.epoch}::bigint else null end,
            next_attempt_at = case when ${delivered} then n.next_attempt_at
              else now() + least(${NOTIFY_LIMITS.baseBackoffMs}::float8 * power(2, least(n.attempts, 30)), ${NOTIFY_LIMITS.maxBackoffMs}::float8) * interval '1 millisecond' end
          from lead
          where n.id = ${notificationId} and n.shard = lead.shard and n.state = 'pending'
          returning n.*
        )
        ${selectWithLead('id')}`,
  );
  const written = writtenRows(result, token, 'recordDelivery');
  return written[0] ? notificationFromRow(written[0]) : null;
}

/**
 * For each run, the state of its DAG's latest ended run scheduled before it (what a
 * recovery is judged by), in one statement for the whole batch; a run with no earlier
 * ended run, or an id that is not a run, is left out of the answer. With watchedOnly, so is
 * a run of a DAG no run_recovered rule watches; the uncorrelated exists is a one-time
 * filter, so while no such rule exists the statement reads no run at all.
 */
export async function previousRunEnds(db: Executor, runIds: readonly RunId[], options: { watchedOnly?: boolean } = {}): Promise<Map<RunId, RunEnd>> {
  const ids = [...new Set(runIds.filter(isId))];
  const ends = new Map<RunId, RunEnd>();
  if (ids.length === 0) return ends;
  const result = await rows(
    db,
    sql`select r.id, p.state from runs r
        cross join lateral (
          select p.state from runs p
          where p.dag_id = r.dag_id and (p.scheduled_at, p.id) < (r.scheduled_at, r.id) and p.state in ('succeeded', 'failed', 'cancelled')
          order by p.scheduled_at desc, p.id desc limit 1
        ) p
        where r.id = any(${array(ids, 'bigint')}) ${
          options.watchedOnly
            ? sql`and exists (select 1 from notification_rules where event = 'run_recovered')
                and exists (select 1 from notification_rules nr where nr.event = 'run_recovered' and (nr.dag_id is null or nr.dag_id = r.dag_id))`
            : sql``
        }`,
  );
  for (const row of result) ends.set(toRunId(row.id), str(row.state) as RunEnd);
  return ends;
}
