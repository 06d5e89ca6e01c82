export * from './batcher';
export * from './config';
export * from './metrics';
export * from './worker-pool';
export * from './shard-leader';
export * from './scheduler-node';
export * from './leader-writes';
export * from './revocation';
export type { RegisterAnswer, RegisterInput, WorkerSessionRef } from './worker-protocol';
