import type { Clock, Timers } from '../clock';
import type { NewEvent, NodeStore } from '../store';
import type { NodeConfig } from './config';
import type { NodeMetrics } from './metrics';
import type { LeaderNotifications } from './notifications';
import type { RunTraces } from './run-traces';
import type { WorkerPool } from './worker-pool';

/**
 * What every part of a scheduler node shares (its leadership, dispatch and worker
 * protocol): its identity, store, time, worker pool and metrics, and its ways to record
 * an event or an error. SchedulerNode makes one and hands it to each part.
 */
export interface NodeContext {
  readonly nodeId: string;
  readonly config: NodeConfig;
  readonly store: NodeStore;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly pool: WorkerPool;
  readonly metrics: NodeMetrics;
  emit(event: NewEvent): void;
  error(where: string, err: unknown): void;
  /** Where leaders report run and job ends for notifications; absent when the node delivers none. */
  readonly notifications?: LeaderNotifications;
  /** The spans of the runs and job attempts this node leads; null with tracing off. */
  readonly traces: RunTraces | null;
  /** True once the node's graceful stop began: no new work is taken on. */
  stopped(): boolean;
}
