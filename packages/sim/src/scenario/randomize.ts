import { DEFAULT_NODE_CONFIG } from '@fenceline/core/engine';
import { Rng } from '../engine/random';
import type { DagGroup, DagShape, ScenarioConfig } from './config';

/**
 * Swarm: draws a whole world from the seed (cluster size, fleet, load, fault rates), so
 * running many seeds explores many different worlds, each reproducible from its number.
 * Durations stay in ranges where the production timeouts (90 s leases, 15 s shard
 * leases) matter: pauses and cuts are drawn long enough to outlast them.
 */
export function randomizeScenario(base: ScenarioConfig, seed: number): ScenarioConfig {
  const rng = new Rng(seed, 'swarm');
  const shapes: DagShape[] = ['independent', 'chain', 'diamond', 'fanout'];
  const groups: DagGroup[] = [];
  const groupCount = rng.int(1, 3);
  for (let g = 0; g < groupCount; g++) {
    const shape = rng.pick(shapes);
    groups.push({
      name: `g${g}`,
      count: shape === 'fanout' ? 1 : rng.int(3, 25),
      tasks: shape === 'fanout' ? rng.int(10, 60) : rng.int(1, 5),
      shape,
      durationMs: rng.int(5, 180) * 1000,
      ...(shape === 'fanout' ? { triggerAtMs: rng.int(0, 10) * 60_000 } : { everyMs: rng.int(2, 15) * 60_000 }),
      retries: rng.int(0, 3),
    });
  }
  // Keep the offered load feasible, so a liveness failure means the scheduler lost work,
  // not that the world asked for more than it could ever do: a run fits well within its
  // interval (max active runs is 1), and the fleet has room for twice the average demand.
  let demandSlots = 0;
  for (const g of groups) {
    const critical = (g.shape === 'chain' ? g.tasks : g.shape === 'diamond' ? Math.min(g.tasks, 3) : 1) * g.durationMs * 1.3;
    if (g.everyMs) g.everyMs = Math.max(g.everyMs, Math.ceil((3 * critical) / 60_000) * 60_000);
    demandSlots += g.everyMs ? (g.count * g.tasks * g.durationMs) / g.everyMs : 0;
  }
  const slots = rng.int(1, 3);
  // A swarm world stays small enough to run in seconds: past 40 workers the load shrinks instead.
  const needed = Math.ceil((2 * demandSlots) / slots);
  if (needed > 40) for (const g of groups) if (g.everyMs) g.count = Math.max(1, Math.floor((g.count * 40) / needed));
  const workers = Math.max(rng.int(4, 30), Math.min(40, needed));
  const pick = (p: number, minMs: number, maxMs: number) => ({ probability: p, minMs, maxMs });
  const world: ScenarioConfig = {
    ...base,
    seed,
    faultPhaseMs: rng.int(15, 40) * 60_000,
    livenessMs: 40 * 60_000,
    cluster: { ...base.cluster, nodes: rng.int(2, 3), shardCount: rng.pick([2, 4, 8, 16]), capFraction: rng.pick([0.3, 0.5, 1]) },
    workers: { ...base.workers, count: workers, slots },
    jobs: { durationJitter: 0.3, failureRate: rng.pick([0, 0.02, 0.1]) },
    load: groups,
    faults: {
      tickMs: 10_000,
      workerPause: pick(rng.between(0, 0.05), 20_000, 200_000),
      workerCrash: pick(rng.between(0, 0.03), 10_000, 180_000),
      schedulerPause: pick(rng.between(0, 0.02), 5_000, 40_000),
      leaderCrash: pick(rng.between(0, 0.02), 10_000, 120_000),
      linkSlow: { ...pick(rng.between(0, 0.05), 10_000, 60_000), extraMs: rng.int(50, 3_000) },
      linkCut: pick(rng.between(0, 0.03), 5_000, 60_000),
      clockStep: { probability: rng.between(0, 0.02), maxStepMs: 5_000 },
      clockDriftPpm: rng.pick([0, 100, 1_000]),
    },
  };
  // Drawn last, so every earlier draw (and so every world drawn before sharing existed)
  // stays as it was: half the worlds run with the nodes sharing the shards out.
  world.cluster = { ...world.cluster, node: { ...world.cluster.node, shareShards: rng.between(0, 1) < 0.5 } };
  // Drawn after sharing, for the same reason: renewal answers lost while jobs finish.
  world.faults = { ...world.faults, renewReplyLoss: pick(rng.between(0, 0.05), 5_000, 60_000) };
  // Drawn after that, for the same reason: the store's own failovers, rare and 3 to 30 s long.
  world.faults = { ...world.faults, storeFailover: pick(rng.between(0, 0.01), 3_000, 30_000) };
  // Drawn after that, for the same reason: an operator cancelling and clearing runs.
  world.operator = { tickMs: 60_000, cancel: rng.between(0, 0.2), clear: rng.between(0, 0.2) };
  // Drawn last of all, for the same reason: half the worlds lend idle slots beyond the cap,
  // keeping a reserve of none, a tenth or a quarter of the pool (I11 judges every lent grant).
  const lend = rng.between(0, 1) < 0.5;
  const reserve = rng.pick([0, 0.1, 0.25]);
  world.cluster = { ...world.cluster, lendReserveFraction: lend ? reserve : null };
  // Drawn after lending, for the same reason: one node's store connection stuck, calls
  // never answered, rare and 5 s to 2 min long.
  world.faults = { ...world.faults, storeStuck: pick(rng.between(0, 0.01), 5_000, 120_000) };
  // Drawn after that, for the same reason: the reserve's floor in slots, of none, a couple or
  // the nodes' default (a world without lending ignores it and keeps its trace).
  world.cluster = { ...world.cluster, lendReserveMinSlots: rng.pick([0, 2, DEFAULT_NODE_CONFIG.lendReserveMinSlots]) };
  fitFanoutsUnderCap(world);
  return world;
}

/** How long a fan-out may take at its cap: well inside the 40 minutes liveness allows. */
const FANOUT_BUDGET_MS = 25 * 60_000;

/**
 * A fan-out runs at most cap = capFraction x pool jobs at once, so in a small fleet with a
 * low cap its jobs run a few at a time (a pool of 5 slots at 30% runs them one by one).
 * Fewer tasks keep it within the liveness bound, so that a liveness failure still means
 * lost work rather than a fan-out the fair-share cap could never finish in time. This
 * draws nothing from the seed, so worlds that already fit are unchanged.
 */
function fitFanoutsUnderCap(world: ScenarioConfig): void {
  const pool = world.workers.count * world.workers.slots;
  const cap = Math.max(1, Math.floor(world.cluster.capFraction * pool + 1e-9));
  for (const g of world.load) {
    if (g.shape !== 'fanout') continue;
    // Its tasks are independent and run in waves of `cap`; jitter stretches a job by up to 30%.
    const waves = Math.max(1, Math.floor(FANOUT_BUDGET_MS / (g.durationMs * 1.3)));
    g.tasks = Math.max(1, Math.min(g.tasks, waves * cap));
  }
}
