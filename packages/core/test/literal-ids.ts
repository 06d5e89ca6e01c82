import type { DagId, JobId, RunId, WorkerId } from '../src/ids';

// The unit tests name jobs, runs, DAGs and workers with readable literals ('a', 'run-1')
// that no store would issue, and no parser would accept as sequence ids. These casts brand
// such fixture literals; code under test still gets its ids from the parsers or the stores.
export const asJobId = (text: string): JobId => text as JobId;
export const asRunId = (text: string): RunId => text as RunId;
export const asDagId = (text: string): DagId => text as DagId;
export const asWorkerId = (text: string): WorkerId => text as WorkerId;
