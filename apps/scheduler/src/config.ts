import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { checkNodeConfig, DEFAULT_NODE_CONFIG, readLendSettings, type NodeConfig } from '@fenceline/core/engine';

/** A scheduler process's settings, read from the environment (see docs/configuration.md). */
export interface SchedulerConfig {
  nodeId: string;
  host: string;
  port: number;
  /**
   * How workers authenticate: `credentials` (the default) accepts only credentials issued
   * with `fenceline worker-token create`; `dev` also accepts the fleet-wide
   * FENCELINE_WORKER_TOKEN, which may act as any worker (what `npm start` uses).
   */
  workerAuth: 'credentials' | 'dev';
  /** The fleet-wide token, in development mode only. */
  workerToken: string | null;
  /**
   * The most HTTP connections the node holds at once (FENCELINE_MAX_CONNECTIONS); null
   * derives it from the file descriptor limit (connection-limit.ts).
   */
  maxConnections: number | null;
  node: NodeConfig;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw == null || raw === '') return fallback;
  if (raw === 'on' || raw === 'true' || raw === '1') return true;
  if (raw === 'off' || raw === 'false' || raw === '0') return false;
  throw new Error(`${name} must be on or off, got "${raw}"`);
}

/**
 * Reads a whole number of at least `min`. Intervals and counts default to a minimum of 1,
 * since a zero tick or sweep interval would make a busy loop; a fraction is refused rather
 * than rounded, so what runs is what was written.
 */
function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw == null || raw === '') return fallback;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  return n;
}

/** A comma-separated list of shard numbers, or null when unset: the shards a node may lead. */
function shardList(env: NodeJS.ProcessEnv, name: string): number[] | null {
  const raw = env[name];
  if (raw == null || raw.trim() === '') return null;
  const parts = raw.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^\d+$/.test(p) && Number.isSafeInteger(Number(p)))) throw new Error(`${name} must be a comma-separated list of shard numbers, got "${raw}"`);
  return [...new Set(parts.map(Number))].sort((a, b) => a - b);
}

export function readSchedulerConfig(env: NodeJS.ProcessEnv = process.env): SchedulerConfig {
  const workerAuth = env.FENCELINE_WORKER_AUTH || 'credentials';
  if (workerAuth !== 'credentials' && workerAuth !== 'dev') throw new Error(`FENCELINE_WORKER_AUTH must be credentials or dev, got "${workerAuth}"`);
  const fleetToken = env.FENCELINE_WORKER_TOKEN ?? '';
  if (workerAuth === 'dev' && fleetToken.length < 16) {
    throw new Error('FENCELINE_WORKER_AUTH=dev needs FENCELINE_WORKER_TOKEN set to a secret of at least 16 characters (npm start generates one).');
  }
  const d = DEFAULT_NODE_CONFIG;
  const capPercent = env.FENCELINE_CAP_PERCENT;
  const capFraction = capPercent ? Number(capPercent) / 100 : d.capFraction;
  if (!(capFraction > 0 && capFraction <= 1)) throw new Error(`FENCELINE_CAP_PERCENT must be in (0, 100], got "${capPercent}"`);
  const lending = readLendSettings(env, d);
  const config: SchedulerConfig = {
    nodeId: env.FENCELINE_NODE_ID || `scheduler-${hostname()}-${randomUUID().slice(0, 8)}`,
    host: env.FENCELINE_SCHEDULER_HOST || '127.0.0.1',
    port: int(env, 'FENCELINE_SCHEDULER_PORT', 7400, 0),
    workerAuth,
    workerToken: workerAuth === 'dev' ? fleetToken : null,
    maxConnections: env.FENCELINE_MAX_CONNECTIONS ? int(env, 'FENCELINE_MAX_CONNECTIONS', 0) : null,
    node: {
      shardCount: int(env, 'FENCELINE_SHARDS', d.shardCount),
      shardLeaseTtlMs: int(env, 'FENCELINE_SHARD_LEASE_TTL_MS', d.shardLeaseTtlMs),
      shardRenewIntervalMs: int(env, 'FENCELINE_SHARD_RENEW_INTERVAL_MS', d.shardRenewIntervalMs),
      tickIntervalMs: int(env, 'FENCELINE_TICK_INTERVAL_MS', d.tickIntervalMs),
      sweepIntervalMs: int(env, 'FENCELINE_SWEEP_INTERVAL_MS', d.sweepIntervalMs),
      leaseTtlMs: int(env, 'FENCELINE_LEASE_TTL_MS', d.leaseTtlMs),
      renewIntervalMs: int(env, 'FENCELINE_RENEW_INTERVAL_MS', d.renewIntervalMs),
      capFraction,
      ...lending,
      pollWaitMs: int(env, 'FENCELINE_POLL_WAIT_MS', d.pollWaitMs),
      workerLiveWindowMs: int(env, 'FENCELINE_WORKER_LIVE_WINDOW_MS', d.workerLiveWindowMs),
      workerHeartbeatIntervalMs: int(env, 'FENCELINE_WORKER_HEARTBEAT_INTERVAL_MS', d.workerHeartbeatIntervalMs),
      reconcileIntervalMs: int(env, 'FENCELINE_RECONCILE_INTERVAL_MS', d.reconcileIntervalMs),
      dueBatch: int(env, 'FENCELINE_DUE_BATCH', d.dueBatch),
      tickLookaheadMs: int(env, 'FENCELINE_TICK_LOOKAHEAD_MS', d.tickLookaheadMs, 0),
      renewBatchWindowMs: int(env, 'FENCELINE_RENEW_BATCH_WINDOW_MS', d.renewBatchWindowMs, 0),
      dispatchRoundsInFlight: int(env, 'FENCELINE_DISPATCH_ROUNDS', d.dispatchRoundsInFlight),
      outboxHoldMs: int(env, 'FENCELINE_OUTBOX_HOLD_MS', d.outboxHoldMs, 0),
      eventFlushIntervalMs: int(env, 'FENCELINE_EVENT_FLUSH_INTERVAL_MS', d.eventFlushIntervalMs, 10),
      shareShards: flag(env, 'FENCELINE_SHARE_SHARDS', d.shareShards),
      leadShards: shardList(env, 'FENCELINE_LEAD_SHARDS'),
      notifyCheckIntervalMs: int(env, 'FENCELINE_NOTIFY_CHECK_INTERVAL_MS', d.notifyCheckIntervalMs),
      storeCallTimeoutMs: int(env, 'FENCELINE_STORE_CALL_TIMEOUT_MS', d.storeCallTimeoutMs),
    },
  };
  // Relations between settings (a renewal interval shorter than its TTL) are the node's own
  // rule; checking them here reports them before anything starts.
  checkNodeConfig(config.node);
  return config;
}
