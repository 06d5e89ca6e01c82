import { InvalidInputError, isDagId } from '@fenceline/core';
import type { DagGroup, FaultConfig, ScenarioConfig, ScriptedFault } from './config';

const SHAPES = new Set(['independent', 'chain', 'diamond', 'fanout']);
const HEADLINES = new Set(['fanout', 'leader-crash', 'paused-worker', 'mission-day', 'swarm']);
const ACTIONS = new Set(['crash-leader', 'pause-workers', 'crash-workers', 'cut-store-link', 'stick-store-link', 'refuse-store-writes', 'store-failover']);

/**
 * Refuses a scenario that cannot be simulated, naming every field that is wrong, before
 * anything runs: a scenario file is typed by hand (and the console builds one from its
 * knobs), and a negative worker count or a probability of 5 would otherwise surface as a
 * hang or a nonsense report minutes later.
 */
export function checkScenario(c: ScenarioConfig): void {
  const problems: string[] = [];
  const at = (path: string, wanted: string, value: unknown): void => {
    problems.push(`${path} must be ${wanted}, got ${JSON.stringify(value) ?? String(value)}`);
  };
  const int = (path: string, v: unknown, min: number): void => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) at(path, `an integer >= ${min}`, v);
  };
  const num = (path: string, v: unknown, min: number, max = Infinity, minOpen = false): void => {
    const ok = typeof v === 'number' && Number.isFinite(v) && (minOpen ? v > min : v >= min) && v <= max;
    if (!ok) at(path, max === Infinity ? `a number ${minOpen ? '>' : '>='} ${min}` : `a number in ${minOpen ? '(' : '['}${min}, ${max}]`, v);
  };

  if (typeof c.name !== 'string' || c.name === '') at('name', 'a non-empty string', c.name);
  if (!HEADLINES.has(c.headline)) at('headline', `one of ${[...HEADLINES].join(', ')}`, c.headline);
  int('seed', c.seed, 0);
  if (typeof c.startAt !== 'string' || Number.isNaN(Date.parse(c.startAt))) at('startAt', 'an ISO 8601 time', c.startAt);
  num('faultPhaseMs', c.faultPhaseMs, 0);
  num('livenessMs', c.livenessMs, 0);
  int('cluster.nodes', c.cluster?.nodes, 1);
  int('cluster.shardCount', c.cluster?.shardCount, 1);
  num('cluster.capFraction', c.cluster?.capFraction, 0, 1, true);
  const reserve = c.cluster?.lendReserveFraction;
  // The reserve is a share of the pool kept free; all of it (1) would lend nothing at all.
  if (reserve !== undefined && reserve !== null && !(typeof reserve === 'number' && Number.isFinite(reserve) && reserve >= 0 && reserve < 1))
    at('cluster.lendReserveFraction', 'null or a number in [0, 1)', reserve);
  if (c.cluster?.lendReserveMinSlots !== undefined) int('cluster.lendReserveMinSlots', c.cluster.lendReserveMinSlots, 0);
  int('workers.count', c.workers?.count, 0);
  int('workers.slots', c.workers?.slots, 1);
  num('workers.pollWaitMs', c.workers?.pollWaitMs, 0, Infinity, true);
  if (c.workers?.identitiesPerHost !== undefined) int('workers.identitiesPerHost', c.workers.identitiesPerHost, 1);
  for (const k of ['storeLatencyMs', 'storeJitterMs', 'workerLatencyMs', 'workerJitterMs'] as const) num(`network.${k}`, c.network?.[k], 0);
  for (const k of ['storeTimeoutMs', 'rpcTimeoutMs'] as const) num(`network.${k}`, c.network?.[k], 0, Infinity, true);
  num('jobs.durationJitter', c.jobs?.durationJitter, 0, 1);
  num('jobs.failureRate', c.jobs?.failureRate, 0, 1);
  num('failoverBoundMs', c.failoverBoundMs, 0, Infinity, true);
  num('sampleEveryMs', c.sampleEveryMs, 0, Infinity, true);
  num('scale', c.scale, 0, Infinity, true);
  if (!Array.isArray(c.load)) at('load', 'a list of DAG groups', c.load);
  else {
    const names = new Set<string>();
    c.load.forEach((g, i) => {
      checkGroup(g, `load[${i}]`, at, int, num);
      if (names.has(g.name)) at(`load[${i}].name`, 'unique among the groups', g.name);
      names.add(g.name);
    });
  }
  checkFaults(c.faults, at, num);
  if (c.operator !== undefined) {
    num('operator.tickMs', c.operator?.tickMs, 0, Infinity, true);
    num('operator.cancel', c.operator?.cancel, 0, 1);
    num('operator.clear', c.operator?.clear, 0, 1);
  }
  if (!Array.isArray(c.script)) at('script', 'a list of scripted faults', c.script);
  else c.script.forEach((f, i) => checkScripted(f, `script[${i}]`, c, at, int, num));

  if (problems.length > 0) {
    throw new InvalidInputError(`scenario "${String(c.name)}" cannot run: ${problems.join('; ')}`, { scenario: c.name, problems });
  }
}

type At = (path: string, wanted: string, value: unknown) => void;
type Int = (path: string, v: unknown, min: number) => void;
type Num = (path: string, v: unknown, min: number, max?: number, minOpen?: boolean) => void;

function checkGroup(g: DagGroup, path: string, at: At, int: Int, num: Num): void {
  // The group's DAG ids are name-index, so its last one must pass the DAG id rule.
  const lastId = typeof g?.name === 'string' ? `${g.name}-${Number.isInteger(g.count) && g.count > 0 ? g.count - 1 : 0}` : null;
  if (lastId === null || !isDagId(lastId))
    at(`${path}.name`, 'letters, digits, dots, dashes or underscores, starting with a letter or digit (DAG ids are name-index, at most 128 characters)', g?.name);
  int(`${path}.count`, g?.count, 0);
  int(`${path}.tasks`, g?.tasks, 1);
  if (!SHAPES.has(g?.shape)) at(`${path}.shape`, `one of ${[...SHAPES].join(', ')}`, g?.shape);
  num(`${path}.durationMs`, g?.durationMs, 0, Infinity, true);
  if (g?.everyMs !== undefined) num(`${path}.everyMs`, g.everyMs, 0, Infinity, true);
  if (g?.triggerAtMs !== undefined) num(`${path}.triggerAtMs`, g.triggerAtMs, 0);
  if (g?.backfill !== undefined) {
    if (typeof g.backfill !== 'object' || g.backfill === null) at(`${path}.backfill`, 'an object', g.backfill);
    else {
      num(`${path}.backfill.atMs`, g.backfill.atMs, 0);
      num(`${path}.backfill.spanMs`, g.backfill.spanMs, 0, Infinity, true);
      int(`${path}.backfill.maxActiveRuns`, g.backfill.maxActiveRuns, 1);
      if (g.everyMs === undefined) at(`${path}.backfill`, 'a group with everyMs (a manual DAG has no slots to backfill)', g.backfill);
    }
  }
  if (g?.retries !== undefined) int(`${path}.retries`, g.retries, 0);
  if (g?.capFraction !== undefined) num(`${path}.capFraction`, g.capFraction, 0, 1, true);
  if (g?.maxActiveRuns !== undefined) int(`${path}.maxActiveRuns`, g.maxActiveRuns, 1);
  if (g?.timeoutMs !== undefined) num(`${path}.timeoutMs`, g.timeoutMs, 0, Infinity, true);
  if (g?.phase !== undefined && g.phase !== 'spread' && g.phase !== 'aligned') at(`${path}.phase`, 'spread or aligned', g.phase);
}

function checkFaults(f: FaultConfig, at: At, num: Num): void {
  if (typeof f !== 'object' || f === null) return at('faults', 'an object', f);
  num('faults.tickMs', f.tickMs, 0, Infinity, true);
  for (const k of ['workerPause', 'workerCrash', 'schedulerPause', 'leaderCrash', 'linkSlow', 'linkCut', 'renewReplyLoss', 'storeFailover', 'storeStuck'] as const) {
    const r = f[k];
    if (r === undefined) continue;
    num(`faults.${k}.probability`, r.probability, 0, 1);
    num(`faults.${k}.minMs`, r.minMs, 0);
    num(`faults.${k}.maxMs`, r.maxMs, typeof r.minMs === 'number' ? r.minMs : 0);
  }
  if (f.linkSlow !== undefined) num('faults.linkSlow.extraMs', f.linkSlow.extraMs, 0);
  if (f.clockStep !== undefined) {
    num('faults.clockStep.probability', f.clockStep.probability, 0, 1);
    num('faults.clockStep.maxStepMs', f.clockStep.maxStepMs, 0);
  }
  if (f.clockDriftPpm !== undefined) num('faults.clockDriftPpm', f.clockDriftPpm, 0, 100_000);
}

function checkScripted(f: ScriptedFault, path: string, c: ScenarioConfig, at: At, int: Int, num: Num): void {
  if (!ACTIONS.has(f?.action)) return at(`${path}.action`, `one of ${[...ACTIONS].join(', ')}`, f?.action);
  num(`${path}.atMs`, f.atMs, 0);
  switch (f.action) {
    case 'crash-leader':
      int(`${path}.shard`, f.shard, 0);
      if (Number.isInteger(f.shard) && f.shard >= c.cluster?.shardCount) at(`${path}.shard`, `below cluster.shardCount (${c.cluster.shardCount})`, f.shard);
      num(`${path}.downMs`, f.downMs, 0);
      if (f.afterRunsCreated !== undefined) int(`${path}.afterRunsCreated`, f.afterRunsCreated, 1);
      break;
    case 'pause-workers':
      int(`${path}.count`, f.count, 0);
      num(`${path}.durationMs`, f.durationMs, 0);
      break;
    case 'crash-workers':
      int(`${path}.count`, f.count, 0);
      num(`${path}.downMs`, f.downMs, 0);
      break;
    case 'cut-store-link':
    case 'stick-store-link':
    case 'refuse-store-writes':
      int(`${path}.node`, f.node, 0);
      if (Number.isInteger(f.node) && f.node >= c.cluster?.nodes) at(`${path}.node`, `below cluster.nodes (${c.cluster.nodes})`, f.node);
      num(`${path}.durationMs`, f.durationMs, 0);
      break;
    case 'store-failover':
      num(`${path}.durationMs`, f.durationMs, 0);
      break;
  }
}
