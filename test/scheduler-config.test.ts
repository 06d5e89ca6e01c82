import { describe, expect, it } from 'vitest';
import { readSchedulerConfig } from '../apps/scheduler/src/config';

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
