import type { Principal } from '@fenceline/core/store';
import { secretHash } from '@fenceline/db/people';
import { consoleStore } from './store';

export const SESSION_COOKIE = 'fenceline_session';

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // A cookie that is not valid percent-encoding names no session.
      return undefined;
    }
  }
  return undefined;
}

/**
 * HttpOnly and SameSite=Strict: scripts cannot read it and no other site can send it.
 * Secure whenever the console is reached over https, so the browser never sends it in clear.
 */
export function sessionCookie(value: string, secure: boolean, maxAgeS: number): string {
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? '; Secure' : ''}`;
}

/**
 * Whether the request reached the console over https: its own URL says so, or the proxy in
 * front of it does (`x-forwarded-proto`, whose first value is the client's side).
 */
export function servedOverHttps(req: { url: string; headers: Headers }): boolean {
  if (new URL(req.url).protocol === 'https:') return true;
  const forwarded = req.headers.get('x-forwarded-proto');
  return forwarded !== null && forwarded.split(',')[0]!.trim().toLowerCase() === 'https';
}

/** The session secret a request carries, if any. */
export function sessionSecret(headers: Headers): string | null {
  const value = readCookie(headers.get('cookie'), SESSION_COOKIE);
  // A secret is what newSecret makes; anything else is not looked up at all.
  return value && /^fls_[A-Za-z0-9_-]{43}$/.test(value) ? value : null;
}

/** The API token a request carries as `Authorization: Bearer`, if any. */
export function bearerToken(headers: Headers): string | null {
  const header = headers.get('authorization');
  const match = header ? /^Bearer\s+(flt_[A-Za-z0-9_-]{43})\s*$/.exec(header) : null;
  return match ? match[1]! : null;
}

/**
 * Who a request speaks for: the API token in its Authorization header when it has one,
 * else its session cookie. Both are looked up by the hash of the secret, so a revoked,
 * expired or signed-out credential is refused on its next request.
 */
export async function principalOf(headers: Headers): Promise<{ principal: Principal | null; sessionHash: string | null }> {
  const token = bearerToken(headers);
  if (token !== null) return { principal: await (await consoleStore()).apiTokenPrincipal({ secretHash: secretHash(token) }), sessionHash: null };
  // A request with no credential costs no store round trip.
  const secret = sessionSecret(headers);
  if (secret === null) return { principal: null, sessionHash: null };
  const hash = secretHash(secret);
  return { principal: await (await consoleStore()).sessionPrincipal({ secretHash: hash }), sessionHash: hash };
}

/** The client's address as the console sees it: the first x-forwarded-for entry (`next start` fills it from the socket). */
export function clientAddress(headers: Headers): string {
  const forwarded = headers.get('x-forwarded-for');
  const first = forwarded?.split(',')[0]?.trim();
  return first && first.length <= 100 ? first : 'unknown';
}
