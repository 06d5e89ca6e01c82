import { DEFAULTS, type LendReserve } from '@fenceline/core';
import { lendReserveOf, readLendSettings } from '@fenceline/core/engine';

/** The console's settings, read from the environment once per process (see docs/configuration.md). */
export interface ConsoleConfig {
  databaseUrl: string;
  /** How long a console session lasts from sign-in (FENCELINE_SESSION_HOURS). */
  sessionTtlMs: number;
  /** The cluster's fair-share cap as a fraction, for the arithmetic the console shows. */
  capFraction: number;
  /** Shard count for new DAGs when the cluster has not recorded one yet. */
  shardCount: number;
  /** A worker silent for longer than this is out of the pool (the schedulers' own window). */
  workerLiveWindowMs: number;
  /** The job lease TTL, used only to show when a live lease was last renewed. */
  leaseTtlMs: number;
  /** The schedulers' lending reserve, read from the variables they read (null: no lending), to show it on Fair share. */
  lendReserve: LendReserve | null;
}

function numberFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
}

let cached: ConsoleConfig | null = null;

export function consoleConfig(): ConsoleConfig {
  if (cached) return cached;
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("DATABASE_URL must be set for the console (the launcher passes the cluster's database URL).");
  const capPercent = numberFrom('FENCELINE_CAP_PERCENT', DEFAULTS.capFraction * 100);
  if (capPercent > 100) throw new Error(`FENCELINE_CAP_PERCENT must be in (0, 100], got ${capPercent}`);
  cached = {
    databaseUrl,
    sessionTtlMs: numberFrom('FENCELINE_SESSION_HOURS', 12) * 3600_000,
    capFraction: capPercent / 100,
    shardCount: numberFrom('FENCELINE_SHARDS', DEFAULTS.shardCount),
    workerLiveWindowMs: numberFrom('FENCELINE_WORKER_LIVE_WINDOW_MS', 60_000),
    leaseTtlMs: numberFrom('FENCELINE_LEASE_TTL_MS', DEFAULTS.leaseTtlMs),
    lendReserve: lendReserveOf(readLendSettings(process.env)),
  };
  return cached;
}
