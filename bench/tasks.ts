import { defineTask } from '@fenceline/worker';

/**
 * The benchmark's job type: a no-op that records when the worker started it (wall clock
 * of this machine, which the store shares), so dispatch latency can be read from the
 * result store as started minus ready.
 */
defineTask('bench', async () => ({ startedAtMs: Date.now() }));
