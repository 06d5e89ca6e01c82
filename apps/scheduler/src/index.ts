export type { WorkerRouter } from './api/worker-router';
