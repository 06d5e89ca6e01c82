import { z } from 'zod';
import { TRPCError } from '@trpc/server';
import { userNameProblem, type UserName, storableText } from '@fenceline/core';
import { newSecret, secretHash, verifyPassword } from '@fenceline/db/people';
import { auditChange } from '../audit';
import { consoleConfig } from '../config';
import { signInLimits } from '../rate-limit';
import { sessionCookie } from '../session';
import { consoleStore } from '../store';
import { publicProcedure, router } from '../trpc';

export const authRouter = router({
  /**
   * The one procedure open to anyone: a user name and password for a session cookie. Wrong
   * names and wrong passwords are answered alike, and in about the same time; failures are
   * limited per name and per client address before any password is checked.
   */
  signIn: publicProcedure.input(z.object({ name: storableText().min(1).max(200), password: z.string().min(1).max(1024) })).mutation(async ({ input, ctx }) => {
    const name = input.name.trim().toLowerCase();
    const limits = signInLimits();
    const waitS = Math.max(limits.byName.retryAfterS(name), limits.byAddress.retryAfterS(ctx.source));
    if (waitS > 0) throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: `TOO_MANY_REQUESTS: too many sign-in attempts, try again in ${waitS} s` });
    const store = await consoleStore();
    const user = userNameProblem(name) === null ? await store.userCredentials({ name: name as UserName }) : null;
    const matches = await verifyPassword(input.password, user?.passwordHash ?? null);
    if (!user || !matches || user.disabled) {
      limits.byName.fail(name);
      limits.byAddress.fail(ctx.source);
      // Recorded so an operator sees attempts, up to a rate that keeps a flood from growing the log.
      if (limits.audited.retryAfterS('all') === 0) {
        limits.audited.fail('all');
        await auditChange(
          store,
          { ...ctx, principal: null },
          { action: 'signin.refused', target: name.slice(0, 64), details: { reason: user?.disabled && matches ? 'disabled' : 'wrong name or password' } },
        );
      }
      throw new TRPCError({ code: 'UNAUTHORIZED', message: 'UNAUTHORIZED: wrong user name or password' });
    }
    limits.byName.clear(name);
    const secret = newSecret('fls');
    const ttlMs = consoleConfig().sessionTtlMs;
    await store.createSession({ secretHash: secretHash(secret), userId: user.id, ttlMs });
    ctx.resHeaders.append('set-cookie', sessionCookie(secret, ctx.secure, Math.floor(ttlMs / 1000)));
    return { role: user.role, name: user.name };
  }),
  /** Deletes the session on the server, so a copy of the cookie stops working too. */
  signOut: publicProcedure.mutation(async ({ ctx }) => {
    if (ctx.sessionHash !== null) await (await consoleStore()).deleteSession({ secretHash: ctx.sessionHash });
    ctx.resHeaders.append('set-cookie', sessionCookie('', ctx.secure, 0));
    return { ok: true };
  }),
  whoami: publicProcedure.query(({ ctx }) => ({
    role: ctx.role,
    name: ctx.principal?.user.name ?? null,
    via: ctx.principal === null ? null : ctx.principal.tokenId ? ('token' as const) : ('session' as const),
  })),
});
