import { DeposedLeaderError } from '../errors';
import type { WorkerId } from '../ids';
import type { Grant, GrantedLease, LeaderToken } from '../store';
import { Batcher } from './batcher';
import { LeaderWrites } from './leader-writes';
import type { NodeContext } from './node-context';
import { ShardLeader } from './shard-leader';
import { planShardShare } from './shard-share';

type GrantItem = { token: LeaderToken; grants: Grant[] };

/**
 * A node's shard leadership: contending for shards, renewing the leases of those it
 * leads, handing them off (to share them out, or on a stop) and noticing when it was
 * deposed. It owns the node's ShardLeaders and the statements they share.
 */
export class Leadership {
  private readonly leaders = new Map<number, ShardLeader>();
  /** The lowest shard with a live leader at the last contention read: who watches the cluster (NotificationWatcher). */
  private lowestLed: number | null = null;
  private readonly writes: LeaderWrites;
  private readonly grantBatcher: Batcher<GrantItem, GrantedLease[] | DeposedLeaderError>;

  constructor(
    private readonly c: NodeContext,
    /** Asks the node for a dispatch round (a leader has new ready jobs or freed leases). */
    private readonly kick: () => void,
    /** True while the node's result writes are stalled and it gave its shards up (WriteProgress): it takes none. */
    private readonly standingAside: () => boolean = () => false,
  ) {
    // The tick's run creations and starts, and promotions and finishes, of every shard this
    // node leads share one statement per step.
    this.writes = new LeaderWrites(c.store, c.timers);
    // A dispatch round asks every leader to grant at once; their statements become one.
    this.grantBatcher = new Batcher(c.timers, { windowMs: 0, maxBatch: 1024, maxInFlight: 4 }, (items) => c.store.grantLeasesMany(items, c.config.leaseTtlMs));
  }

  /** Every leader, loaded or not. */
  all(): ShardLeader[] {
    return [...this.leaders.values()];
  }

  leader(shard: number): ShardLeader | undefined {
    return this.leaders.get(shard);
  }

  /** The leader of a shard if it is loaded and not deposed: one that may act. */
  active(shard: number): ShardLeader | undefined {
    const leader = this.leaders.get(shard);
    return leader && leader.loaded && !leader.isDeposed() ? leader : undefined;
  }

  /** The lowest shard with a live leader (any node's) at the last contention read; null before the first. */
  lowestLedShard(): number | null {
    return this.lowestLed;
  }

  ledShards(): number[] {
    return [...this.leaders.keys()].sort((a, b) => a - b);
  }

  loadedLeaders(): ShardLeader[] {
    return [...this.leaders.values()].filter((l) => l.loaded && !l.isDeposed());
  }

  clear(): void {
    this.leaders.clear();
  }

  /**
   * Renews every shard this node leads, all at once, on its own loop: a slow takeover
   * elsewhere must never delay a renewal past the lease.
   */
  async renew(): Promise<void> {
    await Promise.all(
      [...this.leaders.values()].map(async (leader) => {
        try {
          await this.c.store.renewShard(leader.token, this.c.config.shardLeaseTtlMs);
        } catch (err) {
          if (err instanceof DeposedLeaderError) this.depose(leader, 'renewal refused');
          else this.c.error('renew-leadership', err);
        }
      }),
    );
  }

  /**
   * Once a tick: stamps this node alive while workers poll it and takes the shards whose
   * lease ran out, every one of them or, with shareShards, as its share of them allows;
   * with shareShards it also gives shards up when another serving node is short of its
   * share (planShardShare). One read finds everything, so a standby takes over within the
   * shard lease TTL plus one tick, and a node that joins gets its share within a tick or two.
   */
  async contend(): Promise<void> {
    const { c } = this;
    if (c.stopped()) return;
    // A node no worker polls could lead shards only for their jobs to wait; nor could one
    // whose result writes are stuck, which stands aside for a healthy node.
    const standingAside = this.standingAside();
    const serving = c.pool.poolSlots() > 0 && !standingAside;
    const view = await c.store.contentionView({ nodeId: c.nodeId, liveWindowMs: this.nodeLiveWindowMs(), serving });
    if (c.stopped()) return;
    const nowMs = view.now.getTime();
    const led = view.shards.filter((s) => s.holder !== null && s.expiresAt !== null && s.expiresAt.getTime() > nowMs).map((s) => s.shard);
    this.lowestLed = led.length > 0 ? Math.min(...led) : null;
    const plan = planShardShare({
      nodeId: c.nodeId,
      serving,
      share: c.config.shareShards,
      shardCount: c.config.shardCount,
      led: [...this.leaders.keys()],
      shards: view.shards,
      nodes: view.nodes,
      nowMs: view.now.getTime(),
      graceMs: 3 * c.config.tickIntervalMs,
    });
    const only = c.config.leadShards === null ? null : new Set(c.config.leadShards);
    for (const shard of plan.acquire) {
      if (standingAside) break;
      if (this.leaders.has(shard) || c.stopped() || (only !== null && !only.has(shard))) continue;
      const got = await c.store.acquireShard({ shard, nodeId: c.nodeId, ttlMs: c.config.shardLeaseTtlMs });
      if (got) this.lead(got.token, got.previousHolder, got.reason);
    }
    for (const shard of plan.release) {
      const leader = this.leaders.get(shard);
      if (leader && !c.stopped()) await this.handOff(leader, 'share');
    }
  }

  /**
   * A node counts as alive while it stamped itself within three ticks. Short, so a crashed
   * node stops counting well before its shard leases run out and the survivors' shares
   * already include its shards when they come free.
   */
  private nodeLiveWindowMs(): number {
    return Math.max(1, 3 * this.c.config.tickIntervalMs);
  }

  /**
   * Stops leading a shard and releases its lease at once, so another node takes it on its
   * next tick. The leader's writes still in flight are refused by the store's epoch check
   * once the shard changes hands; jobs already leased run on untouched.
   */
  async handOff(leader: ShardLeader, reason: string): Promise<void> {
    const { c } = this;
    if (this.leaders.get(leader.shard) === leader) this.leaders.delete(leader.shard);
    c.traces?.dropShard(leader.shard);
    c.metrics.inc('leader_handoffs_total');
    await c.store.releaseShard(leader.token).catch((e) => c.error('release', e));
    c.emit({ type: 'leader:released', shard: leader.shard, epoch: leader.token.epoch, nodeId: c.nodeId, data: { reason } });
  }

  /** Gives up every shard this node leads (the node's write path is stuck; a healthy node takes them). */
  async giveUpAll(reason: string): Promise<void> {
    await Promise.all(this.all().map((leader) => this.handOff(leader, reason)));
  }

  /** Starts leading a shard; its state loads in the background while renewals go on. */
  private lead(token: LeaderToken, previousHolder: string | null, reason: string): void {
    const { c } = this;
    const leader = new ShardLeader({
      store: c.store,
      clock: c.clock,
      timers: c.timers,
      token,
      emit: (e) => c.emit(e),
      kick: () => this.kick(),
      // Only this leader: after a hand-off the shard may be led again by a newer leader here.
      onDeposed: () => this.depose(leader, 'write refused'),
      reconcileAfterMs: c.config.leaseTtlMs + c.config.renewIntervalMs,
      writes: this.writes,
      // A holder that held its lease and lived would have been heard from within every
      // renewal interval; one silent for longer than the TTL less that interval has gone.
      holderGone: (workerId) => workerId === null || c.pool.silentMs(workerId) > c.config.leaseTtlMs - c.config.renewIntervalMs,
      onError: (where, err) => c.error(where, err),
      notifications: c.notifications,
      traces: c.traces,
      // An operator's action revoked these leases: their holders polling here stop at once.
      revoked: (leases) => {
        for (const l of leases) if (l.holder !== null) c.pool.revoke(l.holder as WorkerId, l.jobId, l.fence);
      },
      grantLeases: async (t, grants) => {
        const outcome = await this.grantBatcher.submit({ token: t, grants });
        if (outcome instanceof Error) throw outcome;
        return outcome;
      },
    });
    this.leaders.set(token.shard, leader);
    c.metrics.inc('leader_elections_total');
    c.emit({ type: 'leader:elected', shard: token.shard, epoch: token.epoch, nodeId: c.nodeId, data: { previousHolder, reason } });
    leader.load().catch((err) => {
      // Without its state a leader can do nothing useful: give the shard up so this node
      // or another takes it over afresh.
      c.error('load', err);
      if (this.leaders.get(token.shard) === leader) this.leaders.delete(token.shard);
      c.traces?.dropShard(token.shard);
      void c.store.releaseShard(token).catch(() => undefined);
    });
  }

  private depose(leader: ShardLeader, why: string): void {
    const shard = leader.shard;
    if (this.leaders.get(shard) !== leader) return;
    this.leaders.delete(shard);
    this.c.traces?.dropShard(shard);
    this.c.metrics.inc('leader_deposed_total');
    this.c.emit({ type: 'leader:deposed', shard, epoch: leader.token.epoch, nodeId: this.c.nodeId, data: { why } });
  }
}
