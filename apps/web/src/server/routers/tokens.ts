import { z } from 'zod';
import { TRPCError } from '@trpc/server';
import { apiTokenIdSchema, roleAtLeast, roleSchema } from '@fenceline/core';
import { newSecret, secretHash } from '@fenceline/db/people';
import { auditChange } from '../audit';
import { router, viewerProcedure, withStore } from '../trpc';

export const MAX_TOKEN_DAYS = 365;

export const tokensRouter = router({
  /** The caller's own tokens; an admin may ask for everyone's. */
  list: viewerProcedure.input(z.object({ all: z.boolean().default(false) }).default({ all: false })).query(({ input, ctx }) =>
    withStore(async (store) => {
      if (input.all && !roleAtLeast(ctx.role, 'admin')) throw new TRPCError({ code: 'FORBIDDEN', message: "FORBIDDEN: listing everyone's tokens needs the admin role" });
      return store.listApiTokens(input.all ? {} : { userId: ctx.principal.user.id });
    }),
  ),

  /**
   * A personal token for scripts and CI, scoped to a role no higher than the caller's and
   * expiring. Its secret is returned once and only its hash is kept. A token cannot mint
   * another, so a leaked token cannot outlive its own expiry.
   */
  create: viewerProcedure
    .input(
      z.object({
        name: z
          .string()
          .min(1)
          .max(100)
          .regex(/^[A-Za-z0-9 _.:-]+$/, 'letters, digits, spaces and _ . : -'),
        role: roleSchema,
        expiresInDays: z.number().int().min(1).max(MAX_TOKEN_DAYS).default(30),
      }),
    )
    .mutation(({ input, ctx }) =>
      withStore(async (store) => {
        if (ctx.principal.tokenId !== null) throw new TRPCError({ code: 'FORBIDDEN', message: 'FORBIDDEN: an API token cannot create tokens; sign in to the console' });
        if (!roleAtLeast(ctx.role, input.role)) throw new TRPCError({ code: 'FORBIDDEN', message: `role: a token may not have a role above yours (${ctx.role})` });
        const secret = newSecret('flt');
        const token = await store.createApiToken({
          userId: ctx.principal.user.id,
          name: input.name,
          role: input.role,
          secretHash: secretHash(secret),
          ttlMs: input.expiresInDays * 86_400_000,
        });
        await auditChange(store, ctx, { action: 'token.created', target: token.id, details: { name: token.name, role: token.role, expiresAt: token.expiresAt.toISOString() } });
        return { token, secret };
      }),
    ),

  /** Revokes one of the caller's tokens; an admin may revoke anyone's. */
  revoke: viewerProcedure.input(z.object({ tokenId: apiTokenIdSchema })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      if (!roleAtLeast(ctx.role, 'admin')) {
        const mine = await store.listApiTokens({ userId: ctx.principal.user.id });
        // Another user's token is answered as one that does not exist, so ids tell nothing.
        if (!mine.some((t) => t.id === input.tokenId)) throw new TRPCError({ code: 'NOT_FOUND', message: `NOT_FOUND: you have no API token ${input.tokenId}` });
      }
      const token = await store.revokeApiToken({ tokenId: input.tokenId });
      await auditChange(store, ctx, { action: 'token.revoked', target: token.id, details: { name: token.name, owner: token.userName } });
      return token;
    }),
  ),
});
