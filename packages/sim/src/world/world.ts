import { DeposedLeaderError, FencelineError, isStoreUnavailable, parseDagId, parseWorkerId, type DagSpecInput } from '@fenceline/core';
import { DEFAULT_NODE_CONFIG, type Assignment } from '@fenceline/core/engine';
import { emptyWorkerStats } from '@fenceline/core/worker';
import { Checker, type InvariantId, type Violation } from '../check/checker';
import { EffectSinks, WORLD_SINKS } from './effect-sinks';
import { Rng } from '../engine/random';
import { Simulation } from '../engine/simulation';
import { Metrics } from '../report/metrics';
import type { ScenarioConfig } from '../scenario/config';
import { generateGroup, scaledCount } from '../scenario/load';
import { memoryStore, type MemoryStore, type MemoryStoreOptions } from '../store/memory-store';
import type { StoreWrite } from '../store/records';
import { FaultInjector, type FaultLog } from './faults';
import { SimOperator, type OperatorLog } from './operator';
import { Link, LinkError } from './link';
import { RenewalAgent } from './renewal-agent';
import { SchedulerHost } from './scheduler-host';
import { HELD_POLL_WAIT_MS, type WorkerStats } from './sim-worker';
import { WorkerHost } from './worker-host';

export type Outcome = 'ok' | 'safety' | 'liveness' | 'crash';

export interface Progress {
  phase: 'setup' | 'faults' | 'liveness' | 'done';
  virtualMs: number;
  totalMs: number;
  events: number;
}

export interface WorldOptions {
  /** Builds the store; tests pass a deliberately broken one here (test/broken-stores.ts). */
  makeStore?: (options: MemoryStoreOptions) => MemoryStore;
  onProgress?: (p: Progress) => void;
  /** Runs on past violations (each is still recorded, and the run still fails), to measure a failing run's figures. */
  keepGoing?: boolean;
}

/** Notes kept while a scenario's story unfolds (a leader crash, a worker pause). */
export interface StoryNotes {
  leaderCrash?: { atMs: number; shard: number; nodeId: string; leasedAtCrash: { jobId: string; fence: number }[]; undelivered: number; slotDags: string[] };
  pausedWorkers?: { atMs: number; ids: string[]; jobs: { jobId: string; fence: number }[] };
}

export interface WorldResult {
  outcome: Outcome;
  violations: Violation[];
  violationCounts: Partial<Record<InvariantId, number>>;
  crash: string | null;
  traceHash: string;
  traceTail: string[];
  events: number;
  startMs: number;
  endMs: number;
  faultsEndedAtMs: number;
  metrics: Metrics;
  checker: Checker;
  store: MemoryStore;
  faults: FaultLog[];
  /** The operator actions requested during the fault phase. */
  operatorActions: OperatorLog[];
  workerStats: WorkerStats;
  /** Leases a node renewed whose answer was lost on the way back to their worker (the renew-reply-loss fault). */
  renewRepliesLost: { atMs: number; workerId: string; jobId: string; fence: number }[];
  nodeErrors: { expected: number; unexpected: string[] };
  nodeMetrics: Record<string, number>;
  notes: StoryNotes;
  size: { dags: number; jobsPlannedPerDay: number; workers: number; slots: number; nodes: number };
}

/**
 * Builds one simulated world from a scenario and runs it: the store, N scheduler nodes
 * (the production SchedulerNode), the worker fleet, the load, the faults, the checker.
 * Safety phase with faults, then every fault heals and the liveness phase runs, after
 * which every run created before the faults stopped must be finished (I7).
 */
export async function runWorld(config: ScenarioConfig, options: WorldOptions = {}): Promise<WorldResult> {
  const startMs = Date.parse(config.startAt);
  if (!Number.isFinite(startMs)) throw new Error(`startAt "${config.startAt}" is not an ISO date`);
  const sim = new Simulation(startMs, config.traceKeep ?? 200);
  const rng = new Rng(config.seed);
  const store = (options.makeStore ?? ((o) => memoryStore(o)))({ nowMs: () => sim.nowMs, eventLogLimit: 10_000 });
  const metrics = new Metrics(store);
  const workerCount = scaledCount(config.workers.count, config.scale);
  const poolSlots = workerCount * config.workers.slots;
  const hosts: SchedulerHost[] = [];
  // Lending is set for the cluster (or, as any node setting, under cluster.node).
  const lendReserveFraction = config.cluster.lendReserveFraction ?? config.cluster.node?.lendReserveFraction ?? null;
  // The floor, unless the scenario sets one, is the nodes' default, so the checker counts the reserve they keep.
  const lendReserveMinSlots = config.cluster.lendReserveMinSlots ?? config.cluster.node?.lendReserveMinSlots ?? DEFAULT_NODE_CONFIG.lendReserveMinSlots;
  const checker = new Checker({
    failoverBoundMs: config.failoverBoundMs,
    capFraction: config.cluster.capFraction,
    poolSlots: () => poolSlots,
    lendReserveFraction,
    lendReserveMinSlots,
    workerSlots: config.workers.slots,
    workerLiveWindowMs: config.cluster.node?.workerLiveWindowMs ?? DEFAULT_NODE_CONFIG.workerLiveWindowMs,
    schedulersImpaired: () => !hosts.some((h) => h.healthy),
  });
  let crash: string | null = null;
  // A run stops at its first violation, unless asked to keep going so that the figures of a
  // failing run can still be measured to the end (the run fails all the same).
  checker.onViolation = (v) => {
    if (!options.keepGoing) sim.stop(`${v.invariant} violated`);
  };
  const writeHooks: ((w: StoreWrite) => void)[] = [];
  store.observe((w: StoreWrite) => {
    sim.trace.addRecord(w, describe);
    checker.observe(w);
    metrics.observe(w);
    for (const hook of writeHooks) hook(w);
  });
  sim.afterEvent = () => checker.afterEvent(sim.nowMs);

  const nodeErrors = { expected: 0, unexpected: [] as string[] };
  const onNodeError = (where: string, err: unknown, nodeId: string): void => {
    if (err instanceof LinkError || isStoreUnavailable(err) || err instanceof DeposedLeaderError || err instanceof FencelineError) {
      nodeErrors.expected++;
      return;
    }
    const text = `${nodeId} ${where}: ${err instanceof Error ? `${err.message}${err.stack ? ` @ ${err.stack.split('\n')[1]?.trim() ?? ''}` : ''}` : String(err)}`;
    if (nodeErrors.unexpected.length < 50) nodeErrors.unexpected.push(text);
    sim.trace.add(`error ${text}`);
  };

  // ---- cluster and load --------------------------------------------------------------------
  options.onProgress?.({ phase: 'setup', virtualMs: 0, totalMs: config.faultPhaseMs + config.livenessMs, events: 0 });
  const { shardCount } = await store.initCluster(config.cluster.shardCount);
  const loadRng = rng.fork('load');
  let dagCount = 0;
  let jobsPlannedPerDay = 0;
  for (const group of config.load) {
    for (const spec of generateGroup(group, config, loadRng)) {
      await store.putDag(spec as DagSpecInput, shardCount);
      const row = await store.getDag(parseDagId(spec.id));
      checker.registerDag(row.id, row.spec.schedule, row.spec.capFraction, row.nextRunAt?.getTime() ?? null, row.paused);
      dagCount++;
      if (group.everyMs) jobsPlannedPerDay += row.spec.tasks.length * (86_400_000 / group.everyMs);
      if (group.triggerAtMs !== undefined) {
        const dagId = row.id;
        sim.at(startMs + group.triggerAtMs, `trigger ${dagId}`, () => void store.triggerRun(dagId).catch((e: unknown) => (crash ??= String(e))));
      }
      if (group.backfill !== undefined) {
        const { atMs, spanMs, maxActiveRuns } = group.backfill;
        const dagId = row.id;
        const request = { dagId, from: new Date(startMs + atMs - spanMs), to: new Date(startMs + atMs), maxActiveRuns, confirm: true, requestedBy: 'simulator' };
        sim.at(startMs + atMs, `backfill ${dagId}`, () => void store.createBackfill(request).catch((e: unknown) => (crash ??= String(e))));
      }
    }
  }

  // ---- processes ---------------------------------------------------------------------------------
  const allLinks: Link[] = [];
  /** The links renewals cross: the renew-reply-loss fault picks among them. */
  const renewLinks: Link[] = [];
  const netRng = rng.fork('net');
  // The workers' polls are held open until answered (see holdOver in link.ts): the nodes
  // wait that long, and the workers play out the production wait's cycle themselves.
  const nodeConfig = {
    ...config.cluster.node,
    shardCount,
    capFraction: config.cluster.capFraction,
    lendReserveFraction,
    lendReserveMinSlots,
    pollWaitMs: HELD_POLL_WAIT_MS,
  };
  for (let i = 0; i < config.cluster.nodes; i++) {
    const nodeId = `node-${i}`;
    const link = new Link(sim, `${nodeId}~store`, netRng.fork(nodeId), { latencyMs: config.network.storeLatencyMs, jitterMs: config.network.storeJitterMs });
    allLinks.push(link);
    hosts.push(
      new SchedulerHost({
        sim,
        nodeId,
        store,
        link,
        storeTimeoutMs: config.network.storeTimeoutMs,
        config: nodeConfig,
        onEvent: (event) => {
          if (event.type === 'write:fenced' && typeof event.data?.reason === 'string') metrics.refusedFor(event.data.reason);
        },
        onError: (where, err, host) => onNodeError(where, err, host.nodeId),
        onStoreCall: (m) => metrics.storeCall(m),
        onStoreReply: (m, value) => checker.acknowledged(m, value),
        // Only I11 needs to know how old a grant's plan is, so only a lending world pays for it.
        ...(lendReserveFraction === null
          ? {}
          : {
              onStoreApply: (m: string, sentAtMs: number | null) => {
                if (m === 'grantLeasesMany') checker.landing = sentAtMs === null ? null : { sentAtMs };
              },
            }),
        restartDelayMs: 5_000,
      }),
    );
  }
  /** A host's renewal agent, with its own link to each node (faults may cut or slow them like any link). */
  const renewalAgent = (id: string): RenewalAgent => {
    const links = hosts.map((h) => {
      const l = new Link(sim, `${id}~${h.nodeId}`, netRng.fork(`${id}~${h.nodeId}`), { latencyMs: config.network.workerLatencyMs, jitterMs: config.network.workerJitterMs });
      allLinks.push(l);
      renewLinks.push(l);
      return l;
    });
    const agent = new RenewalAgent(sim, id, hosts, links, config.network.rpcTimeoutMs);
    agent.process.onError = (err) => onNodeError('renewal agent', err, id);
    return agent;
  };
  const workerStats: WorkerStats = emptyWorkerStats();
  const sinks = new EffectSinks(WORLD_SINKS, (attempt) => checker.observeEffect(attempt));
  const renewRepliesLost: WorldResult['renewRepliesLost'] = [];
  const workers: WorkerHost[] = [];
  const agents: RenewalAgent[] = [];
  const perHost = Math.max(1, Math.floor(config.workers.identitiesPerHost ?? 1));
  const jobRng = rng.fork('jobs');
  const outcome = (job: Assignment, r: Rng): { durationMs: number; fail: boolean } => {
    const base = typeof job.task.config.durationMs === 'number' ? job.task.config.durationMs : 60_000;
    const jitter = config.jobs.durationJitter;
    return { durationMs: Math.max(1, Math.round(base * (1 + jitter * (2 * r.next() - 1)))), fail: r.chance(config.jobs.failureRate) };
  };
  for (let i = 0; i < workerCount; i++) {
    // The simulator names its workers; they pass the same check a worker's id does at a node.
    const id = parseWorkerId(`w-${i}`);
    if (perHost > 1 && i % perHost === 0) agents.push(renewalAgent(`agent-${agents.length}`));
    const agent = perHost > 1 ? agents[agents.length - 1] : undefined;
    const links = hosts.map((h) => {
      const l = new Link(sim, `${id}~${h.nodeId}`, netRng.fork(`${id}~${h.nodeId}`), { latencyMs: config.network.workerLatencyMs, jitterMs: config.network.workerJitterMs });
      allLinks.push(l);
      renewLinks.push(l);
      return l;
    });
    const wrng = jobRng.fork(id);
    workers.push(
      new WorkerHost(
        sim,
        id,
        () => ({
          id,
          slots: config.workers.slots,
          hosts,
          links,
          rng: wrng,
          pollWaitMs: config.workers.pollWaitMs,
          rpcTimeoutMs: config.network.rpcTimeoutMs,
          outcome,
          stats: workerStats,
          onRefused: (_code, op) => metrics.refused(op),
          onEffect: (job, late) => sinks.apply(`${job.dagId}/${job.runId}/${job.taskId}`, job.fence, late, sim.nowMs),
          onRenewReplyLost: (leases) => {
            for (const l of leases) renewRepliesLost.push({ atMs: sim.nowMs, workerId: id, jobId: l.jobId, fence: l.fence });
          },
          renewalAgent: agent,
        }),
        (err) => onNodeError('worker', err, id),
        (up) => checker.workerUp(id, up, sim.nowMs),
      ),
    );
  }

  const faults = new FaultInjector(sim, rng.fork('faults'), config.faults, hosts, workers, allLinks, renewLinks);
  faults.drift();
  for (const h of hosts) h.start();
  const startRng = rng.fork('start');
  // Workers come up over the first few seconds, as a fleet does, not on one millisecond.
  for (const w of workers) sim.after(500 + Math.floor(startRng.next() * 4_500), `${w.id} start`, () => w.start());
  const notes = tellStory(config, sim, hosts, workers, store, faults, startMs, writeHooks);
  faults.schedule(config.script, startMs);
  if (config.faultPhaseMs > 0) faults.startRandom(startMs + config.faultPhaseMs);
  const operator = config.operator ? new SimOperator(sim, rng.fork('operator'), config.operator, store, store, (e) => (crash ??= String(e))) : null;
  if (operator && config.faultPhaseMs > 0) operator.start(startMs + config.faultPhaseMs);
  const sampleEvery = config.sampleEveryMs;
  const sampler = (): void => {
    metrics.sample(sim.nowMs);
    sim.after(sampleEvery, 'sample', sampler);
  };
  sim.after(sampleEvery, 'sample', sampler);

  // ---- run ---------------------------------------------------------------------------------------
  const totalMs = config.faultPhaseMs + config.livenessMs;
  const progress = (phase: Progress['phase']) => (nowMs: number) => options.onProgress?.({ phase, virtualMs: nowMs - startMs, totalMs, events: sim.eventCount });
  let faultsEndedAtMs = startMs + config.faultPhaseMs;
  try {
    await sim.runUntil(startMs + config.faultPhaseMs, progress('faults'));
    faultsEndedAtMs = sim.nowMs;
    if (!sim.stopped) {
      faults.healAll();
      sim.trace.add(`${sim.nowMs} faults healed`);
      await sim.runUntil(startMs + totalMs, progress('liveness'));
      if (!sim.stopped) checker.checkAcknowledged(store, sim.nowMs);
      if (!sim.stopped) checker.checkQuiescent(store, faultsEndedAtMs, sim.nowMs);
    }
  } catch (err) {
    crash = err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err);
  }
  options.onProgress?.({ phase: 'done', virtualMs: sim.nowMs - startMs, totalMs, events: sim.eventCount });

  const nodeMetrics: Record<string, number> = {};
  for (const h of hosts) for (const [k, v] of Object.entries(h.node?.metrics.snapshot() ?? {})) nodeMetrics[k] = (nodeMetrics[k] ?? 0) + v;
  const first = checker.violations[0];
  const result: WorldResult = {
    outcome: crash ? 'crash' : first ? first.kind : 'ok',
    violations: checker.violations,
    violationCounts: { ...checker.violationCounts },
    crash,
    traceHash: sim.trace.hash(),
    traceTail: sim.trace.tail(),
    events: sim.eventCount,
    startMs,
    endMs: sim.nowMs,
    faultsEndedAtMs,
    metrics,
    checker,
    store,
    faults: faults.log,
    operatorActions: operator?.log ?? [],
    workerStats,
    renewRepliesLost,
    nodeErrors,
    nodeMetrics,
    notes,
    size: { dags: dagCount, jobsPlannedPerDay: Math.round(jobsPlannedPerDay), workers: workerCount, slots: poolSlots, nodes: config.cluster.nodes },
  };
  return result;
}

/** Records what the story scenarios need to report on, at the moments their scripts act. */
function tellStory(
  config: ScenarioConfig,
  sim: Simulation,
  hosts: SchedulerHost[],
  workers: WorkerHost[],
  store: MemoryStore,
  faults: FaultInjector,
  startMs: number,
  writeHooks: ((w: StoreWrite) => void)[],
): StoryNotes {
  const notes: StoryNotes = {};
  for (const f of config.script) {
    if (f.action === 'crash-leader') {
      const crash = (): void => {
        const host = hosts.find((h) => h.node?.ledShards().includes(f.shard));
        if (!host) return;
        // Running means a worker has the job in hand; a lease the dying leader granted but
        // never delivered is counted apart (it can only expire and be re-run).
        const inHand = new Set<string>();
        for (const w of workers) for (const a of w.worker?.runningJobs() ?? []) inHand.add(`${a.jobId}@${a.fence}`);
        const leased = [...store.allJobs()].filter((j) => j.state === 'leased' && j.shard === f.shard);
        const leasedAtCrash = leased.filter((j) => inHand.has(`${j.id}@${j.fence}`)).map((j) => ({ jobId: j.id, fence: j.fence }));
        notes.leaderCrash = { atMs: sim.nowMs, shard: f.shard, nodeId: host.nodeId, leasedAtCrash, undelivered: leased.length - leasedAtCrash.length, slotDags: [] };
        if (f.afterRunsCreated) faults.crashHost(host, f.downMs);
      };
      if (!f.afterRunsCreated) {
        // Scheduled before the crash itself (same instant, earlier sequence number), so the
        // notes see the world as the crash found it.
        sim.at(startMs + f.atMs, 'story leader-crash', crash);
        continue;
      }
      // Mid-tick: the leader dies right after the write that created its k-th run of the
      // shard since `atMs`, while the rest of that tick's DAGs still wait for theirs.
      let created = 0;
      let armed = true;
      writeHooks.push((w) => {
        if (!armed || w.op !== 'run:created' || w.atMs < startMs + f.atMs || w.token?.shard !== f.shard) return;
        if (++created < f.afterRunsCreated!) return;
        armed = false;
        sim.after(0, 'story leader-crash mid-tick', crash);
      });
    }
    if (f.action === 'pause-workers') {
      sim.at(startMs + f.atMs, 'story pause-workers', () => {
        const pool = f.busyOnly ? workers.filter((w) => w.worker && w.worker.busy > 0 && w.process.state === 'running') : workers;
        const chosen = pool.slice(0, f.count);
        notes.pausedWorkers = {
          atMs: sim.nowMs,
          ids: chosen.map((w) => w.id),
          jobs: chosen.flatMap((w) => w.worker?.runningJobs().map((j) => ({ jobId: j.jobId, fence: j.fence })) ?? []),
        };
      });
    }
  }
  return notes;
}

/** One compact trace line per store write, so a violation shows what the store did just before. */
function describe(w: StoreWrite): string {
  const parts: string[] = [`${w.atMs} store ${w.op}`];
  for (const [k, v] of Object.entries(w)) {
    if (k === 'op' || k === 'atMs') continue;
    if (k === 'token' && v && typeof v === 'object') {
      const t = v as { shard: number; nodeId: string; epoch: number };
      parts.push(`by=${t.nodeId}/s${t.shard}/e${t.epoch}`);
    } else if (k === 'jobIds') parts.push(`jobs=${(v as string[]).length}`);
    else parts.push(`${k}=${String(v)}`);
  }
  return parts.join(' ');
}
