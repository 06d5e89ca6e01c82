import {
  formatDurationSeconds,
  InvalidInputError,
  isClusterEvent,
  parseChannelId,
  parseDurationSeconds,
  parseRuleId,
  type ChannelKind,
  type NotificationEvent,
  type NotificationRuleRow,
  type NotificationState,
} from '@fenceline/core';
import { type AuditStore, type NotificationStore } from '@fenceline/core/store';
import { flag, fmt, need, positional, UsageError } from './cli-args';
import { cliAudit } from './cli-people';

export const NOTIFY_HELP = `  notify channel add <NAME> --endpoint URL [--kind webhook|slack] [--secret-env VAR]
                                   a channel that notifications are POSTed to; with --secret-env the value of
                                   environment variable VAR signs every delivery (Standard Webhooks: webhook-signature)
  notify channel list              channels (a secret is shown only as set or not)
  notify channel delete <ID>       a channel and its rules
  notify rule add <CHANNEL_ID> --event run_failed|task_failed|run_recovered [--dag DAG]
                                   send the event of one DAG (of every DAG without --dag) to the channel
  notify rule add <CHANNEL_ID> --event deadline_missed --after 10m [--dag DAG]
                                   a run not succeeded 10 minutes after its scheduled time, even one never
                                   started (a paused DAG, schedulers down); of every scheduled DAG without --dag
  notify rule add <CHANNEL_ID> --event shard_leaderless --after 60s
                                   a shard without a leader for longer than 60 seconds
  notify rule add <CHANNEL_ID> --event pool_no_worker --after 2m [--pool POOL]
                                   a pool (every pool without --pool) without a live worker for longer than 2 minutes
                                   (--after takes seconds, or a number with s, m, h or d)
  notify rule list                 rules
  notify rule delete <ID>          a rule
  notify list [--state pending|delivered|dead] [--limit N]
                                   notifications, newest first, with attempts and the last error`;

type NotifyCliStore = NotificationStore & AuditStore;

/** What a rule watches, as its line says it. */
function subjectOf(rule: NotificationRuleRow): string {
  if (rule.event === 'shard_leaderless') return 'every shard';
  if (rule.event === 'pool_no_worker') return rule.pool === null ? 'every pool' : `pool ${rule.pool}`;
  return rule.dagId ?? 'every DAG';
}

/** The channel's secret, read from the environment so that it is in no shell history or process list. */
function secretOf(args: string[]): string | null {
  const name = flag(args, '--secret-env');
  if (name === undefined) return null;
  const value = process.env[name];
  if (value === undefined || value === '') throw new InvalidInputError(`secret: environment variable ${name} is not set`, { field: 'secret' });
  return value;
}

async function channelCommand(store: NotifyCliStore, verb: string | undefined, rest: string[], args: string[]): Promise<number> {
  switch (verb) {
    case 'add': {
      const name = need(rest[0], 'channel name');
      const kind = (flag(args, '--kind') ?? 'webhook') as ChannelKind;
      const channel = await store.createNotificationChannel({ name, kind, url: need(flag(args, '--endpoint'), '--endpoint URL'), secret: secretOf(args) });
      await cliAudit(store, { action: 'notify.channel_created', target: channel.id, details: { name: channel.name, kind: channel.kind } });
      console.log(`channel ${channel.id} ${channel.name} (${channel.kind}) -> ${channel.url}${channel.hasSecret ? ', signed' : ''}`);
      return 0;
    }
    case 'list':
      console.table(
        (await store.listNotificationChannels()).map((c) => ({
          id: c.id,
          name: c.name,
          kind: c.kind,
          url: c.url,
          secret: c.hasSecret ? 'set' : 'none',
          created: fmt(c.createdAt),
        })),
      );
      return 0;
    case 'delete': {
      const id = parseChannelId(need(rest[0], 'channel id'), 'ID');
      if (!(await store.deleteNotificationChannel(id))) {
        console.error(`no channel ${id}`);
        return 1;
      }
      await cliAudit(store, { action: 'notify.channel_deleted', target: id });
      console.log(`channel ${id} deleted, with its rules`);
      return 0;
    }
    default:
      throw new UsageError('notify channel needs add, list or delete');
  }
}

async function ruleCommand(store: NotifyCliStore, verb: string | undefined, rest: string[], args: string[]): Promise<number> {
  switch (verb) {
    case 'add': {
      const after = flag(args, '--after');
      const rule = await store.createNotificationRule({
        channelId: parseChannelId(need(rest[0], 'channel id')),
        event: need(flag(args, '--event'), '--event EVENT') as NotificationEvent,
        dagId: flag(args, '--dag') ?? null,
        afterSeconds: after === undefined ? null : parseDurationSeconds(after),
        pool: flag(args, '--pool') ?? null,
      });
      await cliAudit(store, {
        action: 'notify.rule_created',
        dagId: rule.dagId ?? undefined,
        target: rule.id,
        details: { channelId: rule.channelId, event: rule.event, afterSeconds: rule.afterSeconds, pool: rule.pool },
      });
      console.log(
        `rule ${rule.id}: ${rule.event} of ${subjectOf(rule)}${rule.afterSeconds === null ? '' : ` after ${formatDurationSeconds(rule.afterSeconds)}`} -> channel ${rule.channelId}`,
      );
      return 0;
    }
    case 'list':
      console.table(
        (await store.listNotificationRules()).map((r) => ({
          id: r.id,
          channel: r.channelId,
          event: r.event,
          dag: isClusterEvent(r.event) ? '' : (r.dagId ?? '(every DAG)'),
          after: r.afterSeconds === null ? '' : formatDurationSeconds(r.afterSeconds),
          pool: r.event === 'pool_no_worker' ? (r.pool ?? '(every pool)') : '',
          created: fmt(r.createdAt),
        })),
      );
      return 0;
    case 'delete': {
      const id = parseRuleId(need(rest[0], 'rule id'), 'ID');
      if (!(await store.deleteNotificationRule(id))) {
        console.error(`no rule ${id}`);
        return 1;
      }
      await cliAudit(store, { action: 'notify.rule_deleted', target: id });
      console.log(`rule ${id} deleted`);
      return 0;
    }
    default:
      throw new UsageError('notify rule needs add, list or delete');
  }
}

export async function notifyCommand(store: NotifyCliStore, args: string[]): Promise<number> {
  const [what, verb, ...rest] = positional(args);
  switch (what) {
    case 'channel':
      return channelCommand(store, verb, rest, args);
    case 'rule':
      return ruleCommand(store, verb, rest, args);
    case 'list': {
      const limit = flag(args, '--limit');
      const rows = await store.listNotifications({ state: flag(args, '--state') as NotificationState | undefined, limit: limit === undefined ? undefined : Number(limit) });
      console.table(
        rows.map((n) => ({
          id: n.id,
          key: n.dedupeKey,
          dag: n.dagId,
          event: n.event,
          state: n.state,
          attempts: n.attempts,
          next: n.state === 'pending' ? fmt(n.nextAttemptAt) : '',
          delivered: fmt(n.deliveredAt),
          error: n.lastError ?? '',
        })),
      );
      return 0;
    }
    default:
      throw new UsageError('notify needs channel, rule or list');
  }
}
