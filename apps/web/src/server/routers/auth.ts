import { z } from 'zod';
import { TRPCError } from '@trpc/server';
import { publicProcedure, router } from '../trpc';
import { roleForToken, sessionCookie, sessionValue } from '../session';

export const authRouter = router({
  /** The one procedure open to anyone: it trades a token for a session cookie. */
  signIn: publicProcedure.input(z.object({ token: z.string().min(1).max(1000) })).mutation(({ input, ctx }) => {
    const role = roleForToken(input.token.trim());
    if (role === null) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'UNAUTHORIZED: that token is neither the operator nor the viewer token' });
    ctx.resHeaders.append('set-cookie', sessionCookie(sessionValue(role), ctx.secure));
    return { role };
  }),
  signOut: publicProcedure.mutation(({ ctx }) => {
    ctx.resHeaders.append('set-cookie', sessionCookie('', ctx.secure, 0));
    return { ok: true };
  }),
  whoami: publicProcedure.query(({ ctx }) => ({ role: ctx.role })),
});
