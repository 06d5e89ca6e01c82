import type { ShardLeaseRow } from '../model';

/** What one node knows when it decides which shards to take and which to give up. */
export interface ShardShareInput {
  nodeId: string;
  shardCount: number;
  /** Shards this node leads now (its own record, not the store's). */
  led: readonly number[];
  /** Every shard's lease as the store has it. */
  shards: readonly ShardLeaseRow[];
  /** Nodes seen serving workers (this one is counted by `serving`, whether listed or not). */
  nodes: readonly string[];
  /** Whether workers poll this node: jobs of a shard led by a node nobody polls would wait. */
  serving: boolean;
  /** Store time of the read. */
  nowMs: number;
  /** A shard nobody took for this long may be taken by any node, whatever its share. */
  graceMs: number;
  /** False: take every shard found unheld and give none up (the first node up leads them all). */
  share: boolean;
}

export interface ShardSharePlan {
  /** Shards to try to take, in order. */
  acquire: number[];
  /** Shards to give up now, so that a node short of its share takes them. */
  release: number[];
}

/**
 * Shares the shards out evenly over the n nodes that serve workers, one decision per node
 * per tick: every node's fair share is between floor(S/n) and ceil(S/n) shards. A node below the
 * floor takes any unheld shard; a node below the ceiling takes one when no node is below
 * the floor; anyone takes a shard that stayed unheld past the grace, so availability
 * never waits on the sharing. Only the most loaded node (the smallest id among equals)
 * gives shards up, and only as many as the nodes below the floor lack, so a new node
 * gets its share within a tick or two and two nodes never give up the same deficit
 * twice. A shard held live by another node is never taken: sharing moves a shard only
 * through a release, which its leader does itself.
 */
export function planShardShare(input: ShardShareInput): ShardSharePlan {
  const { nodeId, shardCount, nowMs, graceMs } = input;
  const led = new Set(input.led);
  const others = input.nodes.filter((id) => id !== nodeId);
  if (!input.share) return { acquire: takeable(input, led, () => true), release: [] };
  if (!input.serving && others.length > 0) return standby(input, led);
  // Shards led per serving node, this one by its own record.
  const held = new Map<string, number>(others.map((id) => [id, 0]));
  for (const s of input.shards) {
    if (s.shard >= shardCount || s.holder === null || s.holder === nodeId || !isLive(s, nowMs)) continue;
    if (held.has(s.holder)) held.set(s.holder, held.get(s.holder)! + 1);
  }
  held.set(nodeId, led.size);
  const floor = Math.floor(shardCount / held.size);
  const ceil = Math.ceil(shardCount / held.size);
  let deficit = 0;
  for (const n of held.values()) deficit += Math.max(0, floor - n);

  let mine = led.size;
  const acquire = takeable(input, led, (unheldForMs, ours) => {
    const take = ours || mine < floor || (mine < ceil && deficit === 0) || unheldForMs >= graceMs;
    if (take) mine++;
    return take;
  });

  const release: number[] = [];
  if (deficit > 0 && acquire.length === 0 && led.size > floor && mostLoaded(held) === nodeId) {
    const give = Math.min(led.size - floor, deficit);
    release.push(...[...led].sort((a, b) => b - a).slice(0, give));
  }
  return { acquire, release };
}

/**
 * A node that no worker polls, while others are polled, leads nothing by choice: it hands
 * what it leads to the serving nodes and takes only shards that nobody took within the
 * grace, so a shard is never left leaderless for long whatever the workers do.
 */
function standby(input: ShardShareInput, led: Set<number>): ShardSharePlan {
  const acquire = takeable(input, led, (unheldForMs, ours) => ours || unheldForMs >= input.graceMs);
  return { acquire, release: acquire.length > 0 ? [] : [...led].sort((a, b) => b - a) };
}

/**
 * Shards this node does not lead and no other node holds live (a lease running out within
 * EXPIRING_MS counts as run out: the request reaches the store about then, and the take is
 * conditional anyway), in shard order, that `wanted` accepts by how long each has been
 * unheld and whether it is a live lease under our own id (one an earlier process of this
 * node left, which the caller should take back).
 */
function takeable(input: ShardShareInput, led: Set<number>, wanted: (unheldForMs: number, ours: boolean) => boolean): number[] {
  const rows = new Map(input.shards.map((s) => [s.shard, s]));
  const out: number[] = [];
  for (let shard = 0; shard < input.shardCount; shard++) {
    if (led.has(shard)) continue;
    const row = rows.get(shard);
    const live = row !== undefined && isLive(row, input.nowMs);
    if (live && row.holder !== null && row.holder !== input.nodeId && row.expiresAt!.getTime() > input.nowMs + EXPIRING_MS) continue;
    const unheldForMs = row?.expiresAt ? input.nowMs - row.expiresAt.getTime() : Number.POSITIVE_INFINITY;
    if (wanted(unheldForMs, live && row.holder === input.nodeId)) out.push(shard);
  }
  return out;
}

const EXPIRING_MS = 250;

function isLive(row: ShardLeaseRow, nowMs: number): boolean {
  return row.expiresAt !== null && row.expiresAt.getTime() > nowMs;
}

/** The node holding the most shards; the smallest id (byte order) among equals. */
function mostLoaded(held: Map<string, number>): string {
  let best: string | null = null;
  for (const [id, n] of held) {
    const b = best === null ? -1 : held.get(best)!;
    if (n > b || (n === b && best !== null && id < best)) best = id;
  }
  return best!;
}
