import { describe, expect, it } from 'vitest';
import { readSchedulerConfig } from '@fenceline/scheduler';

const base = { FENCELINE_WORKER_TOKEN: 'a-secret-of-enough-length' };

describe('scheduler configuration', () => {
  it('shares the shards only when FENCELINE_SHARE_SHARDS says so, and refuses a value it cannot read', () => {
    expect(readSchedulerConfig(base).node.shareShards).toBe(false);
    expect(readSchedulerConfig({ ...base, FENCELINE_SHARE_SHARDS: 'on' }).node.shareShards).toBe(true);
    expect(readSchedulerConfig({ ...base, FENCELINE_SHARE_SHARDS: 'true' }).node.shareShards).toBe(true);
    expect(readSchedulerConfig({ ...base, FENCELINE_SHARE_SHARDS: 'off' }).node.shareShards).toBe(false);
    expect(() => readSchedulerConfig({ ...base, FENCELINE_SHARE_SHARDS: 'sometimes' })).toThrow('FENCELINE_SHARE_SHARDS must be on or off, got "sometimes"');
  });
});

describe('scheduler configuration of lending', () => {
  it('lends by default above a reserve of 0.3% of the pool with a floor of 10 slots, and reads both', () => {
    expect(readSchedulerConfig(base).node).toMatchObject({ lendReserveFraction: 0.003, lendReserveMinSlots: 10 });
    const config = readSchedulerConfig({ ...base, FENCELINE_LEND_RESERVE_PERCENT: '2.5', FENCELINE_LEND_RESERVE_MIN_SLOTS: '0' });
    expect(config.node).toMatchObject({ lendReserveFraction: 0.025, lendReserveMinSlots: 0 });
    expect(readSchedulerConfig({ ...base, FENCELINE_LEND_RESERVE_PERCENT: '0' }).node.lendReserveFraction).toBe(0);
  });

  it('turns lending off with FENCELINE_LEND=off or FENCELINE_LEND_RESERVE_PERCENT=off', () => {
    expect(readSchedulerConfig({ ...base, FENCELINE_LEND: 'off' }).node.lendReserveFraction).toBeNull();
    expect(readSchedulerConfig({ ...base, FENCELINE_LEND_RESERVE_PERCENT: 'off' }).node.lendReserveFraction).toBeNull();
    expect(readSchedulerConfig({ ...base, FENCELINE_LEND: 'on' }).node.lendReserveFraction).toBe(0.003);
  });

  it('refuses a reserve or a floor it cannot read, naming the variable', () => {
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEND: 'maybe' })).toThrow('FENCELINE_LEND must be on or off, got "maybe"');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEND_RESERVE_PERCENT: '100' })).toThrow('FENCELINE_LEND_RESERVE_PERCENT must be a number in [0, 100) or off, got "100"');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEND_RESERVE_PERCENT: '-1' })).toThrow('FENCELINE_LEND_RESERVE_PERCENT must be a number in [0, 100) or off, got "-1"');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEND_RESERVE_PERCENT: '5%' })).toThrow('FENCELINE_LEND_RESERVE_PERCENT must be a number in [0, 100) or off, got "5%"');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEND_RESERVE_MIN_SLOTS: '-2' })).toThrow(
      'FENCELINE_LEND_RESERVE_MIN_SLOTS must be a whole number of at least 0, got "-2"',
    );
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEND_RESERVE_MIN_SLOTS: '2.5' })).toThrow(
      'FENCELINE_LEND_RESERVE_MIN_SLOTS must be a whole number of at least 0, got "2.5"',
    );
  });
});

describe('scheduler configuration of notification checks and led shards', () => {
  it('reads the notification check interval and the shards a node may lead, and refuses a list it cannot read', () => {
    expect(readSchedulerConfig(base).node).toMatchObject({ notifyCheckIntervalMs: 10_000, leadShards: null });
    const config = readSchedulerConfig({ ...base, FENCELINE_NOTIFY_CHECK_INTERVAL_MS: '500', FENCELINE_LEAD_SHARDS: '2, 0,2' });
    expect(config.node).toMatchObject({ notifyCheckIntervalMs: 500, leadShards: [0, 2] });
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEAD_SHARDS: '0,one' })).toThrow('FENCELINE_LEAD_SHARDS must be a comma-separated list of shard numbers, got "0,one"');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_NOTIFY_CHECK_INTERVAL_MS: '0' })).toThrow('FENCELINE_NOTIFY_CHECK_INTERVAL_MS must be a whole number of at least 1');
  });
});

describe('scheduler configuration refuses what cannot run', () => {
  it('refuses a zero tick interval, which would make a busy loop, naming the variable', () => {
    expect(() => readSchedulerConfig({ ...base, FENCELINE_TICK_INTERVAL_MS: '0' })).toThrow('FENCELINE_TICK_INTERVAL_MS must be a whole number of at least 1, got "0"');
  });

  it('refuses fractions and words rather than rounding them', () => {
    expect(() => readSchedulerConfig({ ...base, FENCELINE_SWEEP_INTERVAL_MS: '2.5' })).toThrow('FENCELINE_SWEEP_INTERVAL_MS must be a whole number');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEASE_TTL_MS: '90s' })).toThrow('FENCELINE_LEASE_TTL_MS must be a whole number');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_DISPATCH_ROUNDS: '0' })).toThrow('FENCELINE_DISPATCH_ROUNDS must be a whole number of at least 1');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_EVENT_FLUSH_INTERVAL_MS: '5' })).toThrow('at least 10');
  });

  it('accepts zero where zero turns a feature off', () => {
    const config = readSchedulerConfig({ ...base, FENCELINE_TICK_LOOKAHEAD_MS: '0', FENCELINE_OUTBOX_HOLD_MS: '0', FENCELINE_RENEW_BATCH_WINDOW_MS: '0' });
    expect(config.node.tickLookaheadMs).toBe(0);
    expect(config.node.outboxHoldMs).toBe(0);
    expect(config.node.renewBatchWindowMs).toBe(0);
  });

  it('refuses a renewal interval that is not shorter than the lease TTL, and the same for shard leases', () => {
    expect(() => readSchedulerConfig({ ...base, FENCELINE_LEASE_TTL_MS: '30000', FENCELINE_RENEW_INTERVAL_MS: '30000' })).toThrow(
      'renewIntervalMs (30000) must be shorter than leaseTtlMs (30000)',
    );
    expect(() => readSchedulerConfig({ ...base, FENCELINE_SHARD_LEASE_TTL_MS: '4000' })).toThrow('shardRenewIntervalMs (5000) must be shorter than shardLeaseTtlMs (4000)');
  });
});

describe('scheduler worker authentication', () => {
  it('accepts only issued credentials by default, and the fleet token only in development mode', () => {
    expect(readSchedulerConfig(base)).toMatchObject({ workerAuth: 'credentials', workerToken: null });
    expect(readSchedulerConfig({ ...base, FENCELINE_WORKER_AUTH: 'dev' })).toMatchObject({ workerAuth: 'dev', workerToken: base.FENCELINE_WORKER_TOKEN });
    expect(() => readSchedulerConfig({ FENCELINE_WORKER_AUTH: 'dev', FENCELINE_WORKER_TOKEN: 'short' })).toThrow('FENCELINE_WORKER_AUTH=dev needs FENCELINE_WORKER_TOKEN');
    expect(() => readSchedulerConfig({ ...base, FENCELINE_WORKER_AUTH: 'open' })).toThrow('FENCELINE_WORKER_AUTH must be credentials or dev, got "open"');
  });
});
