import { InvalidInputError } from '../errors';
import { AUDIT_ACTIONS, MAX_AUDIT_DETAILS_BYTES, type AuditActorKind, type AuditRow, type NewAuditEntry } from './audit';

const ACTOR_KINDS: readonly AuditActorKind[] = ['user', 'token', 'cli', 'system'];
const MAX_TEXT = 500;

/** An audit entry as both stores write it: every optional field filled in, as a row has them. */
export type CheckedAuditEntry = Omit<AuditRow, 'id' | 'at'>;

function text(value: unknown, field: string, optional: boolean): string | null {
  if (optional && (value === undefined || value === null)) return null;
  if (typeof value !== 'string' || value.length === 0) throw new InvalidInputError(`${field}: must be a non-empty string`, { field });
  // A user agent is the client's to choose, so a long one is cut rather than refused.
  if (value.length > MAX_TEXT) {
    if (field === 'userAgent') return value.slice(0, MAX_TEXT);
    throw new InvalidInputError(`${field}: must be at most ${MAX_TEXT} characters`, { field });
  }
  return value;
}

/**
 * The one check of an audit entry, shared by the stores, so an entry one store takes the
 * other takes too. A refused entry names its field.
 */
export function checkAuditEntry(entry: NewAuditEntry): CheckedAuditEntry {
  if (!ACTOR_KINDS.includes(entry.actorKind)) throw new InvalidInputError(`actorKind: must be one of ${ACTOR_KINDS.join(', ')}`, { field: 'actorKind' });
  if (!(AUDIT_ACTIONS as readonly string[]).includes(entry.action)) throw new InvalidInputError('action: not a known audit action', { field: 'action' });
  const details = entry.details ?? {};
  if (typeof details !== 'object' || details === null || Array.isArray(details)) throw new InvalidInputError('details: must be an object', { field: 'details' });
  const size = new TextEncoder().encode(JSON.stringify(details)).byteLength;
  if (size > MAX_AUDIT_DETAILS_BYTES) throw new InvalidInputError(`details: must be at most ${MAX_AUDIT_DETAILS_BYTES} bytes of JSON`, { field: 'details', size });
  return {
    actorKind: entry.actorKind,
    actor: text(entry.actor, 'actor', false)!,
    action: entry.action,
    dagId: text(entry.dagId, 'dagId', true),
    target: text(entry.target, 'target', true),
    details,
    source: text(entry.source, 'source', false)!,
    userAgent: text(entry.userAgent, 'userAgent', true),
  };
}
