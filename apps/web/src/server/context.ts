import type { Role } from '@fenceline/core';
import type { Principal } from '@fenceline/core/store';
import { clientAddress, principalOf, servedOverHttps } from './session';

/** What every procedure knows of its caller. */
export interface Context {
  /** The user (and token, if one was used) the request speaks for; null when signed out. */
  principal: Principal | null;
  /** What the caller may do: the principal's role, or null. */
  role: Role | null;
  /** The hash of the request's session secret, so sign-out can delete that session. */
  sessionHash: string | null;
  /** Response headers of this request, so sign-in can set its cookie. */
  resHeaders: Headers;
  /** Whether the request came over https (its cookie then gets the Secure flag). */
  secure: boolean;
  /** Where the request came from, for the audit log and the sign-in limits. */
  source: string;
  userAgent: string | null;
}

export async function buildContext(opts: { req: Request; resHeaders: Headers }): Promise<Context> {
  const { principal, sessionHash } = await principalOf(opts.req.headers);
  return {
    principal,
    role: principal?.role ?? null,
    sessionHash,
    resHeaders: opts.resHeaders,
    secure: servedOverHttps(opts.req),
    source: clientAddress(opts.req.headers),
    userAgent: opts.req.headers.get('user-agent'),
  };
}
