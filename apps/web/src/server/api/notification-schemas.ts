import { z } from 'zod';
import { CHANNEL_KINDS, channelIdSchema, NOTIFICATION_EVENTS, NOTIFICATION_STATES, notificationIdSchema, NOTIFY_LIMITS, ruleIdSchema } from '@fenceline/core';
import { instant } from './schemas';

/**
 * The HTTP API's schemas for notification channels, rules and notifications. They bound
 * what is passed on; the store checks the rest (a rule's afterSeconds for a timed event, a
 * cluster event naming no DAG) and names the field it refuses.
 */

/** A channel, rule or notification id as the path gives it. */
export const channelIdPath = z.object({ id: channelIdSchema.describe('The channel id') });
export const ruleIdPath = z.object({ id: ruleIdSchema.describe('The rule id') });
export const notificationIdPath = z.object({ id: notificationIdSchema.describe('The notification id') });

export const notificationListQuery = z.strictObject({
  state: z.enum(NOTIFICATION_STATES).optional().describe('Only notifications in this state; dead ones are the dead letters'),
  limit: z.coerce.number().int().min(1).max(NOTIFY_LIMITS.maxListLimit).optional().describe(`At most this many, newest first; ${NOTIFY_LIMITS.defaultListLimit} by default`),
});

export const channelBody = z.strictObject({
  name: z.string().max(1_000).describe(`Unique, at most ${NOTIFY_LIMITS.maxChannelNameChars} characters once trimmed; how reads name the channel`),
  kind: z.enum(CHANNEL_KINDS).describe('webhook: a JSON body; slack: a Slack incoming-webhook text'),
  url: z.string().max(NOTIFY_LIMITS.maxUrlChars).describe('An http or https URL; every read shows it masked'),
  secret: z.string().max(NOTIFY_LIMITS.maxSecretChars).nullable().optional().describe('The HMAC-SHA256 key that signs every body; never shown again'),
});

export const ruleBody = z.strictObject({
  channelId: z.string().max(100).describe('The channel the rule sends to'),
  event: z.enum(NOTIFICATION_EVENTS),
  dagId: z.string().max(2_000).nullable().optional().describe('Only this DAG; none for every DAG (and none for a cluster event)'),
  afterSeconds: z.number().int().nullable().optional().describe('Timed events only, and needed for them: how long before the event fires'),
  pool: z.string().max(200).nullable().optional().describe('pool_no_worker only: the pool watched; none watches every pool'),
});

export const channelRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(CHANNEL_KINDS),
  url: z.string().describe('Masked: scheme, host and port, then … and the last 4 characters of a path and query of 12 or more'),
  hasSecret: z.boolean().describe('Whether bodies are signed; the secret itself is never shown'),
  createdAt: instant,
});

export const ruleRowSchema = z.object({
  id: z.string(),
  channelId: z.string(),
  dagId: z.string().nullable().describe('null: every DAG'),
  event: z.enum(NOTIFICATION_EVENTS),
  afterSeconds: z.number().int().nullable(),
  pool: z.string().nullable(),
  createdAt: instant,
});

export const notificationRowSchema = z.object({
  id: z.string(),
  dedupeKey: z.string().describe('The idempotency key sent with every delivery: <event>:<subject>:<rule id>'),
  ruleId: z.string(),
  channelId: z.string(),
  shard: z.number().int().min(0).describe('The shard whose leader delivers it'),
  dagId: z.string().nullable().describe('null for a cluster event'),
  event: z.enum(NOTIFICATION_EVENTS),
  payload: z.record(z.string(), z.unknown()).describe("The event's data, as the delivery's body carries it under data (see docs/notifications.md)"),
  state: z.enum(NOTIFICATION_STATES),
  attempts: z.number().int().min(0),
  nextAttemptAt: instant,
  lastError: z.string().nullable().describe('Why the last delivery failed, any URL in it masked'),
  claimedEpoch: z.number().int().nullable().describe('The epoch of the leader that last claimed it for a delivery'),
  createdAt: instant,
  deliveredAt: instant.nullable(),
});

export const channelListAnswer = z.object({ channels: z.array(channelRowSchema) });
export const ruleListAnswer = z.object({ rules: z.array(ruleRowSchema) });
export const notificationListAnswer = z.object({ notifications: z.array(notificationRowSchema) });
export const deletedAnswer = z.object({ id: z.string(), deleted: z.literal(true) });
