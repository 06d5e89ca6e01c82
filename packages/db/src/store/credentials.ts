import { sql } from 'drizzle-orm';
import { NotFoundError } from '@fenceline/core';
import { type WorkerCredentialRow } from '@fenceline/core/store';
import { firstRow, rows, type Executor, type RawRow } from './db';
import { NOTICE_CHANNEL } from './notices';
import { toDate, toDateOrNull } from './rows';

/**
 * Worker credentials (WorkerCredentialStore). The secret itself never reaches the store:
 * the caller passes its SHA-256, and a lookup is by that hash.
 */

function credentialFromRow(r: RawRow): WorkerCredentialRow {
  return { id: String(r.id), pool: String(r.pool), createdAt: toDate(r.created_at), revokedAt: toDateOrNull(r.revoked_at), lastUsedAt: toDateOrNull(r.last_used_at) };
}

export async function createWorkerCredential(db: Executor, input: { id: string; pool: string; secretHash: string }): Promise<WorkerCredentialRow> {
  const row = await firstRow(
    db,
    sql`insert into worker_credentials (id, pool, secret_hash, created_at) values (${input.id}, ${input.pool}, ${input.secretHash}, now())
        returning id, pool, created_at, revoked_at, last_used_at`,
  );
  if (!row) throw new Error(`creating worker credential ${input.id} returned no row`);
  return credentialFromRow(row);
}

export async function listWorkerCredentials(db: Executor): Promise<WorkerCredentialRow[]> {
  const result = await rows(db, sql`select id, pool, created_at, revoked_at, last_used_at from worker_credentials order by created_at, id`);
  return result.map(credentialFromRow);
}

/**
 * Revokes a credential; the notice goes out in the same statement, so every scheduler
 * forgets the credential the moment the revocation commits. Revoking twice keeps the
 * first revocation's time.
 */
export async function revokeWorkerCredential(db: Executor, input: { id: string }): Promise<WorkerCredentialRow> {
  const row = await firstRow(
    db,
    sql`with r as (
          update worker_credentials set revoked_at = coalesce(revoked_at, now()) where id = ${input.id}
          returning id, pool, created_at, revoked_at, last_used_at
        )
        select r.*, pg_notify(${NOTICE_CHANNEL}, json_build_object('kind', 'credential-revoked', 'credentialId', r.id)::text) from r`,
  );
  if (!row) throw new NotFoundError(`worker credential ${input.id} does not exist`, { credentialId: input.id });
  return credentialFromRow(row);
}

/** The credential with this secret hash (revoked ones too, so the caller can say so), stamped as used. */
export async function findWorkerCredential(db: Executor, input: { secretHash: string }): Promise<WorkerCredentialRow | null> {
  const row = await firstRow(
    db,
    sql`update worker_credentials set last_used_at = now() where secret_hash = ${input.secretHash}
        returning id, pool, created_at, revoked_at, last_used_at`,
  );
  return row ? credentialFromRow(row) : null;
}
