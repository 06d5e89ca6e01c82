import { createInsertSchema, createSelectSchema } from 'drizzle-zod';
import { clusterConfig, schedulerNodes, shardLeases } from './shards';
import { dags, dagVersions } from './dags';
import { jobs, runs } from './runs';
import { results } from './results';
import { workers } from './workers';
import { events } from './events';

export { clusterConfig, schedulerNodes, shardLeases, dags, dagVersions, jobs, runs, results, workers, events };

/** Every table, for drizzle(client, { schema }) and drizzle-kit. */
export const schema = { clusterConfig, schedulerNodes, shardLeases, dags, dagVersions, runs, jobs, results, workers, events };

// Zod schemas derived from the tables, for inputs that mirror a row (the console's
// forms, an import tool). The store's own inputs are typed by the Store interface.
export const workerInsertSchema = createInsertSchema(workers);
export const workerSelectSchema = createSelectSchema(workers);
export const eventInsertSchema = createInsertSchema(events);
export const eventSelectSchema = createSelectSchema(events);
export const runSelectSchema = createSelectSchema(runs);
export const jobSelectSchema = createSelectSchema(jobs);
export const resultSelectSchema = createSelectSchema(results);
export const shardLeaseSelectSchema = createSelectSchema(shardLeases);
