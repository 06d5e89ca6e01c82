// What other parts of the repository may use of the scheduler: the worker protocol (the
// router itself for protocol tests; the worker takes its type from the ./wire entry), the
// configuration reader, the pause threshold the benchmark reports against, and the HTTP
// server with its worker authentication (for tests that run a node in their own process,
// as the trace test does). The form of a worker credential is @fenceline/db's
// (worker-credentials), where the CLI that issues them and this app both import it. The
// process itself starts from main.ts.
export { workerRouter, type WorkerRouter } from './api/worker-router';
export { readSchedulerConfig, type SchedulerConfig } from './config';
export { LONG_PAUSE_MS } from './runtime-metrics';
export { createSchedulerServer } from './http';
export { WorkerAuth } from './api/worker-auth';
