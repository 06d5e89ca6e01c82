import { sql } from 'drizzle-orm';
import { ForbiddenError, InvalidInputError, NotFoundError, roleAtLeast } from '@fenceline/core';
import type { ApiTokenId, Role, UserId, UserName } from '@fenceline/core';
import type { ApiTokenRow, Principal, UserCredentials, UserRow } from '@fenceline/core/store';
import { firstRow, msInterval, rows, type Executor, type RawRow } from './db';
import { toDate, toDateOrNull, toId } from './rows';

function userFromRow(row: RawRow): UserRow {
  return { id: toId(row.id) as UserId, name: row.name as UserName, role: row.role as Role, disabled: row.disabled === true, createdAt: toDate(row.created_at) };
}

function tokenFromRow(row: RawRow): ApiTokenRow {
  return {
    id: toId(row.id) as ApiTokenId,
    userId: toId(row.user_id) as UserId,
    userName: row.user_name as UserName,
    name: row.name as string,
    role: row.role as Role,
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    revokedAt: toDateOrNull(row.revoked_at),
  };
}

/** The lower of two roles: a token never does more than its owner may do now. */
function lowerRole(a: Role, b: Role): Role {
  return roleAtLeast(a, b) ? b : a;
}

export async function createUser(db: Executor, input: { name: UserName; role: Role; passwordHash: string }): Promise<UserRow> {
  const row = await firstRow(
    db,
    sql`insert into users (name, role, password_hash) values (${input.name}, ${input.role}, ${input.passwordHash})
        on conflict (name) do nothing returning *`,
  );
  if (!row) throw new InvalidInputError(`name: a user named "${input.name}" exists already`, { field: 'name', problem: 'taken' });
  return userFromRow(row);
}

export async function userCredentials(db: Executor, input: { name: UserName }): Promise<UserCredentials | null> {
  const row = await firstRow(db, sql`select * from users where name = ${input.name}`);
  return row ? { ...userFromRow(row), passwordHash: row.password_hash as string } : null;
}

export async function getUser(db: Executor, input: { userId: UserId }): Promise<UserRow> {
  const row = await firstRow(db, sql`select * from users where id = ${input.userId}::bigint`);
  if (!row) throw new NotFoundError(`user ${input.userId} does not exist`, { userId: input.userId });
  return userFromRow(row);
}

export async function listUsers(db: Executor): Promise<UserRow[]> {
  return (await rows(db, sql`select * from users order by name collate "C"`)).map(userFromRow);
}

/** One statement: the user's change and the deletion of their sessions commit together. */
export async function updateUser(db: Executor, input: { userId: UserId; role?: Role; disabled?: boolean }): Promise<UserRow> {
  const row = await firstRow(
    db,
    sql`with changed as (
          update users set role = coalesce(${input.role ?? null}::text, role), disabled = coalesce(${input.disabled ?? null}::boolean, disabled)
          where id = ${input.userId}::bigint returning *
        ), ended as (
          delete from sessions where user_id in (select id from changed)
        )
        select * from changed`,
  );
  if (!row) throw new NotFoundError(`user ${input.userId} does not exist`, { userId: input.userId });
  return userFromRow(row);
}

/** A new password also ends the user's sessions, so one signed in with the old password is signed out. */
export async function setPassword(db: Executor, input: { userId: UserId; passwordHash: string }): Promise<UserRow> {
  const row = await firstRow(
    db,
    sql`with changed as (
          update users set password_hash = ${input.passwordHash} where id = ${input.userId}::bigint returning *
        ), ended as (
          delete from sessions where user_id in (select id from changed)
        )
        select * from changed`,
  );
  if (!row) throw new NotFoundError(`user ${input.userId} does not exist`, { userId: input.userId });
  return userFromRow(row);
}

export async function createSession(db: Executor, input: { secretHash: string; userId: UserId; ttlMs: number }): Promise<{ expiresAt: Date }> {
  const row = await firstRow(
    db,
    sql`insert into sessions (secret_hash, user_id, expires_at) values (${input.secretHash}, ${input.userId}::bigint, now() + ${msInterval(input.ttlMs)})
        returning expires_at`,
  );
  if (!row) throw new Error('creating a session returned no row');
  return { expiresAt: toDate(row.expires_at) };
}

export async function sessionPrincipal(db: Executor, input: { secretHash: string }): Promise<Principal | null> {
  const row = await firstRow(
    db,
    sql`select u.* from sessions s join users u on u.id = s.user_id
        where s.secret_hash = ${input.secretHash} and s.expires_at > now() and not u.disabled`,
  );
  if (!row) return null;
  const user = userFromRow(row);
  return { user, role: user.role, tokenId: null };
}

export async function deleteSession(db: Executor, input: { secretHash: string }): Promise<void> {
  // Expired sessions go with any sign-out, so the table does not grow with abandoned ones.
  await rows(db, sql`delete from sessions where secret_hash = ${input.secretHash} or expires_at < now()`);
}

export async function revokeSessions(db: Executor, input: { userId: UserId }): Promise<{ revoked: number }> {
  const deleted = await rows(db, sql`delete from sessions where user_id = ${input.userId}::bigint returning 1`);
  return { revoked: deleted.length };
}

export async function createApiToken(db: Executor, input: { userId: UserId; name: string; role: Role; secretHash: string; ttlMs: number }): Promise<ApiTokenRow> {
  const owner = await getUser(db, { userId: input.userId });
  if (!roleAtLeast(owner.role, input.role)) {
    throw new ForbiddenError(`role: a token may not have a role above its owner's (${owner.role})`, { field: 'role', ownerRole: owner.role });
  }
  const row = await firstRow(
    db,
    sql`with t as (
          insert into api_tokens (user_id, name, role, secret_hash, expires_at)
          values (${input.userId}::bigint, ${input.name}, ${input.role}, ${input.secretHash}, now() + ${msInterval(input.ttlMs)})
          returning *
        )
        select t.*, u.name as user_name from t join users u on u.id = t.user_id`,
  );
  if (!row) throw new Error('creating an API token returned no row');
  return tokenFromRow(row);
}

export async function apiTokenPrincipal(db: Executor, input: { secretHash: string }): Promise<Principal | null> {
  const row = await firstRow(
    db,
    sql`select u.*, t.id as token_id, t.role as token_role from api_tokens t join users u on u.id = t.user_id
        where t.secret_hash = ${input.secretHash} and t.revoked_at is null and t.expires_at > now() and not u.disabled`,
  );
  if (!row) return null;
  const user = userFromRow(row);
  return { user, role: lowerRole(row.token_role as Role, user.role), tokenId: toId(row.token_id) as ApiTokenId };
}

export async function listApiTokens(db: Executor, input: { userId?: UserId }): Promise<ApiTokenRow[]> {
  const mine = input.userId === undefined ? sql`` : sql`where t.user_id = ${input.userId}::bigint`;
  const found = await rows(db, sql`select t.*, u.name as user_name from api_tokens t join users u on u.id = t.user_id ${mine} order by t.id desc`);
  return found.map(tokenFromRow);
}

export async function revokeApiToken(db: Executor, input: { tokenId: ApiTokenId }): Promise<ApiTokenRow> {
  const row = await firstRow(
    db,
    sql`with t as (
          update api_tokens set revoked_at = coalesce(revoked_at, now()) where id = ${input.tokenId}::bigint returning *
        )
        select t.*, u.name as user_name from t join users u on u.id = t.user_id`,
  );
  if (!row) throw new NotFoundError(`API token ${input.tokenId} does not exist`, { tokenId: input.tokenId });
  return tokenFromRow(row);
}
