import type { ApiTokenId, Role, UserId, UserName } from '../people-ids';
import type { StoreTime } from './shared';

/**
 * Users, console sessions and personal API tokens. Secrets never reach the store: a
 * session or token is found by the SHA-256 of its secret, and a password is stored only as
 * its salted scrypt hash. Each method takes one input object.
 */
export interface PeopleStore extends StoreTime {
  /** Throws InvalidInputError (field `name`) when the name is taken. */
  createUser(input: { name: UserName; role: Role; passwordHash: string }): Promise<UserRow>;
  /** The user of that name with its password hash, or null. */
  userCredentials(input: { name: UserName }): Promise<UserCredentials | null>;
  getUser(input: { userId: UserId }): Promise<UserRow>;
  listUsers(): Promise<UserRow[]>;
  /**
   * Changes a user's role or disables (or enables) them. Either change also deletes every
   * session of the user, so a demoted or disabled user is signed out at once. Throws
   * NotFoundError for an unknown user.
   */
  updateUser(input: { userId: UserId; role?: Role; disabled?: boolean }): Promise<UserRow>;
  setPassword(input: { userId: UserId; passwordHash: string }): Promise<UserRow>;

  /** Stores a session that expires `ttlMs` after store time now. */
  createSession(input: { secretHash: string; userId: UserId; ttlMs: number }): Promise<{ expiresAt: Date }>;
  /** The principal of a session that exists, has not expired and whose user is enabled; else null. */
  sessionPrincipal(input: { secretHash: string }): Promise<Principal | null>;
  /** Deletes one session (sign-out); a session that is gone already is not an error. */
  deleteSession(input: { secretHash: string }): Promise<void>;
  /** Deletes every session of the user; returns how many there were. */
  revokeSessions(input: { userId: UserId }): Promise<{ revoked: number }>;

  /**
   * Stores a token for the user, scoped to `role`, expiring `ttlMs` after store time now.
   * Throws ForbiddenError when `role` is above the user's own.
   */
  createApiToken(input: { userId: UserId; name: string; role: Role; secretHash: string; ttlMs: number }): Promise<ApiTokenRow>;
  /**
   * The principal of a token that exists, is not revoked or expired and whose user is
   * enabled; its role is the lower of the token's and the user's now. Else null.
   */
  apiTokenPrincipal(input: { secretHash: string }): Promise<Principal | null>;
  /** Tokens newest first, of one user or of everyone. */
  listApiTokens(input: { userId?: UserId }): Promise<ApiTokenRow[]>;
  /** Revokes a token at store time now; revoking it again changes nothing. Throws NotFoundError. */
  revokeApiToken(input: { tokenId: ApiTokenId }): Promise<ApiTokenRow>;
}

/** A user as every reader sees it: never the password hash. */
export interface UserRow {
  id: UserId;
  name: UserName;
  role: Role;
  disabled: boolean;
  createdAt: Date;
}

/** A user with the stored password hash, for the sign-in check only. */
export interface UserCredentials extends UserRow {
  passwordHash: string;
}

/** A personal API token as listed: never its secret, which is shown once at creation. */
export interface ApiTokenRow {
  id: ApiTokenId;
  userId: UserId;
  userName: UserName;
  name: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

/**
 * Who a live session or API token speaks for. `role` is what the credential may do: the
 * user's role for a session, the token's own (never above its owner's now) for a token.
 */
export interface Principal {
  user: UserRow;
  role: Role;
  tokenId: ApiTokenId | null;
}
