// What other parts of the repository may use of the scheduler: the worker protocol (its
// type for the worker's client, the router itself for protocol tests), the configuration
// reader, the pause threshold the benchmark reports against, and the form of a worker
// credential (the CLI issues them). The process itself
// starts from main.ts.
export { workerRouter, type WorkerRouter } from './api/worker-router';
export { readSchedulerConfig, type SchedulerConfig } from './config';
export { LONG_PAUSE_MS } from './runtime-metrics';
export { issueWorkerToken, poolProblem } from './api/worker-credentials';
