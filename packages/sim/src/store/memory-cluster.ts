import { checkContention, type ShardLeaseRow, type WorkerRow } from '@fenceline/core';
import { type AcquireResult, type ClusterStore, type ContentionAsk, type ContentionView, type LeaderToken, type ShardAsk } from '@fenceline/core/store';
import { date, dateOrNull, type MemShard } from './memory-rows';
import type { MemoryTables } from './memory-tables';

/**
 * The cluster in memory: the shard count, the shard leases with their epochs, the nodes
 * seen serving, and the workers seen lately (ClusterStore).
 */
export class MemoryCluster implements Omit<ClusterStore, 'now'> {
  constructor(private readonly tables: MemoryTables) {}

  async initCluster(shardCount: number): Promise<{ shardCount: number }> {
    if (this.tables.shardCount === null) {
      if (!Number.isInteger(shardCount) || shardCount < 1) throw new Error(`initCluster: shard count must be a positive integer, got ${shardCount}`);
      this.tables.shardCount = shardCount;
      this.tables.clusterCreatedAtMs = this.tables.nowMs();
    }
    return { shardCount: this.tables.shardCount };
  }

  async acquireShard({ shard, nodeId, ttlMs }: ShardAsk): Promise<AcquireResult | null> {
    const now = this.tables.nowMs();
    const row = this.tables.shards.get(shard);
    if (!row) {
      const created: MemShard = { shard, holder: nodeId, epoch: 1, expiresAtMs: now + ttlMs, acquiredAtMs: now };
      this.tables.shards.set(shard, created);
      this.tables.emit({ op: 'shard:acquired', atMs: now, shard, nodeId, epoch: 1, expiresAtMs: now + ttlMs });
      return { token: { shard, nodeId, epoch: 1 }, expiresAt: date(now + ttlMs), previousHolder: null, reason: 'new' };
    }
    const live = row.expiresAtMs !== null && row.expiresAtMs > now;
    if (!(row.holder === null || row.holder === nodeId || !live)) return null;
    const prevHolder = row.holder;
    const prevEpoch = row.epoch;
    // Every take raises the epoch, our own live lease included (see the SQL store).
    const reclaiming = row.holder === nodeId && live;
    row.epoch += 1;
    row.acquiredAtMs = now;
    row.holder = nodeId;
    row.expiresAtMs = now + ttlMs;
    const token = { shard, nodeId, epoch: row.epoch };
    const expiresAt = date(now + ttlMs);
    this.tables.emit({ op: 'shard:acquired', atMs: now, shard, nodeId, epoch: row.epoch, expiresAtMs: now + ttlMs });
    if (reclaiming) return { token, expiresAt, previousHolder: null, reason: 'reclaimed' };
    if (prevHolder === null) return { token, expiresAt, previousHolder: null, reason: prevEpoch === 0 ? 'new' : 'released' };
    return { token, expiresAt, previousHolder: prevHolder, reason: 'expired' };
  }

  async renewShard(token: LeaderToken, ttlMs: number): Promise<Date> {
    const now = this.tables.nowMs();
    const row = this.tables.shards.get(token.shard);
    if (!row || !this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'renewShard');
    row.expiresAtMs = now + ttlMs;
    this.tables.emit({ op: 'shard:renewed', atMs: now, shard: token.shard, nodeId: token.nodeId, epoch: token.epoch, expiresAtMs: now + ttlMs });
    return date(now + ttlMs);
  }

  async releaseShard(token: LeaderToken): Promise<void> {
    const now = this.tables.nowMs();
    const row = this.tables.shards.get(token.shard);
    if (!row || row.holder !== token.nodeId || row.epoch !== token.epoch) return;
    row.holder = null;
    row.expiresAtMs = now;
    this.tables.emit({ op: 'shard:released', atMs: now, shard: token.shard, nodeId: token.nodeId, epoch: token.epoch });
  }

  async contentionView({ nodeId, liveWindowMs, serving }: ContentionAsk): Promise<ContentionView> {
    checkContention(nodeId, liveWindowMs);
    const now = this.tables.nowMs();
    const last = this.tables.nodesSeen.get(nodeId);
    if (serving && (last === undefined || last < now - Math.floor(liveWindowMs / 10))) this.tables.nodesSeen.set(nodeId, now);
    const nodes = [...this.tables.nodesSeen].filter(([id, seen]) => (id === nodeId ? serving : seen > now - liveWindowMs)).map(([id]) => id);
    return { now: date(now), nodes: nodes.sort(), shards: await this.listShards() };
  }

  async leaveCluster(nodeId: string): Promise<void> {
    this.tables.nodesSeen.delete(nodeId);
  }

  async listShards(): Promise<ShardLeaseRow[]> {
    return [...this.tables.shards.values()]
      .sort((a, b) => a.shard - b.shard)
      .map((s) => ({ shard: s.shard, holder: s.holder, epoch: s.epoch, expiresAt: dateOrNull(s.expiresAtMs), acquiredAt: dateOrNull(s.acquiredAtMs) }));
  }

  async listWorkers(withinMs: number): Promise<WorkerRow[]> {
    return this.tables.workerTable.list(this.tables.nowMs() - withinMs);
  }
}
