import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import { parseApiTokenId, parseRole, parseUserName } from '@fenceline/core';
import { type AuditAction, type AuditStore, type PeopleStore, type UserRow } from '@fenceline/core/store';
import { hashPassword, newSecret, passwordProblem, secretHash } from '@fenceline/db/people';
import { flag, fmt, hasFlag, need, positional, UsageError } from './cli-args';

/** The CLI's commands for users, their sessions and their API tokens. */
export const PEOPLE_COMMANDS = new Set(['user', 'sessions', 'api-token']);

export const PEOPLE_HELP = `  user create --name N --role R [--password-stdin]
                                   add a user (admin, operator or viewer); the password is read from stdin
                                   with --password-stdin, else one is generated and printed once
  user list                        users with role and state
  user set-role --name N --role R  change a user's role (ends their sessions)
  user disable --name N | user enable --name N
                                   stop or allow a user's sign-in and API tokens (disabling ends their sessions)
  user set-password --name N [--password-stdin]
                                   replace a user's password (ends their sessions)
  sessions revoke --name N         sign a user out everywhere
  api-token create --user N --name T --role R [--days D]
                                   a personal API token for scripts and CI (role at most the user's,
                                   expiring after D days, 30 by default); its secret is printed once
  api-token list [--user N]        tokens with owner, role, expiry and state
  api-token revoke <ID>            revoke a token at once`;

type PeopleCliStore = PeopleStore & AuditStore;

/** Who the CLI acts as in the audit log: the operating-system user that ran it. */
export function osUser(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Records a change made from the CLI. */
export async function cliAudit(store: AuditStore, change: { action: AuditAction; dagId?: string; target?: string; details?: Record<string, unknown> }): Promise<void> {
  await store.appendAudit({ actorKind: 'cli', actor: osUser(), source: 'cli', userAgent: 'fenceline-cli', ...change });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is what `echo` and a here-string add; it is not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** The password to set: from stdin, checked, or a generated one that is printed once. */
async function passwordFrom(args: string[]): Promise<{ password: string; generated: boolean }> {
  if (!hasFlag(args, '--password-stdin')) return { password: randomBytes(18).toString('base64url'), generated: true };
  const password = await readStdin();
  const problem = passwordProblem(password);
  if (problem !== null) throw new UsageError(`password: ${problem}`);
  return { password, generated: false };
}

async function userNamed(store: PeopleCliStore, args: string[], field = '--name'): Promise<UserRow> {
  const name = parseUserName(need(flag(args, field), field), field);
  const user = await store.userCredentials({ name });
  if (!user) throw new UsageError(`${field}: there is no user named "${name}"`);
  const { passwordHash: _hash, ...row } = user;
  return row;
}

export async function runPeople(store: PeopleCliStore, command: string, args: string[]): Promise<number> {
  const [sub] = positional(args);
  const key = `${command} ${sub ?? ''}`;
  switch (key) {
    case 'user create': {
      const name = parseUserName(need(flag(args, '--name'), '--name'), '--name');
      const role = parseRole(need(flag(args, '--role'), '--role'), '--role');
      const { password, generated } = await passwordFrom(args);
      const user = await store.createUser({ name, role, passwordHash: await hashPassword(password) });
      await cliAudit(store, { action: 'user.created', target: user.name, details: { role } });
      console.log(`user ${user.name} created (${user.role})`);
      if (generated) console.log(`password (shown once): ${password}`);
      return 0;
    }
    case 'user list': {
      const users = await store.listUsers();
      console.table(users.map((u) => ({ id: u.id, name: u.name, role: u.role, state: u.disabled ? 'disabled' : 'enabled', created: fmt(u.createdAt) })));
      return 0;
    }
    case 'user set-role': {
      const before = await userNamed(store, args);
      const user = await store.updateUser({ userId: before.id, role: parseRole(need(flag(args, '--role'), '--role'), '--role') });
      await cliAudit(store, { action: 'user.role_changed', target: user.name, details: { from: before.role, to: user.role } });
      console.log(`${user.name} is now ${user.role}; their sessions were ended`);
      return 0;
    }
    case 'user disable':
    case 'user enable': {
      const disabled = sub === 'disable';
      const user = await store.updateUser({ userId: (await userNamed(store, args)).id, disabled });
      await cliAudit(store, { action: disabled ? 'user.disabled' : 'user.enabled', target: user.name });
      console.log(`${user.name} ${disabled ? 'disabled; their sessions were ended' : 'enabled'}`);
      return 0;
    }
    case 'user set-password': {
      const target = await userNamed(store, args);
      const { password, generated } = await passwordFrom(args);
      await store.setPassword({ userId: target.id, passwordHash: await hashPassword(password) });
      await cliAudit(store, { action: 'user.password_changed', target: target.name });
      console.log(`password of ${target.name} replaced; their sessions were ended`);
      if (generated) console.log(`password (shown once): ${password}`);
      return 0;
    }
    case 'sessions revoke': {
      const user = await userNamed(store, args);
      const { revoked } = await store.revokeSessions({ userId: user.id });
      await cliAudit(store, { action: 'sessions.revoked', target: user.name, details: { revoked } });
      console.log(`${revoked} session${revoked === 1 ? '' : 's'} of ${user.name} revoked`);
      return 0;
    }
    case 'api-token create': {
      const owner = await userNamed(store, args, '--user');
      const name = need(flag(args, '--name'), '--name');
      if (!/^[A-Za-z0-9 _.:-]{1,100}$/.test(name)) throw new UsageError('--name: 1 to 100 letters, digits, spaces and _ . : -');
      const days = Number(flag(args, '--days') ?? 30);
      if (!Number.isInteger(days) || days < 1 || days > 365) throw new UsageError('--days: a whole number of days from 1 to 365');
      const secret = newSecret('flt');
      const token = await store.createApiToken({
        userId: owner.id,
        name,
        role: parseRole(need(flag(args, '--role'), '--role'), '--role'),
        secretHash: secretHash(secret),
        ttlMs: days * 86_400_000,
      });
      await cliAudit(store, {
        action: 'token.created',
        target: token.id,
        details: { name: token.name, owner: owner.name, role: token.role, expiresAt: token.expiresAt.toISOString() },
      });
      console.log(`API token ${token.id} "${token.name}" of ${owner.name} (${token.role}) expires ${fmt(token.expiresAt)}`);
      console.log(`secret (shown once; send it as Authorization: Bearer): ${secret}`);
      return 0;
    }
    case 'api-token list': {
      const owner = flag(args, '--user') === undefined ? undefined : (await userNamed(store, args, '--user')).id;
      const tokens = await store.listApiTokens({ userId: owner });
      console.table(tokens.map((t) => ({ id: t.id, owner: t.userName, name: t.name, role: t.role, expires: fmt(t.expiresAt), revoked: fmt(t.revokedAt) })));
      return 0;
    }
    case 'api-token revoke': {
      const token = await store.revokeApiToken({ tokenId: parseApiTokenId(need(positional(args)[1], 'token id'), 'ID') });
      await cliAudit(store, { action: 'token.revoked', target: token.id, details: { name: token.name, owner: token.userName } });
      console.log(`API token ${token.id} "${token.name}" of ${token.userName} revoked`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${key.trim()}"`);
  }
}
