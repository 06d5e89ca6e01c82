import { sql } from 'drizzle-orm';
import { date, dateOrNull, num, query, strOrNull, type ConsoleDb } from './sql';

export interface ShardView {
  shard: number;
  holder: string | null;
  epoch: number;
  expiresAt: Date | null;
  acquiredAt: Date | null;
  led: boolean;
  /** Other scheduler nodes alive now, any of which takes the shard when its lease runs out. */
  standbys: string[];
  activeRuns: number;
}

export interface LeadershipChange {
  id: string;
  at: Date;
  type: string;
  shard: number | null;
  nodeId: string | null;
  epoch: number | null;
  previousHolder: string | null;
  /** 'new', 'expired' (the old leader stopped renewing: crashed or stalled), 'released', or why a leader was deposed. */
  reason: string | null;
}

/**
 * A scheduler node's store as the node itself last reported it (its `store:*` events), and
 * when it last stamped itself alive. A node cut off from the store cannot report that: its
 * events are written when it reaches the store again, so meanwhile only `lastStampedAt`
 * falling behind shows it.
 */
export interface NodeStoreHealth {
  nodeId: string;
  /** 'unavailable' from an outage's start to its end, else 'available'. */
  store: 'available' | 'unavailable';
  storeSince: Date | null;
  /** 'stalled' while its result writes make no progress, else 'moving'. */
  writes: 'moving' | 'stalled';
  writesSince: Date | null;
  /** The last outage's length, or the last stall's, as the node reported it when it ended. */
  lastOutageMs: number | null;
  lastStallMs: number | null;
  /** When the node last stamped itself alive in the store (scheduler_nodes); null if never. */
  lastStampedAt: Date | null;
}

export interface ShardsSnapshot {
  now: Date;
  shardCount: number;
  /** Scheduler nodes seen alive: holders of live shard leases, nodes workers report to, and nodes that logged lately. */
  nodes: string[];
  /** How recent a sign of life must be for a node to count as alive. */
  liveWindowMs: number;
  shards: ShardView[];
  history: LeadershipChange[];
  /** Each node seen alive, and each node that reported on its store, with that report. */
  nodeHealth: NodeStoreHealth[];
}

export async function shardsSnapshot(db: ConsoleDb, opts: { liveWindowMs: number }): Promise<ShardsSnapshot> {
  const [meta] = await query(db, sql`select now() as now, (select shard_count from cluster_config where id = 1) as shard_count`);
  const shardCount = num(meta?.shard_count);
  const shards = Array.from({ length: Math.max(shardCount, 1) }, (_, i) => i);
  const leaseRows = await query(
    db,
    sql`select l.shard, l.holder, l.epoch, l.expires_at, l.acquired_at, l.holder is not null and l.expires_at > now() as live,
          (select count(*) from runs r where r.shard = l.shard and r.state in ('queued', 'running')) as active_runs
        from shard_leases l order by l.shard`,
  );
  // A node is alive when it holds a live shard lease, when it stamped itself serving
  // (scheduler_nodes), when a live worker reports to it, or when it wrote to the event log
  // within the live window.
  const nodeRows = await query(
    db,
    sql`select holder as node from shard_leases where holder is not null and expires_at > now()
        union select id from scheduler_nodes where last_seen >= now() - ${opts.liveWindowMs}::float8 * interval '1 millisecond'
        union select node_id from workers where node_id is not null and last_seen >= now() - ${opts.liveWindowMs}::float8 * interval '1 millisecond'
        union select distinct node_id from events
          where node_id is not null and at > now() - ${opts.liveWindowMs}::float8 * interval '1 millisecond'
            and type in ('leader:elected', 'worker:registered', 'lease:granted', 'job:succeeded')`,
  );
  const nodes = nodeRows.map((r) => String(r.node)).sort();
  const byShard = new Map(leaseRows.map((r) => [num(r.shard), r]));
  const historyRows = await query(
    db,
    sql`select id, at, type, shard, node_id, epoch, data from events
        where type in ('leader:elected', 'leader:released', 'leader:deposed')
        order by id desc limit 300`,
  );
  const nodeHealth = await nodeStoreHealth(db, nodes);
  return {
    now: date(meta?.now),
    nodeHealth,
    shardCount,
    nodes,
    liveWindowMs: opts.liveWindowMs,
    shards: shards.map((shard) => {
      const r = byShard.get(shard);
      const led = r?.live === true;
      const holder = strOrNull(r?.holder);
      return {
        shard,
        holder,
        epoch: num(r?.epoch),
        expiresAt: dateOrNull(r?.expires_at),
        acquiredAt: dateOrNull(r?.acquired_at),
        led,
        standbys: nodes.filter((n) => n !== holder),
        activeRuns: num(r?.active_runs),
      };
    }),
    history: historyRows.map((r) => {
      const data = (r.data ?? {}) as Record<string, unknown>;
      // A release says why (sharing or a stop); releases written before sharing existed were all stops.
      const reason = r.type === 'leader:elected' ? data.reason : r.type === 'leader:deposed' ? data.why : (data.reason ?? 'stop');
      return {
        id: String(r.id),
        at: date(r.at),
        type: String(r.type),
        shard: r.shard === null ? null : num(r.shard),
        nodeId: strOrNull(r.node_id),
        epoch: r.epoch === null ? null : num(r.epoch),
        previousHolder: strOrNull(data.previousHolder),
        reason: reason === undefined || reason === null ? null : String(reason),
      };
    }),
  };
}

/** The latest of each node's store reports (outage, write stall), with when it last stamped itself alive. */
async function nodeStoreHealth(db: ConsoleDb, alive: string[]): Promise<NodeStoreHealth[]> {
  const reports = await query(
    db,
    sql`select distinct on (node_id, kind) node_id, kind, type, at, data
        from (select node_id, id, type, at, data,
                case when type in ('store:unavailable', 'store:available') then 'store' else 'writes' end as kind
              from events
              where type in ('store:unavailable', 'store:available', 'store:writes-stalled', 'store:writes-moving') and node_id is not null) e
        order by node_id, kind, id desc`,
  );
  const stamps = await query(db, sql`select id, last_seen from scheduler_nodes`);
  const stampOf = new Map(stamps.map((r) => [String(r.id), dateOrNull(r.last_seen)]));
  const ids = [...new Set([...alive, ...reports.map((r) => String(r.node_id))])].sort();
  return ids.map((nodeId) => {
    const store = reports.find((r) => r.node_id === nodeId && r.kind === 'store');
    const writes = reports.find((r) => r.node_id === nodeId && r.kind === 'writes');
    const storeData = (store?.data ?? {}) as Record<string, unknown>;
    const writesData = (writes?.data ?? {}) as Record<string, unknown>;
    return {
      nodeId,
      store: store?.type === 'store:unavailable' ? 'unavailable' : 'available',
      storeSince: dateOrNull(store?.at),
      writes: writes?.type === 'store:writes-stalled' ? 'stalled' : 'moving',
      writesSince: dateOrNull(writes?.at),
      lastOutageMs: store?.type === 'store:available' && typeof storeData.outageMs === 'number' ? storeData.outageMs : null,
      lastStallMs: writes?.type === 'store:writes-moving' && typeof writesData.stalledMs === 'number' ? writesData.stalledMs : null,
      lastStampedAt: stampOf.get(nodeId) ?? null,
    };
  });
}
