import type { StoreTime } from './shared';

/**
 * The audit log: append and read, nothing else. No product path updates or deletes an
 * entry (the SQL store also refuses it with a trigger).
 */
export interface AuditStore extends StoreTime {
  /** Throws InvalidInputError naming the field for an entry that is too long or too large. */
  appendAudit(entry: NewAuditEntry): Promise<AuditRow>;
  /** Newest first; at most 500. */
  listAudit(query: AuditQuery): Promise<AuditRow[]>;
}

/** Every change the product records, by what was done. */
export const AUDIT_ACTIONS = [
  'dag.saved',
  'dag.reverted',
  'dag.applied',
  'dag.triggered',
  'dag.paused',
  'dag.resumed',
  'dag.catchup_changed',
  'run.action_requested',
  'backfill.created',
  'backfill.cancelled',
  'user.created',
  'user.role_changed',
  'user.disabled',
  'user.enabled',
  'user.password_changed',
  'sessions.revoked',
  'token.created',
  'token.revoked',
  'worker_token.created',
  'worker_token.revoked',
  'limit.set',
  'limit.deleted',
  'signin.refused',
  'notify.channel_created',
  'notify.channel_deleted',
  'notify.rule_created',
  'notify.rule_deleted',
  'notify.retried',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who acted: a signed-in user, an API token (named with its owner), the CLI's OS user, or the product itself. */
export type AuditActorKind = 'user' | 'token' | 'cli' | 'system';

export interface NewAuditEntry {
  actorKind: AuditActorKind;
  /** The user name, `owner/token-name`, the OS user of the CLI, or what the product calls itself. */
  actor: string;
  action: AuditAction;
  dagId?: string | null;
  /** What else the change was about: a user name, a token id. */
  target?: string | null;
  /** A small object of facts (a version, the new role); at most LIMITS-sized JSON. */
  details?: Record<string, unknown>;
  /** The client address, or "cli". */
  source: string;
  userAgent?: string | null;
}

export interface AuditRow {
  id: string;
  /** Store time when the entry was written. */
  at: Date;
  actorKind: AuditActorKind;
  actor: string;
  action: AuditAction;
  dagId: string | null;
  target: string | null;
  details: Record<string, unknown>;
  source: string;
  userAgent: string | null;
}

export interface AuditQuery {
  actor?: string;
  action?: AuditAction;
  dagId?: string;
  /** Entries older than this id, for paging back. */
  beforeId?: string;
  limit?: number;
}

/** The largest details object an entry may carry, as JSON. */
export const MAX_AUDIT_DETAILS_BYTES = 4096;
