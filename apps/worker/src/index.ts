export { schedulerClient, typedRefusal, type SchedulerClient } from './client';
export { defineTask, NonRetryableError, type TaskContext, type TaskHandler, type UpstreamOutputs } from './task';
export { Worker, type WorkerOptions } from './worker';
