import { createHash } from 'node:crypto';
import { checkSameRequest, type HeldKey } from '@fenceline/core';

/**
 * A keyed request's fingerprint as the tables keep it: the SHA-256 of its canonical text
 * (requestFingerprintText), so a DAG spec's fingerprint takes 64 characters, not the spec.
 */
export function storedFingerprint(held: HeldKey): string {
  return createHash('sha256').update(held.fingerprint).digest('hex');
}

/** Refuses, with KeyReusedError, a held key whose stored fingerprint is another request's. */
export function checkStoredRequest(held: HeldKey, stored: unknown): void {
  checkSameRequest(held, typeof stored === 'string' ? stored : null, (s) => s === storedFingerprint(held));
}
