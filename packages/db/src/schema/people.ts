import { bigint, boolean, index, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 6, mode: 'date' });

/** People who sign in to the console; the password is kept only as its salted scrypt hash. */
export const users = pgTable(
  'users',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    name: text('name').notNull(),
    role: text('role').notNull(),
    passwordHash: text('password_hash').notNull(),
    disabled: boolean('disabled').notNull().default(false),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('users_name_key').on(t.name)],
);

/** Console sessions, keyed by the SHA-256 of the cookie's secret (never the secret). */
export const sessions = pgTable(
  'sessions',
  {
    secretHash: text('secret_hash').primaryKey(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    createdAt: at('created_at').notNull().defaultNow(),
    expiresAt: at('expires_at').notNull(),
  },
  // Revoking all of a user's sessions is a scan by user.
  (t) => [index('sessions_user_idx').on(t.userId)],
);

/** Personal API tokens, keyed by the SHA-256 of the secret; scoped to a role, expiring, revocable. */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    role: text('role').notNull(),
    secretHash: text('secret_hash').notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
    expiresAt: at('expires_at').notNull(),
    revokedAt: at('revoked_at'),
  },
  (t) => [uniqueIndex('api_tokens_secret_hash_key').on(t.secretHash), index('api_tokens_user_idx').on(t.userId)],
);
