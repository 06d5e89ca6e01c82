import { z } from 'zod';
import { channelIdSchema, NotFoundError, notificationIdSchema, ruleIdSchema } from '@fenceline/core';
import { auditChange } from '../audit';
import { adminProcedure, operatorProcedure, router, viewerProcedure, withStore } from '../trpc';

/**
 * Notification channels, rules and the notifications sent. Every signed-in user reads them
 * (a channel's URL masked, its secret never). Channels are an admin's: a channel holds a
 * secret and names where the cluster sends what it knows of runs, so whoever may add one
 * may send that to any host. Rules and retries are an operator's: a rule only routes events
 * to a channel an admin made, and a retry sends one again to that same channel.
 *
 * The store checks every field and refuses bad input naming it, so the schemas here only
 * bound what is passed on; each change is audited after it succeeded, so a refused one
 * leaves no entry.
 */
const channelInput = z.object({
  name: z.string().max(1_000),
  kind: z.string().max(100),
  url: z.string().max(10_000),
  secret: z.string().max(10_000).nullable().optional(),
});

const ruleInput = z.object({
  channelId: z.string().max(100),
  event: z.string().max(100),
  dagId: z.string().max(2_000).nullable().optional(),
  afterSeconds: z.number().nullable().optional(),
  pool: z.string().max(1_000).nullable().optional(),
});

export const notificationsRouter = router({
  channels: viewerProcedure.query(() => withStore((store) => store.listNotificationChannels())),

  rules: viewerProcedure.query(() => withStore((store) => store.listNotificationRules())),

  list: viewerProcedure.input(z.object({ state: z.string().max(100).optional(), limit: z.number().optional() })).query(({ input }) =>
    // The store checks the state and the limit, naming the field.
    withStore((store) => store.listNotifications(input as Parameters<typeof store.listNotifications>[0])),
  ),

  createChannel: adminProcedure.input(channelInput).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const row = await store.createNotificationChannel(input as Parameters<typeof store.createNotificationChannel>[0]);
      // The entry names the channel with its masked URL, as every read does, never the secret.
      await auditChange(store, ctx, { action: 'notify.channel_created', target: row.id, details: { name: row.name, kind: row.kind, url: row.url, signed: row.hasSecret } });
      return row;
    }),
  ),

  deleteChannel: adminProcedure.input(z.object({ id: channelIdSchema })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const before = (await store.listNotificationChannels()).find((c) => c.id === input.id);
      if (!(await store.deleteNotificationChannel(input.id))) throw new NotFoundError(`no channel ${input.id}`);
      await auditChange(store, ctx, { action: 'notify.channel_deleted', target: input.id, details: { name: before?.name ?? null } });
      return { id: input.id, deleted: true as const };
    }),
  ),

  createRule: operatorProcedure.input(ruleInput).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const row = await store.createNotificationRule(input as Parameters<typeof store.createNotificationRule>[0]);
      await auditChange(store, ctx, {
        action: 'notify.rule_created',
        dagId: row.dagId,
        target: row.id,
        details: { channelId: row.channelId, event: row.event, afterSeconds: row.afterSeconds, pool: row.pool },
      });
      return row;
    }),
  ),

  deleteRule: operatorProcedure.input(z.object({ id: ruleIdSchema })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const before = (await store.listNotificationRules()).find((r) => r.id === input.id);
      if (!(await store.deleteNotificationRule(input.id))) throw new NotFoundError(`no rule ${input.id}`);
      await auditChange(store, ctx, { action: 'notify.rule_deleted', dagId: before?.dagId ?? null, target: input.id, details: { event: before?.event ?? null } });
      return { id: input.id, deleted: true as const };
    }),
  ),

  retry: operatorProcedure.input(z.object({ id: notificationIdSchema })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const row = await store.retryNotification(input.id);
      await auditChange(store, ctx, { action: 'notify.retried', dagId: row.dagId, target: row.id, details: { event: row.event, channelId: row.channelId } });
      return row;
    }),
  ),
});
