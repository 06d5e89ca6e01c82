/**
 * The worker's wire contract: the type of the worker protocol's router, which the worker's
 * typed client is built from. It is a type only, and it must come from here: tRPC infers a
 * router's input and output types from the procedures themselves, so a copy declared
 * elsewhere could drift from what the scheduler answers. The input schemas it infers from
 * are core's (jobIdSchema, workerOfferSchema, jobOutputSchema and the rest). The worker
 * imports nothing else of the scheduler, and only `import type` of this entry (lint).
 */
export type { WorkerRouter } from './api/worker-router';
