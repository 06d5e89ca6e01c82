import { FencelineError, Heap } from '@fenceline/core';
import { type LeaseRef, type RenewOutcome } from '@fenceline/core/store';
import type { Simulation } from '../engine/simulation';
import { SimProcess } from '../engine/process';
import { callLabels, callOver, type CallLabels, type Link } from './link';
import type { SchedulerHost } from './scheduler-host';
import { onNode } from './on-node';
import type { DueLease, RenewalAgentLink, SimWorker } from './sim-worker';

/** Leases per renewMany request, as bench/loadgen.ts sends them (RENEW_CHUNK). */
const MAX_LEASES = 1000;

/** One identity's due lease, with the worker (and the incarnation) it belongs to. */
interface Entry {
  worker: SimWorker;
  incarnation: number;
  lease: DueLease;
}

/** When an identity said its next lease falls due (true time); stale once it says so again. */
interface DueNote {
  worker: SimWorker;
  dueMs: number;
}

/**
 * The renewal side of a host that runs many worker identities (`workers.identitiesPerHost`),
 * as bench/loadgen.ts's generator processes do: on each one-second tick at which some
 * lease of some identity is due, it asks those identities for their due leases (apps/worker's
 * rule, by each identity's own clock) and renews them all with one `renewMany` per node,
 * each lease through the node that delivered it, falling back to the other nodes as
 * apps/worker does. The scheduler checks every lease against its own holder and counts
 * each identity as seen, exactly as for a renewal the identity sent itself.
 *
 * Everything else stays with each identity: its polls, its jobs, its results, its
 * hand-backs, its faults. An identity that is paused at the tick is not asked (its own
 * renewal loop would not have run either) and is asked again at the next tick, so its
 * leases run out as they would; a crashed one is forgotten. The answers are delivered
 * inside each identity's process, so a paused one sees them on resume and a crashed one
 * never. The agent itself is not paused or crashed by the random faults (they pick worker
 * identities); its links to the nodes are cut and slowed like any other.
 *
 * Each identity tells the agent when its next lease falls due, so a tick costs the
 * identities that have something due, not the whole host.
 */
export class RenewalAgent implements RenewalAgentLink {
  readonly process: SimProcess;
  private readonly labels: CallLabels[];
  private readonly latest = new Map<SimWorker, DueNote>();
  private readonly notes = new Heap<DueNote>((a, b) => a.dueMs < b.dueMs);
  private wake: { atMs: number; cancel: () => void } | null = null;
  private readonly startedAtMs: number;

  constructor(
    private readonly sim: Simulation,
    readonly id: string,
    private readonly hosts: SchedulerHost[],
    /** One link per scheduler node, in the order of `hosts`. */
    private readonly links: Link[],
    private readonly rpcTimeoutMs: number,
    /** apps/worker's renewal check period. */
    private readonly tickMs = 1000,
  ) {
    this.process = new SimProcess(sim, id);
    this.startedAtMs = sim.nowMs;
    this.labels = hosts.map((h) => callLabels(`${id}>${h.nodeId}.renewMany`));
  }

  /** The next lease of `worker` falls due at `dueMs` (true time): wake on the first tick at or after it. */
  dueAt(worker: SimWorker, dueMs: number): void {
    const note = { worker, dueMs };
    this.latest.set(worker, note);
    this.notes.push(note);
    this.arm(dueMs);
  }

  private arm(dueMs: number): void {
    // A lease already due (its identity was paused at the last tick) waits for the next
    // tick, not this instant: the check runs once a second, whatever is overdue.
    const from = Math.max(dueMs, this.sim.nowMs + 1);
    const atMs = this.startedAtMs + Math.ceil((from - this.startedAtMs) / this.tickMs) * this.tickMs;
    if (this.wake && this.wake.atMs <= atMs) return;
    this.wake?.cancel();
    const cancel = this.process.timers.after(Math.max(0, atMs - this.sim.nowMs), () => {
      this.wake = null;
      this.round();
    });
    this.wake = { atMs, cancel };
  }

  private round(): void {
    const now = this.sim.nowMs;
    const byNode = new Map<number, Entry[]>();
    const asked: SimWorker[] = [];
    const later: DueNote[] = [];
    for (let top = this.notes.peek(); top && top.dueMs <= now; top = this.notes.peek()) {
      this.notes.pop();
      const worker = top.worker;
      if (this.latest.get(worker) !== top) continue;
      this.latest.delete(worker);
      // A crashed identity's worker is gone for good; a paused one is asked at the next tick.
      if (worker.stopped) continue;
      if (worker.process.state !== 'running') {
        later.push(top);
        continue;
      }
      asked.push(worker);
      for (const lease of worker.takeDueLeases()) {
        let group = byNode.get(lease.via);
        if (!group) byNode.set(lease.via, (group = []));
        group.push({ worker, incarnation: worker.process.incarnation, lease });
      }
    }
    // Each identity asked says when its next lease not now in flight falls due (one asked
    // too early by its own clock, with nothing due yet, included).
    for (const worker of asked) worker.scheduleRenewCheck();
    for (const note of later) if (!this.latest.has(note.worker)) this.dueAt(note.worker, note.dueMs);
    for (const [via, group] of byNode) for (let k = 0; k < group.length; k += MAX_LEASES) void this.renew(via, group.slice(k, k + MAX_LEASES));
  }

  /** One renewMany through the delivering node, then the others, as long as none answers. */
  private async renew(via: number, entries: Entry[]): Promise<void> {
    const refs: (LeaseRef & { session: string })[] = entries.map((e) => ({ workerId: e.worker.id, jobId: e.lease.jobId, fence: e.lease.fence, session: e.worker.session }));
    let outcomes: RenewOutcome[] | null = null;
    for (let k = 0; k < this.hosts.length && outcomes === null; k++) {
      const i = (via + k) % this.hosts.length;
      try {
        outcomes = await callOver(this.links[i]!, this.process, this.hosts[i]!.process, this.labels[i]!, this.rpcTimeoutMs, () =>
          onNode(this.hosts[i]!, (node) => node.protocol.renewMany(refs)),
        );
      } catch (err) {
        // A refusal of the whole call is the same on every node.
        if (err instanceof FencelineError) break;
      }
    }
    // Each identity hears about its own leases, inside its own process, and then says when
    // its next lease falls due.
    const byWorker = new Map<SimWorker, { incarnation: number; leases: DueLease[]; outcomes: RenewOutcome[] }>();
    entries.forEach((e, n) => {
      let mine = byWorker.get(e.worker);
      if (!mine) byWorker.set(e.worker, (mine = { incarnation: e.incarnation, leases: [], outcomes: [] }));
      mine.leases.push(e.lease);
      const o = outcomes?.[n];
      if (o) mine.outcomes.push(o);
    });
    for (const [worker, mine] of byWorker) {
      worker.process.deliver(mine.incarnation, () => {
        if (outcomes) worker.renewed(mine.outcomes);
        else worker.notRenewed(mine.leases);
        worker.scheduleRenewCheck();
      });
    }
  }
}
