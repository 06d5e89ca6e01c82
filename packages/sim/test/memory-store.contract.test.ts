import { storeContract } from '@fenceline/core/testing';
import { memoryStore } from '../src/store/memory-store';

// The same contract the SQL store passes, against the in-memory store on a virtual clock:
// advanceMs steps the store's own time, so lease expiry is tested without sleeping.
storeContract('MemoryStore', async () => {
  // Off the round second on purpose: the store stamps manual runs in milliseconds where
  // PostgreSQL stamps microseconds, so a trigger on the exact millisecond of a schedule
  // slot would collide here on (dag_id, scheduled_at) where it practically never does there.
  let nowMs = Date.parse('2025-01-06T00:00:00.000Z') + 123;
  const store = memoryStore({ nowMs: () => nowMs });
  return {
    store,
    advanceMs: async (ms: number) => {
      nowMs += ms;
    },
    teardown: () => store.close(),
  };
});
