import { createHmac, timingSafeEqual } from 'node:crypto';
import { consoleConfig } from './config';

export type Role = 'operator' | 'viewer';

export const SESSION_COOKIE = 'fenceline_session';

/**
 * Sessions are stateless: the cookie holds the role and an HMAC keyed by that role's token,
 * never the token itself. A session survives a console restart, and changing a token ends
 * every session made with the old one.
 */
function sessionMac(role: Role, token: string): string {
  return createHmac('sha256', token).update(`fenceline-console-session:v1:${role}`).digest('base64url');
}

function tokenOf(role: Role): string | null {
  const config = consoleConfig();
  return role === 'operator' ? config.operatorToken : config.viewerToken;
}

/** Compares in constant time for equal lengths; unequal lengths are refused without comparing bytes. */
function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Which role a presented token grants, checked against every configured token. */
export function roleForToken(presented: string): Role | null {
  let found: Role | null = null;
  // Both comparisons always run, so the time taken does not tell which token was close.
  for (const role of ['operator', 'viewer'] as const) {
    const token = tokenOf(role);
    if (token !== null && safeEqual(presented, token) && found === null) found = role;
  }
  return found;
}

export function sessionValue(role: Role): string {
  const token = tokenOf(role);
  if (token === null) throw new Error(`no ${role} token is configured`);
  return `${role}.${sessionMac(role, token)}`;
}

export function roleForSession(value: string | undefined | null): Role | null {
  if (!value) return null;
  const dot = value.indexOf('.');
  const role = value.slice(0, dot);
  if (role !== 'operator' && role !== 'viewer') return null;
  const token = tokenOf(role);
  if (token === null) return null;
  return safeEqual(value, `${role}.${sessionMac(role, token)}`) ? role : null;
}

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** HttpOnly and SameSite=Strict: scripts cannot read it and no other site can send it. */
export function sessionCookie(value: string, secure: boolean, maxAgeS = 7 * 24 * 3600): string {
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? '; Secure' : ''}`;
}
