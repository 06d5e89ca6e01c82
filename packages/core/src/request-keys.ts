import { canonicalJson } from './dag/canonical';
import { InvalidInputError, KeyReusedError } from './errors';
import { checkRequestKey } from './limits';

/**
 * A write that must happen once (a trigger, a run action, a backfill, an apply) may carry a
 * request key. The key is its caller's: it is held per owner (the signed-in user's or the
 * API token owner's id, `cli` for the CLI on the store), so another caller's request with
 * the same key is a request of its own. And it names one request: the store keeps a
 * fingerprint of what was asked with it, answers the same request sent again with the first
 * answer, and refuses the key sent with anything else (KeyReusedError), writing nothing.
 */
export interface KeyedRequestOptions {
  requestKey?: string;
  /** Who sends the key; '' when left out (the store's own callers, which share one caller). */
  requestOwner?: string;
  /**
   * What was asked, as requestFingerprintText writes it. Left out, the store writes it from
   * its own input; a caller whose input to the store is not what it was sent (an apply that
   * keeps the current pause) gives the one of what it was sent.
   */
  requestFingerprint?: string;
}

/** The longest owner a key may have: a user's id, or a name like `cli`. */
export const MAX_REQUEST_OWNER_LENGTH = 200;

/** A keyed request as the store checks it: the key, its owner and its fingerprint; null without a key. */
export interface HeldKey {
  key: string;
  owner: string;
  fingerprint: string;
}

/**
 * The fingerprint of a request: the operation, what it acts on and its body, with object keys
 * in order (canonicalJson), so equal requests match whatever order their fields came in.
 */
export function requestFingerprintText(operation: string, target: string, body: unknown): string {
  return canonicalJson({ operation, target, body });
}

/** The request's key, owner and fingerprint, checked; null when it carries no key. */
export function heldKeyOf(options: KeyedRequestOptions, fingerprintOf: () => string): HeldKey | null {
  if (options.requestKey === undefined) return null;
  const key = checkRequestKey(options.requestKey);
  const owner = options.requestOwner ?? '';
  if (typeof owner !== 'string' || owner.length > MAX_REQUEST_OWNER_LENGTH) {
    throw new InvalidInputError(`requestOwner must be text of at most ${MAX_REQUEST_OWNER_LENGTH} characters`, { field: 'requestOwner' });
  }
  const fingerprint = options.requestFingerprint ?? fingerprintOf();
  if (typeof fingerprint !== 'string' || fingerprint.length === 0) throw new InvalidInputError('requestFingerprint must be non-empty text', { field: 'requestFingerprint' });
  return { key, owner, fingerprint };
}

/**
 * Refuses a key found held with another fingerprint (stored as `stored`; null for a key kept
 * before fingerprints were, which matches anything). `same` compares the two forms a store
 * keeps (the text itself, or its hash).
 */
export function checkSameRequest(held: HeldKey, stored: string | null, same: (stored: string, fingerprint: string) => boolean): void {
  if (stored === null || same(stored, held.fingerprint)) return;
  throw new KeyReusedError(`request key ${held.key} was already used for a different request; send a new key with a new request`, { field: 'requestKey' });
}
