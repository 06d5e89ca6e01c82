/**
 * Worker credentials: issued, listed and revoked by an operator (the CLI), looked up by
 * the scheduler's authentication. Only the hash of a secret is ever stored.
 */
export interface WorkerCredentialStore {
  createWorkerCredential(input: { id: string; pool: string; secretHash: string }): Promise<WorkerCredentialRow>;
  listWorkerCredentials(): Promise<WorkerCredentialRow[]>;
  /** Revokes the credential (NotFound if there is none) and tells every process at once with a notice. */
  revokeWorkerCredential(input: { id: string }): Promise<WorkerCredentialRow>;
  /** The credential whose secret has this hash, revoked or not, stamped as used now; null if none. */
  findWorkerCredential(input: { secretHash: string }): Promise<WorkerCredentialRow | null>;
}

/** A worker credential as an operator sees it; its secret is never stored, only its hash. */
export interface WorkerCredentialRow {
  id: string;
  pool: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}
