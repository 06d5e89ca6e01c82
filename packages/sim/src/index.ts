export { runScenario, type RunReport, type ScenarioReport, type ScenarioProgress, type RunScenarioOptions, type ScenarioFile } from './scenario/run';
export { SCENARIOS } from './scenarios';
export { resolveScenario, merge, DEFAULT_SCENARIO, type ScenarioConfig, type DagGroup, type FaultConfig, type ScriptedFault } from './scenario/config';
export { memoryStore, type MemoryStore, type MemoryStoreOptions, type MemoryRules, type MemJob, type MemRun } from './store/memory-store';
export type { StoreWrite, StoreObserver } from './store/records';
export { Checker, INVARIANTS, type InvariantId, type Violation } from './check/checker';
export { runWorld, type WorldResult, type Outcome, type Progress } from './world/world';
export { Simulation } from './engine/simulation';
export { Rng } from './engine/random';
export { renderHtml } from './report/html';
export {
  ReplayRecorder,
  defaultReplayDag,
  REPLAY_LIMITS,
  type DagReplay,
  type ReplayTransition,
  type ReplayRefusal,
  type ReplayRun,
  type ReplayCause,
  type ReplayOptions,
} from './report/replay';
