import { describe, expect, it } from 'vitest';
import type { ShardLeaseRow } from '../src/model';
import { planShardShare, type ShardShareInput } from '../src/engine/shard-share';

const TTL = 15_000;
const GRACE = 3_000;

/** A lease table in memory and the nodes that contend over it, one plan per node per round. */
class Table {
  rows = new Map<number, ShardLeaseRow>();
  led = new Map<string, Set<number>>();
  /** Nodes no worker polls. */
  idle = new Set<string>();
  noSharing = false;
  constructor(
    readonly shardCount: number,
    public nowMs = 1_000_000,
  ) {}

  holders(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, set] of this.led) out.set(id, set.size);
    return out;
  }

  input(nodeId: string, nodes: string[]): ShardShareInput {
    return {
      nodeId,
      shardCount: this.shardCount,
      led: [...(this.led.get(nodeId) ?? [])],
      shards: [...this.rows.values()],
      // The store lists only the nodes that serve workers.
      nodes: nodes.filter((id) => !this.idle.has(id)),
      serving: !this.idle.has(nodeId),
      nowMs: this.nowMs,
      graceMs: GRACE,
      share: !this.noSharing,
    };
  }

  /** One node's turn: plan, then apply the plan the way a node and the store would. */
  turn(nodeId: string, nodes: string[]): { acquired: number[]; released: number[] } {
    const plan = planShardShare(this.input(nodeId, nodes));
    const mine = this.led.get(nodeId) ?? new Set<number>();
    this.led.set(nodeId, mine);
    const acquired: number[] = [];
    for (const shard of plan.acquire) {
      const row = this.rows.get(shard);
      const liveOther = row && row.holder !== null && row.holder !== nodeId && row.expiresAt!.getTime() > this.nowMs;
      // The store's own refusal: planShardShare must never ask for such a shard.
      expect(liveOther, `node ${nodeId} asked for shard ${shard} held by ${row?.holder}`).toBeFalsy();
      this.rows.set(shard, { shard, holder: nodeId, epoch: (row?.epoch ?? 0) + 1, expiresAt: new Date(this.nowMs + TTL), acquiredAt: new Date(this.nowMs) });
      mine.add(shard);
      acquired.push(shard);
    }
    for (const shard of plan.release) {
      expect(mine.has(shard)).toBe(true);
      mine.delete(shard);
      const row = this.rows.get(shard)!;
      this.rows.set(shard, { ...row, holder: null, expiresAt: new Date(this.nowMs) });
    }
    return { acquired, released: plan.release };
  }

  /** Leaders renew what they lead. */
  renew(nodes: string[]): void {
    for (const id of nodes) for (const shard of this.led.get(id) ?? []) this.rows.set(shard, { ...this.rows.get(shard)!, expiresAt: new Date(this.nowMs + TTL) });
  }

  /** Rounds of one second in which every node in `nodes` takes its turn, until nothing moves. */
  settle(nodes: string[], maxRounds = 20): number {
    for (let round = 1; round <= maxRounds; round++) {
      this.nowMs += 1_000;
      this.renew(nodes);
      let moved = 0;
      for (const id of nodes) {
        const { acquired, released } = this.turn(id, nodes);
        moved += acquired.length + released.length;
      }
      if (moved === 0) return round;
    }
    throw new Error(`shards still moving after ${maxRounds} rounds: ${JSON.stringify([...this.holders()])}`);
  }

  expectEven(nodes: string[]): void {
    const floor = Math.floor(this.shardCount / nodes.length);
    const ceil = Math.ceil(this.shardCount / nodes.length);
    let total = 0;
    for (const id of nodes) {
      const n = this.led.get(id)?.size ?? 0;
      expect(n, `${id} leads ${n}`).toBeGreaterThanOrEqual(floor);
      expect(n, `${id} leads ${n}`).toBeLessThanOrEqual(ceil);
      total += n;
    }
    expect(total).toBe(this.shardCount);
    // No shard is led by two nodes.
    const all = nodes.flatMap((id) => [...(this.led.get(id) ?? [])]);
    expect(new Set(all).size).toBe(all.length);
  }
}

describe('planShardShare', () => {
  it('a lone node takes every shard at once', () => {
    const t = new Table(16);
    t.turn('a', ['a']);
    expect(t.led.get('a')!.size).toBe(16);
  });

  it('a node that joins gets its share: the loaded node gives up what the newcomer lacks, the newcomer takes it', () => {
    const t = new Table(16);
    t.turn('a', ['a']);
    // b's first turn finds every shard held: it takes nothing and a gives up 8.
    expect(t.turn('b', ['a', 'b'])).toEqual({ acquired: [], released: [] });
    const a = t.turn('a', ['a', 'b']);
    expect(a.released).toHaveLength(8);
    // a does not take back what it just gave up, and b takes all of it on its next turn.
    expect(t.turn('a', ['a', 'b']).acquired).toEqual([]);
    expect(t.turn('b', ['a', 'b']).acquired.sort((x, y) => x - y)).toEqual([...a.released].sort((x, y) => x - y));
    t.expectEven(['a', 'b']);
  });

  it('settles every way of sharing 16 and 64 shards over 1 to 7 nodes evenly, with no shard led twice', () => {
    for (const shards of [16, 64]) {
      for (let n = 1; n <= 7; n++) {
        const t = new Table(shards);
        const nodes = Array.from({ length: n }, (_, i) => `node-${i}`);
        // Nodes join one after another, each after the others settled.
        for (let k = 1; k <= n; k++) t.settle(nodes.slice(0, k));
        t.expectEven(nodes);
      }
    }
  });

  it('survivors take a crashed node`s shards when its leases run out, without waiting for the grace', () => {
    const t = new Table(16);
    t.settle(['a']);
    t.settle(['a', 'b', 'c']);
    t.expectEven(['a', 'b', 'c']);
    const lost = [...t.led.get('c')!];
    t.led.delete('c');
    // c stops renewing and stamping; it drops out of the live list long before its leases end.
    t.nowMs += TTL + 1;
    t.renew(['a', 'b']);
    const taken = [...t.turn('a', ['a', 'b']).acquired, ...t.turn('b', ['a', 'b']).acquired];
    expect(taken.sort((x, y) => x - y)).toEqual(lost.sort((x, y) => x - y));
    t.expectEven(['a', 'b']);
  });

  it('a node at its share takes a shard nobody took once the grace has passed', () => {
    const t = new Table(4);
    t.settle(['a', 'b']);
    // b still counts as alive (its stamp is fresh) but has stopped leading shard 3, say after a failed load.
    const shard = [...t.led.get('b')!][0]!;
    t.led.get('b')!.delete(shard);
    t.rows.set(shard, { ...t.rows.get(shard)!, holder: null, expiresAt: new Date(t.nowMs) });
    // a is at its ceiling and b below its floor: only b may take it...
    expect(planShardShare(t.input('a', ['a', 'b'])).acquire).toEqual([]);
    // ...until the grace has passed, when anyone may.
    t.nowMs += GRACE;
    expect(planShardShare(t.input('a', ['a', 'b'])).acquire).toEqual([shard]);
  });

  it('never gives up shards while another node is as loaded and has the smaller id', () => {
    const t = new Table(16);
    t.settle(['b', 'c']);
    // A third node joins: b and c lead 8 each, so only b (the smaller id) gives up.
    expect(planShardShare(t.input('c', ['b', 'c', 'd'])).release).toEqual([]);
    const fromB = planShardShare(t.input('b', ['b', 'c', 'd'])).release;
    expect(fromB.length).toBeGreaterThan(0);
    t.settle(['b', 'c', 'd']);
    t.expectEven(['b', 'c', 'd']);
  });

  it('a node no worker polls hands its shards to the nodes that serve workers, and leads them all when it is the only node', () => {
    const t = new Table(8);
    t.idle.add('a');
    t.settle(['a']);
    expect(t.led.get('a')!.size).toBe(8);
    // b serves workers; a does not, so a gives everything up and b takes it.
    t.settle(['a', 'b']);
    expect(t.led.get('a')!.size).toBe(0);
    expect(t.led.get('b')!.size).toBe(8);
    // Once workers poll a, the shards are shared again.
    t.idle.delete('a');
    t.settle(['a', 'b']);
    t.expectEven(['a', 'b']);
  });

  it('with sharing off, the first node takes every shard and keeps them; the others take only what runs out', () => {
    const t = new Table(8);
    t.noSharing = true;
    t.settle(['a']);
    t.settle(['a', 'b']);
    expect(t.led.get('a')!.size).toBe(8);
    expect(t.led.get('b')!.size).toBe(0);
    // a crashes: b takes everything once the leases run out.
    t.led.delete('a');
    t.nowMs += TTL + 1;
    expect(t.turn('b', ['b']).acquired).toHaveLength(8);
  });

  it('takes back a live lease under its own id (an earlier process of the same node)', () => {
    const t = new Table(2);
    t.rows.set(0, { shard: 0, holder: 'a', epoch: 3, expiresAt: new Date(t.nowMs + TTL), acquiredAt: new Date(t.nowMs) });
    t.rows.set(1, { shard: 1, holder: 'b', epoch: 1, expiresAt: new Date(t.nowMs + TTL), acquiredAt: new Date(t.nowMs) });
    expect(planShardShare(t.input('a', ['a', 'b'])).acquire).toEqual([0]);
  });
});
