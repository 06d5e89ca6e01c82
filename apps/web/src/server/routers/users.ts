import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { TRPCError } from '@trpc/server';
import { roleSchema, userIdSchema, userNameSchema } from '@fenceline/core';
import { hashPassword, MAX_PASSWORD_LENGTH, passwordProblem } from '@fenceline/db/people';
import { auditChange } from '../audit';
import { adminProcedure, router, withStore } from '../trpc';

/** An admin may not demote or disable themselves, so the console is not left without one by a slip. */
function notSelf(ctx: { principal: { user: { id: string } } }, userId: string, what: string): void {
  if (ctx.principal.user.id === userId) throw new TRPCError({ code: 'BAD_REQUEST', message: `userId: you cannot ${what} yourself; ask another admin` });
}

export const usersRouter = router({
  list: adminProcedure.query(() => withStore((store) => store.listUsers())),

  /** Creates a user; with no password given, one is generated and returned once, never again. */
  create: adminProcedure.input(z.object({ name: userNameSchema, role: roleSchema, password: z.string().max(MAX_PASSWORD_LENGTH).optional() })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const problem = input.password === undefined ? null : passwordProblem(input.password);
      if (problem !== null) throw new TRPCError({ code: 'BAD_REQUEST', message: `password: ${problem}` });
      const generated = input.password === undefined ? randomBytes(18).toString('base64url') : null;
      const user = await store.createUser({ name: input.name, role: input.role, passwordHash: await hashPassword(input.password ?? generated!) });
      await auditChange(store, ctx, { action: 'user.created', target: user.name, details: { role: user.role } });
      return { user, password: generated };
    }),
  ),

  /** A new role ends the user's sessions, so it applies at once. */
  setRole: adminProcedure.input(z.object({ userId: userIdSchema, role: roleSchema })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      notSelf(ctx, input.userId, 'change the role of');
      const before = await store.getUser({ userId: input.userId });
      const user = await store.updateUser({ userId: input.userId, role: input.role });
      await auditChange(store, ctx, { action: 'user.role_changed', target: user.name, details: { from: before.role, to: user.role } });
      return user;
    }),
  ),

  /** Disabling ends the user's sessions and stops their API tokens; enabling does not bring either back. */
  setDisabled: adminProcedure.input(z.object({ userId: userIdSchema, disabled: z.boolean() })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      notSelf(ctx, input.userId, 'disable');
      const user = await store.updateUser({ userId: input.userId, disabled: input.disabled });
      await auditChange(store, ctx, { action: input.disabled ? 'user.disabled' : 'user.enabled', target: user.name });
      return user;
    }),
  ),

  /** Signs the user out everywhere: every session of theirs is deleted (their API tokens are not). */
  revokeSessions: adminProcedure.input(z.object({ userId: userIdSchema })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const user = await store.getUser({ userId: input.userId });
      const { revoked } = await store.revokeSessions({ userId: user.id });
      await auditChange(store, ctx, { action: 'sessions.revoked', target: user.name, details: { revoked } });
      return { revoked };
    }),
  ),
});
