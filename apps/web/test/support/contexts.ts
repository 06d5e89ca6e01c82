import type { Role, UserId, UserName } from '@fenceline/core';
import type { Principal } from '@fenceline/core/store';
import type { Context } from '../../src/server/context';

/** A principal for tests that call procedures directly: a user of that role, or a token of theirs. */
export function principalAs(role: Role, opts: { id?: string; name?: string; tokenId?: string } = {}): Principal {
  return {
    user: { id: (opts.id ?? '1') as UserId, name: (opts.name ?? `${role}-for-tests`) as UserName, role, disabled: false, createdAt: new Date(0) },
    role,
    tokenId: (opts.tokenId ?? null) as Principal['tokenId'],
  };
}

/** The context a request of this caller would have; null for a caller with no session. */
export function contextAs(role: Role | null, opts: Parameters<typeof principalAs>[1] = {}): Context {
  const principal = role === null ? null : principalAs(role, opts);
  return { principal, role, sessionHash: null, resHeaders: new Headers(), secure: false, source: '127.0.0.1', userAgent: 'vitest' };
}
