import { sql } from 'drizzle-orm';
import { checkDeadlineChecks, deadlineSubject, NOTIFY_LIMITS, type DeadlineCheck, type NotificationRow, type NotificationWatch, type Schedule } from '@fenceline/core';
import { type LeaderToken } from '@fenceline/core/store';
import { array, msInterval, rows, type Executor } from './db';
import { leadCte, selectWithLead, writtenRows } from './lead';
import { isoText, NOTIFICATION_COLUMNS, notificationFromRow } from './notifications';
import { str, toDate, toId, toNumber } from './rows';

/**
 * The timed notifications: deadlines missed and the cluster's health (shards without a
 * leader, pools without a live worker). A leader's check reads what to watch in one
 * statement and queues what it finds in one more, under its lead check; the dedupe key
 * names the episode (a DAG's slot, a shard's epoch, a pool's last worker), so two leaders
 * across a failover queue one notification.
 */

export async function notificationWatch(db: Executor, shards: number[]): Promise<NotificationWatch> {
  // Rules first, then the DAGs they cover, in one statement. With no deadline rule the DAG
  // part reads nothing: the uncorrelated `exists (select 1 from dr)` is a one-time filter
  // checked before the scan, where the correlated one alone was checked per DAG (56 ms a
  // check over 63,000 DAGs with no rule at all).
  const result = await rows(
    db,
    sql`with dr as (select id, dag_id, after_seconds, created_at from notification_rules where event = 'deadline_missed')
        select 'rule' as kind, now() as now, dr.id::text as id, dr.dag_id, dr.after_seconds, dr.created_at, null::int as shard, null::jsonb as schedule,
          exists (select 1 from notification_rules where event in ('shard_leaderless', 'pool_no_worker')) as cluster_rules
        from (select 1) one left join dr on true
        union all
        select 'dag', now(), d.id, null, null, d.created_at, d.shard, v.spec->'schedule', false
        from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version
        where exists (select 1 from dr)
          and d.shard = any(${array(shards, 'int')}) and v.spec->'schedule'->>'kind' in ('cron', 'interval')
          and exists (select 1 from dr where dr.dag_id is null or dr.dag_id = d.id)`,
  );
  const head = result.find((r) => r.kind === 'rule')!;
  return {
    now: toDate(head.now),
    deadlineRules: result
      .filter((r) => r.kind === 'rule' && r.id !== null)
      .map((r) => ({ id: toId(r.id), dagId: r.dag_id === null ? null : str(r.dag_id), afterSeconds: toNumber(r.after_seconds), createdAt: toDate(r.created_at) }))
      .sort((a, b) => Number(a.id) - Number(b.id)),
    dags: result
      .filter((r) => r.kind === 'dag')
      .map((r) => ({ id: str(r.id), shard: toNumber(r.shard), schedule: r.schedule as Schedule, createdAt: toDate(r.created_at) }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    clusterRules: head.cluster_rules === true,
  };
}

export async function enqueueMissedDeadlines(db: Executor, token: LeaderToken, checks: DeadlineCheck[]): Promise<NotificationRow[]> {
  checkDeadlineChecks(checks);
  // The subject and the payload's scheduledAt are the slot's JavaScript ISO text, so both
  // stores build the same key. A run meets the deadline only by succeeding by it.
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        c as (
          select * from unnest(${array(
            checks.map((c) => c.ruleId),
            'bigint',
          )}, ${array(
            checks.map((c) => c.dagId),
            'text',
          )}, ${array(
            checks.map((c) => c.scheduledAt.toISOString()),
            'timestamptz',
          )}, ${array(
            checks.map((c) => deadlineSubject(c.dagId, c.scheduledAt)),
            'text',
          )}) as c(rule_id, dag_id, scheduled_at, subject)
        ),
        m as (
          select c.*, r.channel_id, r.after_seconds, r.created_at as rule_created_at, run.id as run_id, run.state as run_state, run.ended_at as run_ended_at,
            c.scheduled_at + r.after_seconds * interval '1 second' as deadline
          from c
          join notification_rules r on r.id = c.rule_id and r.event = 'deadline_missed' and (r.dag_id is null or r.dag_id = c.dag_id)
          join dags d on d.id = c.dag_id and d.created_at <= c.scheduled_at
          join lead on d.shard = lead.shard
          left join runs run on run.dag_id = c.dag_id and run.scheduled_at = c.scheduled_at
        ),
        w as (
          insert into notifications (dedupe_key, rule_id, channel_id, shard, dag_id, event, payload)
          select 'deadline_missed:' || m.subject || ':' || m.rule_id::text, m.rule_id, m.channel_id, lead.shard, m.dag_id, 'deadline_missed',
            jsonb_build_object('dagId', m.dag_id, 'scheduledAt', split_part(m.subject, '@', 2), 'afterSeconds', m.after_seconds,
              'runId', m.run_id::text, 'state', m.run_state)
          from m cross join lead
          where m.deadline <= now() and m.deadline >= m.rule_created_at
            and not (m.run_state is not distinct from 'succeeded' and m.run_ended_at <= m.deadline)
          order by m.scheduled_at, m.dag_id, m.rule_id
          on conflict (dedupe_key) do nothing
          returning ${NOTIFICATION_COLUMNS}
        )
        ${selectWithLead('id')}`,
  );
  return writtenRows(result, token, 'enqueueMissedDeadlines').map(notificationFromRow);
}

export async function enqueueClusterNotifications(db: Executor, token: LeaderToken, options: { workerLiveWindowMs: number }): Promise<NotificationRow[]> {
  const live = msInterval(Math.max(1, Math.floor(options.workerLiveWindowMs)));
  // The node that watches (the leader of the lowest led shard) asks; the key, not the
  // watcher, makes a repeat by two watchers across a failover one notification.
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        shards as (
          select n from cluster_config cross join generate_series(0, shard_count - 1) as s(n) where id = 1
          union select shard from shard_leases
        ),
        leaderless as (
          select s.n as shard, coalesce(l.epoch, 0) as epoch, coalesce(l.expires_at, (select created_at from cluster_config where id = 1)) as since
          from shards s left join shard_leases l on l.shard = s.n
          where l.expires_at is null or l.expires_at <= now()
        ),
        seen as (
          select coalesce(w.meta->'offer'->>'pool', 'default') as pool, max(w.last_seen) as last_seen
          from workers w where w.last_seen > now() - ${msInterval(NOTIFY_LIMITS.poolLookbackMs)}
          group by 1
        ),
        named as (
          select pool, min(named_at) as named_at from (
            select r.pool, r.created_at as named_at from notification_rules r where r.event = 'pool_no_worker' and r.pool is not null
            union all
            select coalesce(t->>'pool', 'default'), v.created_at
            from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version
            cross join jsonb_array_elements(v.spec->'tasks') t
            where exists (select 1 from notification_rules where event = 'pool_no_worker' and pool is null)
          ) n group by pool
        ),
        pools as (
          select coalesce(s.pool, n.pool) as pool, s.last_seen, n.named_at from seen s full join named n on n.pool = s.pool
        ),
        events as (
          select 'shard_leaderless' as event, 'shard:' || shard || ':epoch:' || epoch as subject, since, null::text as pool,
            jsonb_build_object('shard', shard, 'epoch', epoch, 'since', ${isoText(sql`since`)}) as payload
          from leaderless where since is not null
          union all
          select 'pool_no_worker', 'pool:' || pool || ':' || ${isoText(sql`last_seen`)}, last_seen + ${live}, pool,
            jsonb_build_object('pool', pool, 'lastSeen', ${isoText(sql`last_seen`)}, 'since', ${isoText(sql`last_seen + ${live}`)})
          from pools where last_seen + ${live} <= now()
          union all
          select 'pool_no_worker', 'pool:' || pool || ':none', named_at, pool,
            jsonb_build_object('pool', pool, 'lastSeen', null, 'since', ${isoText(sql`named_at`)})
          from pools where last_seen is null
        ),
        w as (
          insert into notifications (dedupe_key, rule_id, channel_id, shard, dag_id, event, payload)
          select e.event || ':' || e.subject || ':' || r.id::text, r.id, r.channel_id, lead.shard, null, e.event,
            e.payload || jsonb_build_object('afterSeconds', r.after_seconds)
          from events e join notification_rules r on r.event = e.event and (r.pool is null or r.pool = e.pool)
          cross join lead
          where e.since + r.after_seconds * interval '1 second' <= now()
          order by e.event, e.subject, r.id
          on conflict (dedupe_key) do nothing
          returning ${NOTIFICATION_COLUMNS}
        )
        ${selectWithLead('id')}`,
  );
  return writtenRows(result, token, 'enqueueClusterNotifications').map(notificationFromRow);
}
