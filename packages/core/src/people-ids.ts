import { z } from 'zod';
import { InvalidInputError } from './errors';
import { idSchemaOf, parseIdWith, sequenceIdProblem, sequenceIdSchema } from './ids';

/**
 * The ids and names of the people side of the store (users, API tokens), parsed at the
 * boundary like the scheduling ids in ids.ts: a function that takes a UserId never sees
 * text nobody checked.
 */
declare const brand: unique symbol;
type Branded<Name extends string> = string & { readonly [brand]: Name };

/** A user's id: a PostgreSQL bigint sequence value, printed in decimal. */
export type UserId = Branded<'UserId'>;
/** An API token's id: a PostgreSQL bigint sequence value, printed in decimal. */
export type ApiTokenId = Branded<'ApiTokenId'>;
/** A user's sign-in name. */
export type UserName = Branded<'UserName'>;

/** What a principal may do, each including everything below it: admin > operator > viewer. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Whether `held` includes everything `needed` allows. */
export function roleAtLeast(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}

export const MAX_USER_NAME_LENGTH = 64;
const USER_NAME = /^[a-z0-9][a-z0-9_.-]*$/;
export const USER_NAME_CHARACTERS = 'may contain only lower-case letters, digits, "_", "." and "-", and must start with a letter or digit';

/** Why text is not a user name, or null if it is one. Names are lower case so two people cannot differ by case alone. */
export function userNameProblem(text: string): string | null {
  if (text.length === 0) return 'must not be empty';
  if (text.length > MAX_USER_NAME_LENGTH) return `must be at most ${MAX_USER_NAME_LENGTH} characters`;
  return USER_NAME.test(text) ? null : USER_NAME_CHARACTERS;
}

export const parseUserId = (value: unknown, field = 'userId'): UserId => parseIdWith<UserId>(sequenceIdProblem, value, field);
export const parseApiTokenId = (value: unknown, field = 'tokenId'): ApiTokenId => parseIdWith<ApiTokenId>(sequenceIdProblem, value, field);
export const parseUserName = (value: unknown, field = 'name'): UserName => parseIdWith<UserName>(userNameProblem, value, field);
export function parseRole(value: unknown, field = 'role'): Role {
  if (typeof value === 'string' && (ROLES as readonly string[]).includes(value)) return value as Role;
  throw new InvalidInputError(`${field}: must be one of ${ROLES.join(', ')}`, { field, problem: 'unknown role' });
}

export const userIdSchema = sequenceIdSchema().transform((text) => text as UserId);
export const apiTokenIdSchema = sequenceIdSchema().transform((text) => text as ApiTokenId);
export const userNameSchema = idSchemaOf(userNameProblem).transform((text) => text as UserName);
export const roleSchema = z.enum(ROLES);
