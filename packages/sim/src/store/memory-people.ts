import { ForbiddenError, InvalidInputError, NotFoundError, roleAtLeast } from '@fenceline/core';
import type { ApiTokenId, Role, UserId, UserName } from '@fenceline/core';
import type { ApiTokenRow, Principal, UserCredentials, UserRow } from '@fenceline/core/store';
import { date } from './memory-rows';

interface MemSession {
  userId: UserId;
  expiresAtMs: number;
}

interface MemToken {
  row: Omit<ApiTokenRow, 'userName'>;
  secretHash: string;
}

/** The PeopleStore in memory, with the SQL store's refusals and store-time expiry. */
export class MemoryPeople {
  private readonly users = new Map<UserId, UserCredentials>();
  private readonly sessions = new Map<string, MemSession>();
  private readonly tokens = new Map<ApiTokenId, MemToken>();
  private nextUser = 1;
  private nextToken = 1;

  constructor(private readonly nowMs: () => number) {}

  private row(user: UserCredentials): UserRow {
    return { id: user.id, name: user.name, role: user.role, disabled: user.disabled, createdAt: user.createdAt };
  }

  private user(userId: UserId): UserCredentials {
    const user = this.users.get(userId);
    if (!user) throw new NotFoundError(`user ${userId} does not exist`, { userId });
    return user;
  }

  private tokenRow(token: MemToken): ApiTokenRow {
    return { ...token.row, userName: this.user(token.row.userId).name };
  }

  private endSessions(userId: UserId): number {
    let ended = 0;
    for (const [hash, session] of this.sessions) {
      if (session.userId === userId) {
        this.sessions.delete(hash);
        ended++;
      }
    }
    return ended;
  }

  async createUser(input: { name: UserName; role: Role; passwordHash: string }): Promise<UserRow> {
    if ([...this.users.values()].some((u) => u.name === input.name)) {
      throw new InvalidInputError(`name: a user named "${input.name}" exists already`, { field: 'name', problem: 'taken' });
    }
    const user: UserCredentials = {
      id: String(this.nextUser++) as UserId,
      name: input.name,
      role: input.role,
      disabled: false,
      createdAt: date(this.nowMs()),
      passwordHash: input.passwordHash,
    };
    this.users.set(user.id, user);
    return this.row(user);
  }

  async userCredentials(input: { name: UserName }): Promise<UserCredentials | null> {
    const user = [...this.users.values()].find((u) => u.name === input.name);
    return user ? { ...user } : null;
  }

  async getUser(input: { userId: UserId }): Promise<UserRow> {
    return this.row(this.user(input.userId));
  }

  async listUsers(): Promise<UserRow[]> {
    return [...this.users.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((u) => this.row(u));
  }

  async updateUser(input: { userId: UserId; role?: Role; disabled?: boolean }): Promise<UserRow> {
    const user = this.user(input.userId);
    if (input.role !== undefined) user.role = input.role;
    if (input.disabled !== undefined) user.disabled = input.disabled;
    this.endSessions(user.id);
    return this.row(user);
  }

  async setPassword(input: { userId: UserId; passwordHash: string }): Promise<UserRow> {
    const user = this.user(input.userId);
    user.passwordHash = input.passwordHash;
    this.endSessions(user.id);
    return this.row(user);
  }

  async createSession(input: { secretHash: string; userId: UserId; ttlMs: number }): Promise<{ expiresAt: Date }> {
    this.user(input.userId);
    const expiresAtMs = this.nowMs() + input.ttlMs;
    this.sessions.set(input.secretHash, { userId: input.userId, expiresAtMs });
    return { expiresAt: date(expiresAtMs) };
  }

  async sessionPrincipal(input: { secretHash: string }): Promise<Principal | null> {
    const session = this.sessions.get(input.secretHash);
    if (!session || session.expiresAtMs <= this.nowMs()) return null;
    const user = this.user(session.userId);
    return user.disabled ? null : { user: this.row(user), role: user.role, tokenId: null };
  }

  async deleteSession(input: { secretHash: string }): Promise<void> {
    this.sessions.delete(input.secretHash);
    for (const [hash, session] of this.sessions) if (session.expiresAtMs < this.nowMs()) this.sessions.delete(hash);
  }

  async revokeSessions(input: { userId: UserId }): Promise<{ revoked: number }> {
    return { revoked: this.endSessions(input.userId) };
  }

  async createApiToken(input: { userId: UserId; name: string; role: Role; secretHash: string; ttlMs: number }): Promise<ApiTokenRow> {
    const owner = this.user(input.userId);
    if (!roleAtLeast(owner.role, input.role)) {
      throw new ForbiddenError(`role: a token may not have a role above its owner's (${owner.role})`, { field: 'role', ownerRole: owner.role });
    }
    const now = this.nowMs();
    const token: MemToken = {
      row: {
        id: String(this.nextToken++) as ApiTokenId,
        userId: owner.id,
        name: input.name,
        role: input.role,
        createdAt: date(now),
        expiresAt: date(now + input.ttlMs),
        revokedAt: null,
      },
      secretHash: input.secretHash,
    };
    this.tokens.set(token.row.id, token);
    return this.tokenRow(token);
  }

  async apiTokenPrincipal(input: { secretHash: string }): Promise<Principal | null> {
    const token = [...this.tokens.values()].find((t) => t.secretHash === input.secretHash);
    if (!token || token.row.revokedAt !== null || token.row.expiresAt.getTime() <= this.nowMs()) return null;
    const user = this.user(token.row.userId);
    if (user.disabled) return null;
    const role = roleAtLeast(token.row.role, user.role) ? user.role : token.row.role;
    return { user: this.row(user), role, tokenId: token.row.id };
  }

  async listApiTokens(input: { userId?: UserId }): Promise<ApiTokenRow[]> {
    return [...this.tokens.values()]
      .filter((t) => input.userId === undefined || t.row.userId === input.userId)
      .sort((a, b) => Number(b.row.id) - Number(a.row.id))
      .map((t) => this.tokenRow(t));
  }

  async revokeApiToken(input: { tokenId: ApiTokenId }): Promise<ApiTokenRow> {
    const token = this.tokens.get(input.tokenId);
    if (!token) throw new NotFoundError(`API token ${input.tokenId} does not exist`, { tokenId: input.tokenId });
    token.row.revokedAt ??= date(this.nowMs());
    return this.tokenRow(token);
  }
}
