import { randomBytes } from 'node:crypto';
import { InvalidInputError, poolProblem } from '@fenceline/core';
import { secretHash } from './credentials';

/**
 * The form of an issued worker credential and of a session secret. A credential's token
 * is `flw.<pool>.<secret>`: the pool is in the clear, so a worker can name itself after
 * its pool without more settings, and the secret is 32 random bytes. The store keeps only
 * the SHA-256 of the whole token (secretHash, the store's one rule for every secret it
 * keeps: worker credentials, sessions and API tokens alike). The CLI issues credentials
 * and the scheduler checks them, so the form lives here where both import it; the pure
 * rules on a token (workerTokenPool, poolAllows) are in @fenceline/core.
 */

/** A new credential's id and token for `pool`; the token is shown once and never stored. */
export function issueWorkerToken(pool: string): { id: string; token: string; secretHash: string } {
  const problem = poolProblem(pool);
  if (problem !== null) throw new InvalidInputError(`pool: ${problem}`, { field: 'pool', problem });
  const token = `flw.${pool}.${randomBytes(32).toString('base64url')}`;
  return { id: `wk-${randomBytes(6).toString('hex')}`, token, secretHash: secretHash(token) };
}

/** A new session secret, for a register call that did not bring one. */
export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}
