import type { Rng } from '../engine/random';
import type { Simulation } from '../engine/simulation';
import type { FaultConfig, FaultRate, ScriptedFault } from '../scenario/config';
import type { Link } from './link';
import type { SchedulerHost } from './scheduler-host';
import type { WorkerHost } from './worker-host';

/** The calls whose replies a renew-reply-loss fault loses: a worker's renew, an agent's renewMany. */
const RENEW_CALLS = ['renew', 'renewMany'] as const;

export interface FaultLog {
  atMs: number;
  kind: string;
  target: string;
  durationMs: number;
}

/**
 * Injects faults: at random (each kind with a probability per tick and a duration drawn
 * between its minimum and maximum, so a pause can be made to outlast a lease) and from a
 * script. Every fault schedules its own end; `healAll` ends them all at once when the
 * safety phase is over.
 */
export class FaultInjector {
  readonly log: FaultLog[] = [];
  private active = true;

  constructor(
    private readonly sim: Simulation,
    private readonly rng: Rng,
    private readonly config: FaultConfig,
    private readonly hosts: SchedulerHost[],
    private readonly workers: WorkerHost[],
    private readonly links: Link[],
    /** The links renewals cross (workers' and renewal agents' links to the nodes). */
    private readonly renewLinks: Link[] = [],
  ) {}

  /** Rolls the dice every tick until `untilMs`. */
  startRandom(untilMs: number): void {
    const tick = (): void => {
      if (!this.active || this.sim.nowMs >= untilMs) return;
      this.roll();
      this.sim.after(this.config.tickMs, 'faults tick', tick);
    };
    this.sim.after(this.config.tickMs, 'faults tick', tick);
  }

  /** Sets every process's clock drift from the seed. */
  drift(): void {
    const ppm = this.config.clockDriftPpm ?? 0;
    if (ppm <= 0) return;
    for (const h of this.hosts) h.process.setDrift(this.rng.between(-ppm, ppm));
    for (const w of this.workers) w.process.setDrift(this.rng.between(-ppm, ppm));
  }

  schedule(script: ScriptedFault[], startMs: number): void {
    for (const f of script) this.sim.at(startMs + f.atMs, `script ${f.action}`, () => this.scripted(f));
  }

  /** Ends every fault: resumes, restarts, heals links. Clock drift stays (it is not a fault that stops). */
  healAll(): void {
    this.active = false;
    for (const h of this.hosts) {
      h.heldDown = false;
      if (h.process.state === 'paused') h.process.resume();
      if (h.process.state === 'crashed') h.restart();
    }
    for (const w of this.workers) {
      if (w.process.state === 'paused') w.process.resume();
      if (w.process.state === 'crashed') w.restart();
    }
    for (const l of this.links) l.heal();
  }

  private roll(): void {
    const c = this.config;
    if (this.hit(c.workerPause)) {
      const w = this.rng.pick(this.workers);
      this.pauseWorker(w, this.duration(c.workerPause!));
    }
    if (this.hit(c.workerCrash)) {
      const w = this.rng.pick(this.workers);
      if (w.process.state === 'running') this.crashWorker(w, this.duration(c.workerCrash!));
    }
    if (this.hit(c.schedulerPause)) {
      const h = this.rng.pick(this.hosts);
      if (h.process.state === 'running') {
        const d = this.duration(c.schedulerPause!);
        this.note('scheduler-pause', h.nodeId, d);
        h.process.pause();
        this.sim.after(d, `${h.nodeId} resume`, () => h.process.resume());
      }
    }
    if (this.hit(c.leaderCrash)) {
      const leaders = this.hosts.filter((h) => h.node && h.node.ledShards().length > 0 && h.process.state === 'running');
      if (leaders.length > 0) this.crashHost(this.rng.pick(leaders), this.duration(c.leaderCrash!));
    }
    if (this.hit(c.linkSlow) && this.links.length > 0) {
      const link = this.rng.pick(this.links);
      const d = this.duration(c.linkSlow!);
      this.note('link-slow', link.name, d);
      link.slowFor(d, c.linkSlow!.extraMs);
    }
    if (this.hit(c.linkCut) && this.links.length > 0) {
      const link = this.rng.pick(this.links);
      const d = this.duration(c.linkCut!);
      this.note('link-cut', link.name, d);
      link.cutFor(d);
    }
    if (c.clockStep && this.rng.chance(c.clockStep.probability)) {
      const all = [...this.hosts.map((h) => h.process), ...this.workers.map((w) => w.process)];
      const p = this.rng.pick(all);
      const step = Math.round(this.rng.between(-c.clockStep.maxStepMs, c.clockStep.maxStepMs));
      this.note('clock-step', p.id, step);
      p.step(step);
    }
    // Rolled last, so worlds drawn without it see every other fault as they did before.
    if (this.hit(c.renewReplyLoss) && this.renewLinks.length > 0) {
      const link = this.rng.pick(this.renewLinks);
      const d = this.duration(c.renewReplyLoss!);
      this.note('renew-reply-loss', link.name, d);
      link.loseRepliesFor(d, RENEW_CALLS);
    }
    if (this.hit(c.storeFailover)) this.failOverStore(this.duration(c.storeFailover!));
    if (this.hit(c.storeStuck) && this.hosts.length > 0) this.stickStoreLink(this.rng.pick(this.hosts), this.duration(c.storeStuck!));
  }

  /** One node's store calls get stuck for a while (Link.stickFor): sent, maybe applied, never answered. */
  private stickStoreLink(h: SchedulerHost, durationMs: number): void {
    this.note('store-stuck', h.link.name, durationMs);
    h.link.stickFor(durationMs);
  }

  /** The store's primary is lost: every node's store link is cut at once for the promotion window. */
  private failOverStore(durationMs: number): void {
    this.note('store-failover', 'store', durationMs);
    for (const h of this.hosts) h.link.cutFor(durationMs);
  }

  private scripted(f: ScriptedFault): void {
    switch (f.action) {
      case 'crash-leader': {
        if (f.afterRunsCreated) break; // the world arms a watcher on the store for this one
        const h = this.hosts.find((x) => x.node?.ledShards().includes(f.shard));
        if (h) this.crashHost(h, f.downMs);
        break;
      }
      case 'pause-workers': {
        const pool = f.busyOnly ? this.workers.filter((w) => w.worker && w.worker.busy > 0 && w.process.state === 'running') : this.workers;
        for (const w of pool.slice(0, f.count)) this.pauseWorker(w, f.durationMs);
        break;
      }
      case 'crash-workers':
        for (const w of this.workers.filter((x) => x.process.state === 'running').slice(0, f.count)) this.crashWorker(w, f.downMs);
        break;
      case 'store-failover':
        this.failOverStore(f.durationMs);
        break;
      case 'stick-store-link': {
        const h = this.hosts[f.node];
        if (h) this.stickStoreLink(h, f.durationMs);
        break;
      }
      case 'refuse-store-writes': {
        const h = this.hosts[f.node];
        if (h) {
          this.note('store-writes-refused', h.link.name, f.durationMs);
          h.link.refuseWritesFor(f.durationMs);
        }
        break;
      }
      case 'cut-store-link': {
        const h = this.hosts[f.node];
        if (h) {
          this.note('link-cut', h.link.name, f.durationMs);
          h.link.cutFor(f.durationMs);
        }
        break;
      }
    }
  }

  crashHost(h: SchedulerHost, downMs: number): void {
    this.note('scheduler-crash', h.nodeId, downMs);
    h.heldDown = true;
    h.crash();
    this.sim.after(downMs, `${h.nodeId} restart`, () => {
      h.heldDown = false;
      if (h.process.state === 'crashed') h.restart();
    });
  }

  private pauseWorker(w: WorkerHost, d: number): void {
    if (w.process.state !== 'running') return;
    this.note('worker-pause', w.id, d);
    w.process.pause();
    this.sim.after(d, `${w.id} resume`, () => w.process.resume());
  }

  private crashWorker(w: WorkerHost, d: number): void {
    this.note('worker-crash', w.id, d);
    w.crash();
    this.sim.after(d, `${w.id} restart`, () => {
      if (w.process.state === 'crashed') w.restart();
    });
  }

  private hit(rate: FaultRate | undefined): boolean {
    return !!rate && this.rng.chance(rate.probability);
  }

  private duration(rate: FaultRate): number {
    return Math.round(this.rng.between(rate.minMs, Math.max(rate.minMs, rate.maxMs)));
  }

  private note(kind: string, target: string, durationMs: number): void {
    this.log.push({ atMs: this.sim.nowMs, kind, target, durationMs });
  }
}
