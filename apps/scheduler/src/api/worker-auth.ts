import { TRPCError } from '@trpc/server';
import { workerTokenPool } from '@fenceline/core';
import { type NoticeStore, type WorkerCredentialStore } from '@fenceline/core/store';
import { tokenMatches } from './auth';
import { secretHash } from '@fenceline/db/people';

/**
 * Who is calling the worker protocol: an issued credential, bound to its pool, or (in
 * development mode only) the holder of the fleet-wide token, who may act as any worker.
 */
export interface WorkerCaller {
  credentialId: string | null;
  /** The pool whose worker ids the caller may use; null only for the development token. */
  pool: string | null;
}

export type WorkerAuthMode = 'credentials' | 'dev';

export interface WorkerAuthOptions {
  mode: WorkerAuthMode;
  /** The fleet-wide token, accepted only in development mode. */
  devToken: string | null;
  store: WorkerCredentialStore & NoticeStore;
  nowMs: () => number;
  /** How long a looked-up credential is trusted before it is read again (revocations also arrive at once by notice). */
  cacheTtlMs?: number;
}

/**
 * The answer when a credential cannot be looked up (the store is down): the caller is
 * told to try again, not that its credential is bad, and nothing of the store's error.
 */
export function authUnavailable(): TRPCError {
  return new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'worker credentials cannot be checked right now; try again' });
}

/** Entries kept at most; past it the cache starts again, so random tokens cannot grow it without bound. */
const MAX_CACHED = 10_000;

/**
 * Authenticates worker requests. A credential is read from the store once and then
 * cached, so ten thousand workers sharing a few credentials cost the store a read per
 * credential and per `cacheTtlMs`, not one per request. A revocation reaches every
 * scheduler at once through the store's notice, and the cache's time limit covers a
 * notice lost while the listener reconnected.
 */
export class WorkerAuth {
  private readonly cache = new Map<string, { caller: WorkerCaller | null; atMs: number }>();
  private readonly ttlMs: number;
  private unsubscribe: (() => Promise<void>) | null = null;

  constructor(private readonly o: WorkerAuthOptions) {
    this.ttlMs = o.cacheTtlMs ?? 10_000;
  }

  get mode(): WorkerAuthMode {
    return this.o.mode;
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.o.store.subscribe((notice) => {
      if (notice.kind !== 'credential-revoked') return;
      for (const [hash, entry] of this.cache) if (entry.caller?.credentialId === notice.credentialId) this.cache.delete(hash);
    });
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** The caller a bearer token stands for, or null when it stands for nobody (or was revoked). */
  async authenticate(token: string | undefined): Promise<WorkerCaller | null> {
    if (!token) return null;
    if (this.o.mode === 'dev' && this.o.devToken && tokenMatches(token, this.o.devToken)) return { credentialId: null, pool: null };
    // Only the issued form is looked up: anything else cannot be a credential.
    if (workerTokenPool(token) === null) return null;
    const hash = secretHash(token);
    const now = this.o.nowMs();
    const cached = this.cache.get(hash);
    if (cached && now - cached.atMs < this.ttlMs) return cached.caller;
    const row = await this.o.store.findWorkerCredential({ secretHash: hash });
    const caller = row && row.revokedAt === null ? { credentialId: row.id, pool: row.pool } : null;
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(hash, { caller, atMs: now });
    return caller;
  }
}
