/**
 * Read-only queries behind the operations console (apps/web). Writes from the console go
 * through the Store interface (putDag, triggerRun, setPaused), never through this module.
 */
export { type ConsoleDb } from './sql';
export { poolSnapshot, capOf, type PoolSnapshot } from './pool';
export { overview, type Overview, type ShardHealth } from './overview';
export { dagListPage, type DagListPage, type DagListRow } from './dag-list';
export { fairShare, shareHistory, type DagShare, type FairShareSnapshot, type PoolShare, type ShareHistory } from './fair-share';
export { liveJobTypes, type LiveJobTypes } from './job-types';
export { workersSnapshot, type WorkersSnapshot, type WorkerView, type WorkerLease, type RevokedLease } from './workers';
export { shardsSnapshot, type ShardsSnapshot, type ShardView, type LeadershipChange, type NodeStoreHealth } from './shards';
export { runTimeline, type RunTimeline, type JobTimeline, type Attempt, type TimelineInterval } from './timeline';
export { liveOffers, offerOfMeta, poolsOf, type LiveOffers, type LiveOffer, type PoolSummary } from './routing';
export { limitWaiters, type LimitWaiter } from './limits';
export { attemptHistory, type AttemptHistory } from './attempt-history';
export { runGrid, MAX_GRID_RUNS, type RunGrid, type GridRun, type GridTask } from './run-grid';
export { runDurations, median, type RunDurations } from './run-durations';
