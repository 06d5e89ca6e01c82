import { capFor, Heap, nextSlotAfter, reserveOf, type Schedule } from '@fenceline/core';
import type { StoreWrite } from '../store/records';
import type { MemoryStore } from '../store/memory-store';
import type { EffectAttempt } from '../world/effect-sinks';

export type InvariantId = 'I1' | 'I2' | 'I3' | 'I4' | 'I5' | 'I6' | 'I7' | 'I8' | 'I9' | 'I10' | 'I11' | 'I12';

export const INVARIANTS: Record<InvariantId, { kind: 'safety' | 'liveness'; text: string }> = {
  I1: { kind: 'safety', text: 'at most one live lease per job at any instant of store time' },
  I2: { kind: 'safety', text: "a job's fence strictly increases with every lease and every revocation" },
  I3: { kind: 'safety', text: 'no write carrying a fence other than the current one lands; one holder per lease' },
  I4: { kind: 'safety', text: 'one run per (dag, scheduled_at)' },
  I5: { kind: 'liveness', text: 'every due slot of an enabled DAG gets its run within one failover bound' },
  I6: { kind: 'safety', text: 'no DAG holds more than its cap of the pool (with lending on, above it only through I11)' },
  I7: { kind: 'liveness', text: 'when faults stop, every job reaches a terminal state' },
  I8: { kind: 'safety', text: 'no write of a deposed leader (older epoch) lands' },
  I9: { kind: 'safety', text: 'every write the store acknowledged survives, through its own failover too' },
  I10: {
    kind: 'safety',
    text: "an operator's action holds: no result lands on a job after it was cancelled or marked, and a cleared job's next lease has a fence above every earlier one",
  },
  I11: { kind: 'safety', text: "no DAG holds slots of the reserve through lending: a grant above its DAG's cap leaves at least the reserve free" },
  I12: { kind: 'safety', text: 'no effect outside the scheduler is applied under a fence lower than one already applied for its key, and a once effect is applied at most once' },
};

export interface Violation {
  invariant: InvariantId;
  kind: 'safety' | 'liveness';
  atMs: number;
  message: string;
}

interface LeaseShadow {
  fence: number;
  holder: string | null;
  expiresAtMs: number;
  leased: boolean;
}

/** I11: one lease grant as it landed, kept for a minute so a shortfall can be traced to the grants that caused it. */
interface RecentGrant {
  atMs: number;
  nodeId: string;
  jobId: string;
  fence: number;
}

/** I11: a lent grant that left less than the reserve free only because another node's grants landed after it was planned. */
export interface LendRace {
  atMs: number;
  dagId: string;
  nodeId: string;
  /** When the grant's statement left its node, at or after the round planned it. */
  sentAtMs: number;
  free: number;
  reserve: number;
  /** The other nodes' grants that landed after `sentAtMs` and still hold a slot. */
  laterGrants: number;
}

interface ShardShadow {
  nodeId: string | null;
  epoch: number;
  expiresAtMs: number;
}

interface SlotWatch {
  dagId: string;
  slotMs: number;
  deadlineMs: number;
  /** Time since the slot in which no scheduler could work that has already moved the deadline. */
  creditedMs: number;
}

export interface CheckerOptions {
  /** I5: how late a due slot's run may be created (one failover bound). */
  failoverBoundMs: number;
  /** I6: the cap each DAG is held to, and the pool it is a fraction of (slots of every worker that exists). */
  capFraction: number;
  poolSlots: () => number;
  /**
   * I11: lending's reserve as a fraction of the pool (null: no lending, and I6 holds every
   * DAG to its cap), and each worker's slots, so that a worker holding more leases than it
   * has slots (a double fill about to be handed back) counts only up to them.
   */
  lendReserveFraction?: number | null;
  /** I11: the reserve's floor in slots (0 if absent), as the nodes are given it. */
  lendReserveMinSlots?: number;
  workerSlots?: number;
  /**
   * I11: the nodes' worker live window. A worker down for longer than this, holding no
   * lease, has left the pool the reserve is a share of, for the nodes and the stores alike
   * (nobody has heard from it within the window, and no lease shows it is there).
   */
  workerLiveWindowMs?: number;
  /** I5 is not judged while no scheduler can work (all crashed, paused or cut off); deadlines move past it. */
  schedulersImpaired: () => boolean;
}

/**
 * The invariants I1-I12 of docs/architecture.md, checked against what the store actually did. The
 * checker keeps its own shadow of every lease (fence, holder, expiry), every shard's
 * epoch, every (dag, scheduled_at) and the leases each DAG holds, built only from the
 * store's write records, and judges each record the instant it lands. Time-based checks
 * (I5) run after every event; I7 runs once, at the end of the liveness phase.
 */
export class Checker {
  readonly violations: Violation[] = [];
  private readonly leases = new Map<string, LeaseShadow>();
  private readonly shards = new Map<number, ShardShadow>();
  private readonly runKeys = new Set<string>();
  private readonly held = new Map<string, number>();
  private readonly dagCaps = new Map<string, number | undefined>();
  private readonly schedules = new Map<string, { schedule: Schedule; paused: boolean; nextSlotMs: number | null }>();
  private readonly watches = new Heap<SlotWatch>((a, b) => (a.deadlineMs !== b.deadlineMs ? a.deadlineMs < b.deadlineMs : a.dagId < b.dagId));
  /**
   * I5: the stretches of virtual time in which no scheduler could work, the last one open
   * (toMs null) while it lasts. Sampled after every event: a cut ends without an event of
   * its own, so a stretch is taken to end at the first event after it did, a few
   * milliseconds late at most while the nodes run their timers. Only the stretches within
   * the last hour are kept, far more than any bound a slot is watched for.
   */
  private readonly impaired: { fromMs: number; toMs: number | null }[] = [];
  readonly counts = { writes: 0, grants: 0, resultWrites: 0, revocations: 0, peakCapUse: 0, lentGrants: 0, peakLent: 0, lendRaces: 0 };
  /** I11: the first lend races seen (all are counted in `counts.lendRaces`). */
  readonly lendRaces: LendRace[] = [];
  /**
   * I11: when the store call being applied left its node; the world sets it around each
   * grant statement, so the checker knows the latest instant the grant's round was planned.
   */
  landing: { sentAtMs: number } | null = null;
  /** I11: leases each worker holds, the slots they fill (up to each worker's slots), workers down, leases above caps. */
  private readonly workerHeld = new Map<string, number>();
  private filledSlots = 0;
  private readonly down = new Set<string>();
  private lentNow = 0;
  /** I11: when each worker that is down went down (absent: the time is not known, so it never leaves the pool). */
  private readonly downSince = new Map<string, number>();
  private readonly recentGrants: RecentGrant[] = [];
  private recentStart = 0;
  /** I12: per sink and effect key, the highest fence applied and how many times it was applied. */
  private readonly effectsApplied = new Map<string, { fence: number; times: number; attempts: number }>();
  /**
   * I12: what the sinks decided; `unguardedDuplicates` counts the attempts beyond the first
   * per key, each a duplicate a sink without a fence check would have taken.
   */
  readonly effectCounts = { applied: 0, alreadyApplied: 0, stale: 0, late: 0, lateApplied: 0, unguardedDuplicates: 0 };
  /** Violations per invariant, all of them (the list above keeps the first hundred). */
  readonly violationCounts: Partial<Record<InvariantId, number>> = {};
  /** Called on the first violation (the simulation stops there). */
  onViolation: ((v: Violation) => void) | null = null;

  /** I9: the highest fence the store acknowledged granting per job, and each accepted result's fence. */
  private readonly ackedFences = new Map<string, number>();
  private readonly ackedResults = new Map<string, number>();
  /** I10: jobs an operator ended (cancelled, marked), with the fence their end left; and the highest fence each cleared job ever had. */
  private readonly actedEnds = new Map<string, number>();
  private readonly clearedFences = new Map<string, number>();

  constructor(private readonly options: CheckerOptions) {}

  /**
   * Records what a node was told the store did: lease grants and accepted results. An
   * answer lost on the way (a cut link, a store failover) is not recorded, since nobody
   * was told; its write may or may not have landed, and either is allowed.
   */
  acknowledged(method: string, value: unknown): void {
    if (method === 'grantLeasesMany' && Array.isArray(value)) {
      for (const group of value) {
        if (!Array.isArray(group)) continue;
        for (const g of group as { jobId: string; fence: number }[]) this.ackedFences.set(g.jobId, Math.max(this.ackedFences.get(g.jobId) ?? 0, g.fence));
      }
    } else if (method === 'completeJobs' && Array.isArray(value)) {
      for (const o of value as { ok: boolean; row?: { id: string; fence: number } }[]) if (o.ok && o.row) this.ackedResults.set(o.row.id, o.row.fence);
    }
  }

  /** How many grants and results the nodes were told of, for reports and tests. */
  get acknowledgedCounts(): { fences: number; results: number } {
    return { fences: this.ackedFences.size, results: this.ackedResults.size };
  }

  /** I9: every acknowledged grant's fence is still at or below the job's, and every acknowledged result is still the job's. */
  checkAcknowledged(store: MemoryStore, nowMs: number): void {
    for (const [jobId, fence] of this.ackedFences) {
      const job = store.jobById(jobId);
      if (!job || job.fence < fence) {
        this.fail('I9', nowMs, `the store acknowledged granting job ${jobId} fence ${fence}, and now records ${job ? `fence ${job.fence}` : 'no such job'}`);
        return;
      }
    }
    for (const [jobId, fence] of this.ackedResults) {
      const result = store.resultOf(jobId);
      if (!result || result.outcome !== 'succeeded' || result.fence !== fence) {
        this.fail(
          'I9',
          nowMs,
          `the store acknowledged job ${jobId}'s result of fence ${fence}, and now keeps ${result ? `a ${result.outcome} result of fence ${result.fence}` : 'no result'}`,
        );
        return;
      }
    }
  }

  /** Tells the checker a DAG's schedule and cap, as the operator registered it. */
  registerDag(dagId: string, schedule: Schedule, capFraction: number | undefined, firstSlotMs: number | null, paused = false): void {
    this.dagCaps.set(dagId, capFraction);
    if (schedule.kind === 'manual') return;
    this.schedules.set(dagId, { schedule, paused, nextSlotMs: firstSlotMs });
    if (firstSlotMs !== null && !paused) this.watchSlot(dagId, firstSlotMs);
  }

  setPaused(dagId: string, paused: boolean, nowMs: number): void {
    const s = this.schedules.get(dagId);
    if (!s) return;
    s.paused = paused;
    if (!paused) {
      // A DAG re-enabled is owed only slots from now on.
      s.nextSlotMs = nextSlotAfter(s.schedule, nowMs - 1);
      if (s.nextSlotMs !== null) this.watchSlot(dagId, s.nextSlotMs);
    }
  }

  /** I12: judges one effect a sink decided, the instant it lands. */
  observeEffect(e: EffectAttempt): void {
    const id = `${e.sink}\u0000${e.key}`;
    const shadow = this.effectsApplied.get(id) ?? { fence: -1, times: 0, attempts: 0 };
    shadow.attempts++;
    if (shadow.attempts > 1) this.effectCounts.unguardedDuplicates++;
    if (e.late) this.effectCounts.late++;
    if (e.outcome === 'stale') this.effectCounts.stale++;
    if (e.outcome === 'already-applied') this.effectCounts.alreadyApplied++;
    if (e.outcome === 'applied') {
      this.effectCounts.applied++;
      if (e.late) this.effectCounts.lateApplied++;
      if (e.fence < shadow.fence) this.fail('I12', e.atMs, `${e.sink} applied the effect of ${e.key} under fence ${e.fence} after fence ${shadow.fence} was applied`);
      if (e.mode === 'once' && shadow.times > 0)
        this.fail('I12', e.atMs, `${e.sink} applied the once effect of ${e.key} a second time (fence ${e.fence}, first under fence ${shadow.fence})`);
      shadow.fence = Math.max(shadow.fence, e.fence);
      shadow.times++;
    }
    this.effectsApplied.set(id, shadow);
  }

  /** Judges one write the store made. */
  observe(w: StoreWrite): void {
    this.counts.writes++;
    if ('token' in w && w.token) this.checkLeader(w.token, w.atMs, w.op);
    switch (w.op) {
      case 'shard:acquired': {
        const prev = this.shards.get(w.shard);
        if (prev && w.epoch <= prev.epoch) this.fail('I8', w.atMs, `shard ${w.shard} taken by ${w.nodeId} under epoch ${w.epoch}, not above the previous epoch ${prev.epoch}`);
        if (prev && prev.expiresAtMs > w.atMs && prev.nodeId !== w.nodeId)
          this.fail('I8', w.atMs, `shard ${w.shard} taken by ${w.nodeId} while ${prev.nodeId} still leads it until ${prev.expiresAtMs}`);
        this.shards.set(w.shard, { nodeId: w.nodeId, epoch: w.epoch, expiresAtMs: w.expiresAtMs });
        break;
      }
      case 'shard:renewed': {
        // A renewal is a leader write too: only the live holder of the current epoch may make it.
        this.checkLeader({ shard: w.shard, nodeId: w.nodeId, epoch: w.epoch }, w.atMs, w.op);
        const s = this.shards.get(w.shard);
        if (s && s.epoch === w.epoch && s.nodeId === w.nodeId) s.expiresAtMs = w.expiresAtMs;
        break;
      }
      case 'shard:released': {
        const s = this.shards.get(w.shard);
        if (s && s.epoch === w.epoch && s.nodeId === w.nodeId) s.expiresAtMs = w.atMs;
        break;
      }
      case 'run:created': {
        const key = `${w.dagId}\u0000${w.scheduledAtMs}`;
        if (this.runKeys.has(key)) this.fail('I4', w.atMs, `a second run ${w.runId} of DAG ${w.dagId} for scheduled_at ${new Date(w.scheduledAtMs).toISOString()}`);
        this.runKeys.add(key);
        if (w.trigger === 'schedule') this.slotServed(w.dagId, w.scheduledAtMs);
        break;
      }
      case 'job:granted': {
        const cleared = this.clearedFences.get(w.jobId);
        if (cleared !== undefined && w.fence <= cleared) this.fail('I10', w.atMs, `job ${w.jobId} leased under fence ${w.fence} after a clear left it at fence ${cleared}`);
        this.counts.grants++;
        const s = this.leases.get(w.jobId);
        if (s?.leased && s.expiresAtMs > w.atMs) {
          this.fail('I1', w.atMs, `job ${w.jobId} leased to ${w.workerId} (fence ${w.fence}) while ${s.holder} still holds a live lease (fence ${s.fence}) until ${s.expiresAtMs}`);
        }
        if (w.fence <= (s?.fence ?? 0)) this.fail('I2', w.atMs, `job ${w.jobId} leased under fence ${w.fence}, not above the previous fence ${s?.fence ?? 0}`);
        if (s?.leased) {
          this.bumpHeld(w.dagId, -1);
          this.bumpWorker(s.holder, -1);
        }
        this.leases.set(w.jobId, { fence: w.fence, holder: w.workerId, expiresAtMs: w.expiresAtMs, leased: true });
        const held = this.bumpHeld(w.dagId, +1);
        this.bumpWorker(w.workerId, +1);
        const cap = capFor(this.options.poolSlots(), this.dagCaps.get(w.dagId) ?? this.options.capFraction);
        if (cap > 0) this.counts.peakCapUse = Math.max(this.counts.peakCapUse, held / cap);
        if (this.lending) {
          this.rememberGrant(w.atMs, w.token.nodeId, w.jobId, w.fence);
          if (held > cap) this.checkLent(w.atMs, w.dagId, w.token.nodeId, held, cap);
        } else if (held > cap) this.fail('I6', w.atMs, `DAG ${w.dagId} holds ${held} leases, over its cap of ${cap} (pool ${this.options.poolSlots()} slots)`);
        break;
      }
      case 'job:renewed':
        if (this.acceptedWorkerWrite(w.jobId, w.workerId, w.fence, w.atMs, 'renewal')) this.leases.get(w.jobId)!.expiresAtMs = w.expiresAtMs;
        break;
      case 'job:swept':
      case 'job:released': {
        this.counts.revocations++;
        const s = this.leases.get(w.jobId);
        const newFence = w.op === 'job:swept' ? w.fence : w.newFence;
        if (w.op === 'job:released') this.acceptedWorkerWrite(w.jobId, w.workerId, w.fence, w.atMs, 'hand-back');
        else if (s?.leased && s.expiresAtMs > w.atMs) this.fail('I1', w.atMs, `job ${w.jobId} swept while its lease of ${s.holder} is live until ${s.expiresAtMs}`);
        if (newFence <= (s?.fence ?? 0)) this.fail('I2', w.atMs, `job ${w.jobId} revoked (${w.op}) but its fence stayed at ${newFence} (was ${s?.fence ?? 0})`);
        if (s?.leased) {
          this.bumpHeld(w.dagId, -1);
          this.bumpWorker(s.holder, -1);
        }
        this.leases.set(w.jobId, { fence: newFence, holder: null, expiresAtMs: 0, leased: false });
        break;
      }
      case 'job:acted': {
        const s = this.leases.get(w.jobId);
        if (s?.leased) {
          this.counts.revocations++;
          this.bumpHeld(w.dagId, -1);
          this.bumpWorker(s.holder, -1);
        }
        if ((w.from === 'leased' || w.to === 'waiting') && w.fence <= w.fenceBefore) {
          this.fail('I2', w.atMs, `job ${w.jobId} moved ${w.from} -> ${w.to} by an operator but its fence stayed at ${w.fence} (was ${w.fenceBefore})`);
        }
        this.leases.set(w.jobId, { fence: Math.max(w.fence, s?.fence ?? 0), holder: null, expiresAtMs: 0, leased: false });
        if (w.to === 'waiting') {
          // The operator superseded the job's earlier result: a new attempt may replace it.
          this.ackedResults.delete(w.jobId);
          this.actedEnds.delete(w.jobId);
          this.clearedFences.set(w.jobId, Math.max(w.fence, this.clearedFences.get(w.jobId) ?? 0));
        } else if (w.to !== 'upstream_failed') {
          this.actedEnds.set(w.jobId, w.fence);
        }
        break;
      }
      case 'job:completed':
      case 'job:failed':
      case 'job:retry': {
        const ended = this.actedEnds.get(w.jobId);
        if (ended !== undefined) this.fail('I10', w.atMs, `${w.op} of job ${w.jobId} by ${w.workerId} (fence ${w.fence}) landed after an operator ended it at fence ${ended}`);
        const s = this.leases.get(w.jobId);
        this.acceptedWorkerWrite(w.jobId, w.workerId, w.fence, w.atMs, w.op);
        if (s?.leased) {
          this.bumpHeld(w.dagId, -1);
          this.bumpWorker(s.holder, -1);
          s.leased = false;
        }
        break;
      }
      case 'result:written': {
        this.counts.resultWrites++;
        break;
      }
      default:
        break;
    }
  }

  /** I5: how much of [fromMs, toMs] no scheduler could work in. */
  private impairedWithin(fromMs: number, toMs: number): number {
    let ms = 0;
    for (let i = this.impaired.length - 1; i >= 0; i--) {
      const stretch = this.impaired[i]!;
      const end = Math.min(toMs, stretch.toMs ?? toMs);
      if (end <= fromMs) break;
      ms += Math.max(0, end - Math.max(fromMs, stretch.fromMs));
    }
    return ms;
  }

  /** I5: a due slot is watched for one failover bound, not counting time in which no scheduler could work. */
  private watchSlot(dagId: string, slotMs: number): void {
    this.watches.push({ dagId, slotMs, deadlineMs: slotMs + this.options.failoverBoundMs, creditedMs: 0 });
  }

  /** Time-based checks, after every event. */
  afterEvent(nowMs: number): void {
    const impaired = this.options.schedulersImpaired();
    const last = this.impaired[this.impaired.length - 1];
    const open = last !== undefined && last.toMs === null;
    if (impaired && !open) {
      this.impaired.push({ fromMs: nowMs, toMs: null });
      while (this.impaired.length > 1 && this.impaired[0]!.toMs! < nowMs - 3_600_000) this.impaired.shift();
    } else if (!impaired && open) last.toMs = nowMs;
    for (let top = this.watches.peek(); top && top.deadlineMs < nowMs; top = this.watches.peek()) {
      this.watches.pop();
      const s = this.schedules.get(top.dagId);
      // A watch is stale once its slot was served (the DAG moved on) or the DAG was paused.
      if (!s || s.paused || s.nextSlotMs !== top.slotMs) continue;
      if (impaired) {
        this.watches.push({ ...top, deadlineMs: nowMs + this.options.failoverBoundMs, creditedMs: this.impairedWithin(top.slotMs, nowMs) });
        continue;
      }
      // Time in which no scheduler could work does not count towards the bound, also when it
      // ended before the deadline (two store failovers in a row, a healed cut): the deadline
      // moves past it, and the slot is judged again then.
      const lost = this.impairedWithin(top.slotMs, nowMs) - top.creditedMs;
      if (lost > 0) {
        this.watches.push({ ...top, deadlineMs: top.deadlineMs + lost, creditedMs: top.creditedMs + lost });
        continue;
      }
      this.fail(
        'I5',
        nowMs,
        `DAG ${top.dagId}'s slot ${new Date(top.slotMs).toISOString()} has no run ${Math.round((nowMs - top.slotMs) / 1000)} s later (bound ${this.options.failoverBoundMs / 1000} s)`,
      );
      return;
    }
  }

  /**
   * I7, once faults have stopped and the liveness phase has run: every job of every run
   * created before `faultsEndedAtMs` is terminal, and so is that run.
   */
  checkQuiescent(store: MemoryStore, faultsEndedAtMs: number, nowMs: number): void {
    const stuck: string[] = [];
    let count = 0;
    for (const run of store.allRuns()) {
      if (run.createdAtMs > faultsEndedAtMs) continue;
      if (run.state === 'queued' || run.state === 'running') {
        count++;
        if (stuck.length < 5) {
          const open = run.jobIds.map((id) => store.jobById(id)!).filter((j) => !['succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled'].includes(j.state));
          stuck.push(
            `run ${run.id} of ${run.dagId} is ${run.state} (${open.length} open jobs${open[0] ? `, e.g. job ${open[0].id} ${open[0].state} fence ${open[0].fence} holder ${open[0].holder}` : ''})`,
          );
        }
      }
    }
    if (count > 0)
      this.fail('I7', nowMs, `${count} runs created before faults stopped are not finished ${Math.round((nowMs - faultsEndedAtMs) / 1000)} s later: ${stuck.join('; ')}`);
  }

  private acceptedWorkerWrite(jobId: string, workerId: string, fence: number, atMs: number, what: string): boolean {
    const s = this.leases.get(jobId);
    if (!s || !s.leased || s.fence !== fence || s.holder !== workerId || s.expiresAtMs <= atMs) {
      const current = s ? `fence ${s.fence}, ${s.leased ? `leased to ${s.holder} until ${s.expiresAtMs}` : 'not leased'}` : 'never leased';
      this.fail('I3', atMs, `${what} of job ${jobId} by ${workerId} with fence ${fence} landed, but the current lease is ${current}`);
      return false;
    }
    return true;
  }

  private checkLeader(token: { shard: number; nodeId: string; epoch: number }, atMs: number, op: string): void {
    const s = this.shards.get(token.shard);
    if (!s || s.epoch !== token.epoch || s.nodeId !== token.nodeId || s.expiresAtMs <= atMs) {
      const current = s ? `epoch ${s.epoch} held by ${s.nodeId} until ${s.expiresAtMs}` : 'never led';
      this.fail('I8', atMs, `${op} by ${token.nodeId} under epoch ${token.epoch} of shard ${token.shard} landed, but the shard is at ${current}`);
    }
  }

  private slotServed(dagId: string, scheduledAtMs: number): void {
    const s = this.schedules.get(dagId);
    if (!s || s.nextSlotMs === null || scheduledAtMs < s.nextSlotMs) return;
    s.nextSlotMs = nextSlotAfter(s.schedule, scheduledAtMs);
    if (s.nextSlotMs !== null && !s.paused) this.watchSlot(dagId, s.nextSlotMs);
  }

  private bumpHeld(dagId: string, delta: number): number {
    const before = this.held.get(dagId) ?? 0;
    const n = before + delta;
    if (n <= 0) this.held.delete(dagId);
    else this.held.set(dagId, n);
    if (this.lending) {
      // Leases above a DAG's cap are lent ones: their sum over DAGs is what the pool lends now.
      const cap = capFor(this.options.poolSlots(), this.dagCaps.get(dagId) ?? this.options.capFraction);
      this.lentNow += Math.max(0, n - cap) - Math.max(0, before - cap);
      if (n > cap && delta > 0) this.counts.lentGrants++;
      this.counts.peakLent = Math.max(this.counts.peakLent, this.lentNow);
    }
    return Math.max(0, n);
  }

  private get lending(): boolean {
    return this.options.lendReserveFraction !== undefined && this.options.lendReserveFraction !== null;
  }

  /** I11: the reserve, by the nodes' own rule (reserveOf), from the pool I6 takes the cap of (every worker that exists). */
  get reserve(): number {
    if (!this.lending) return 0;
    return reserveOf({ fraction: this.options.lendReserveFraction!, minSlots: this.options.lendReserveMinSlots ?? 0 }, this.options.poolSlots());
  }

  /**
   * I11: the reserve at `atMs`, by the nodes' own rule, from the pool's live slots: every
   * worker that exists, less those down for longer than the live window that hold no
   * lease. Those have left the pool for the nodes and the stores (docs/architecture.md:
   * the reserve is a share of the pool's live slots), and no node could keep a reserve
   * for them; a worker down for less, or still holding a lease, stays in the pool here
   * although it offers no free slot.
   */
  reserveAt(atMs: number): number {
    if (!this.lending) return 0;
    const window = this.options.workerLiveWindowMs;
    let pool = this.options.poolSlots();
    if (window !== undefined) {
      const slots = this.options.workerSlots ?? 1;
      for (const id of this.down) {
        const since = this.downSince.get(id);
        if (since !== undefined && atMs - since > window && (this.workerHeld.get(id) ?? 0) === 0) pool -= slots;
      }
    }
    return reserveOf({ fraction: this.options.lendReserveFraction!, minSlots: this.options.lendReserveMinSlots ?? 0 }, pool);
  }

  /** I11: free slots of the workers that are up: their slots less the leases they hold, each worker's counted only up to its slots. */
  freeSlots(): number {
    const slots = this.options.workerSlots ?? 1;
    let free = this.options.poolSlots() - this.filledSlots;
    // A worker that is down offers no slot, whatever it holds until its leases are swept.
    for (const id of this.down) free -= slots - Math.min(slots, this.workerHeld.get(id) ?? 0);
    return free;
  }

  /**
   * Tells the checker a worker's process crashed or came back (at `atMs`, if known): a
   * crashed worker's slots are not free, and one down for longer than the live window
   * leaves the reserve's pool (reserveAt).
   */
  workerUp(workerId: string, up: boolean, atMs?: number): void {
    if (up) {
      this.down.delete(workerId);
      this.downSince.delete(workerId);
    } else {
      this.down.add(workerId);
      if (atMs !== undefined) this.downSince.set(workerId, atMs);
    }
  }

  private bumpWorker(workerId: string | null, delta: number): void {
    if (workerId === null) return;
    const slots = this.options.workerSlots ?? 1;
    const before = this.workerHeld.get(workerId) ?? 0;
    const n = Math.max(0, before + delta);
    if (n === 0) this.workerHeld.delete(workerId);
    else this.workerHeld.set(workerId, n);
    this.filledSlots += Math.min(slots, n) - Math.min(slots, before);
  }

  private rememberGrant(atMs: number, nodeId: string, jobId: string, fence: number): void {
    this.recentGrants.push({ atMs, nodeId, jobId, fence });
    // A grant's statement is at most a store timeout old when it lands; a minute is ample.
    while (this.recentStart < this.recentGrants.length && this.recentGrants[this.recentStart]!.atMs < atMs - 60_000) this.recentStart++;
    if (this.recentStart > 4096 && this.recentStart * 2 > this.recentGrants.length) {
      this.recentGrants.splice(0, this.recentStart);
      this.recentStart = 0;
    }
  }

  /**
   * I11, for a grant that leaves its DAG above its cap: the pool must keep at least the
   * reserve free after it. A shortfall is excused only when it is precisely the race
   * between nodes: the grant's statement left its node (so its round was planned) before
   * other nodes' grants landed, and those grants, still holding their slots, account for
   * the whole shortfall. Anything else fails.
   */
  private checkLent(atMs: number, dagId: string, nodeId: string, held: number, cap: number): void {
    const reserve = this.reserveAt(atMs);
    const free = this.freeSlots();
    if (free >= reserve) return;
    const sentAtMs = this.landing?.sentAtMs;
    let later = 0;
    if (sentAtMs !== undefined) {
      const slots = this.options.workerSlots ?? 1;
      for (let i = this.recentGrants.length - 1; i >= this.recentStart; i--) {
        const g = this.recentGrants[i]!;
        if (g.atMs <= sentAtMs) break;
        if (g.nodeId === nodeId) continue;
        const s = this.leases.get(g.jobId);
        // Only a grant still held by a worker that is up, and not over its slots, took a free slot.
        if (!s?.leased || s.fence !== g.fence || s.holder === null || this.down.has(s.holder) || (this.workerHeld.get(s.holder) ?? 0) > slots) continue;
        later++;
      }
    }
    if (sentAtMs !== undefined && free + later >= reserve) {
      this.counts.lendRaces++;
      if (this.lendRaces.length < 20) this.lendRaces.push({ atMs, dagId, nodeId, sentAtMs, free, reserve, laterGrants: later });
      return;
    }
    this.fail(
      'I11',
      atMs,
      `DAG ${dagId} holds ${held} leases, ${held - cap} above its cap of ${cap}, through a grant by ${nodeId}${sentAtMs === undefined ? '' : ` sent at ${sentAtMs}`} that left ${free} slots free, below the reserve of ${reserve} (${later} grants of other nodes landed after it was sent)`,
    );
  }

  private fail(invariant: InvariantId, atMs: number, message: string): void {
    const v: Violation = { invariant, kind: INVARIANTS[invariant].kind, atMs, message };
    this.violationCounts[invariant] = (this.violationCounts[invariant] ?? 0) + 1;
    // A run that keeps going past its violations keeps the first hundred of them and counts the rest.
    if (this.violations.length >= 100) return;
    this.violations.push(v);
    if (this.violations.length === 1) this.onViolation?.(v);
  }
}
