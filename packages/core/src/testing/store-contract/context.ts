import { expect } from 'vitest';
import { shardOf } from '../../dag/shard';
import { parseWorkerId, parseDagId, type DagId, type JobId } from '../../ids';
import type { JobRow } from '../../model';
import type { LeaderToken, Store } from '../../store';
import type { EventReadStore } from '../event-reads';
import type { StoreHarness } from '../store-contract';
import { dagIdInFreshShard, LONG_TTL_MS, newJobs, SHARD_COUNT, spec, unique } from './fixtures';
import { grantLeases, startRun } from './one-leader';

/**
 * What every part of the store contract works with: the harness of the current test (set
 * afresh before each one, so parts read it through this object rather than keep it) and
 * the steps many tests begin with.
 */
export class ContractContext {
  private current: StoreHarness | null = null;

  /** Called before each test with that test's harness. */
  use(harness: StoreHarness): void {
    this.current = harness;
  }

  get h(): StoreHarness {
    if (!this.current) throw new Error('store contract: no harness (a test ran outside beforeEach)');
    return this.current;
  }

  get store(): Store & EventReadStore {
    return this.h.store;
  }

  /** `dagId` and more DAG ids in its shard, `${dagId}${tag}<k>` searched until they land there. */
  idsInShard(dagId: DagId, shard: number, count: number, tag: string): DagId[] {
    const ids = [dagId];
    for (let k = 0; ids.length < count; k++) {
      const candidate = parseDagId(`${dagId}${tag}${k}`);
      if (shardOf(candidate, SHARD_COUNT) === shard) ids.push(candidate);
    }
    return ids;
  }

  /** Waits (advances store time) until every one of these store times has passed. */
  async untilDue(atMs: number[]): Promise<void> {
    const waitMs = Math.max(...atMs) - (await this.store.now()).getTime() + 5;
    if (waitMs > 0) await this.h.advanceMs(waitMs);
  }

  /** Leads a fresh shard with a new node. */
  async leadFreshShard(ttlMs = LONG_TTL_MS, prefix = 'dag'): Promise<{ token: LeaderToken; dagId: DagId }> {
    const { dagId, shard } = dagIdInFreshShard(prefix);
    const acquired = await this.store.acquireShard({ shard, nodeId: unique('node'), ttlMs });
    expect(acquired).not.toBeNull();
    return { token: acquired!.token, dagId };
  }

  /** A manual DAG, its shard led, one run started: job `a` ready, job `b` waiting. */
  async startedRun(opts: { maxAttempts?: number; retryBackoffMs?: number; shardTtlMs?: number } = {}) {
    const { token, dagId } = await this.leadFreshShard(opts.shardTtlMs);
    await this.store.putDag(spec(dagId), SHARD_COUNT);
    const run = await this.store.triggerRun(dagId);
    const jobs = await startRun(this.store, token, run.id, newJobs(opts));
    expect(jobs).toHaveLength(2);
    const ready = jobs.find((j) => j.taskId === 'a') as JobRow;
    const waiting = jobs.find((j) => j.taskId === 'b') as JobRow;
    return { token, dagId, run, ready, waiting };
  }

  async grantOne(token: LeaderToken, jobId: JobId, workerId: string, ttlMs = LONG_TTL_MS) {
    const granted = await grantLeases(this.store, token, [{ jobId, workerId: parseWorkerId(workerId) }], ttlMs);
    expect(granted).toHaveLength(1);
    return granted[0]!;
  }
}
