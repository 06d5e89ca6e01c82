// What other parts of the repository may use of the scheduler: the worker protocol (its
// type for the worker's client, the router itself for protocol tests), the configuration
// reader, the pause threshold the benchmark reports against, the form of a worker
// credential (the CLI issues them), and the HTTP server with its worker authentication
// (for tests that run a node in their own process, as the trace test does). The process
// itself starts from main.ts.
export { workerRouter, type WorkerRouter } from './api/worker-router';
export { readSchedulerConfig, type SchedulerConfig } from './config';
export { LONG_PAUSE_MS } from './runtime-metrics';
export { issueWorkerToken } from './api/worker-credentials';
export { createSchedulerServer } from './http';
export { WorkerAuth } from './api/worker-auth';
