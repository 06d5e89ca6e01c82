import type { RecordedFence } from '../decide';
import { inTransaction, num, type Database } from '../pg/driver';
import { ensureLedger } from '../pg/ledger';

/**
 * Where a receiver keeps the highest fence seen per key. `withKey` runs `body` holding the
 * key's lock (two requests of one key take turns) and keeps the record `body` returns;
 * `null` keeps what was there.
 */
export interface FenceStore {
  withKey<T>(key: string, body: (recorded: RecordedFence | null) => Promise<{ record: RecordedFence | null; value: T }>): Promise<T>;
}

/** The memory store, for tests and single-process services: lost when the process ends. */
export function memoryFenceStore(): FenceStore & { entries(): Map<string, RecordedFence> } {
  const records = new Map<string, RecordedFence>();
  const tails = new Map<string, Promise<unknown>>();
  return {
    entries: () => new Map(records),
    async withKey(key, body) {
      const before = tails.get(key) ?? Promise.resolve();
      let release!: () => void;
      const mine = new Promise<void>((resolve) => (release = resolve));
      const tail = before.then(() => mine);
      tails.set(key, tail);
      await before;
      try {
        const { record, value } = await body(records.get(key) ?? null);
        if (record) records.set(key, record);
        return value;
      } finally {
        release();
        if (tails.get(key) === tail) tails.delete(key);
      }
    },
  };
}

/** The PostgreSQL store's default table: its own, apart from the transaction helper's ledger. */
export const DEFAULT_RECEIVER_TABLE = 'fenceline_receiver_fences';

/**
 * The PostgreSQL store: the ledger table in the service's database. Each request holds its
 * key's row lock (and one pooled connection) in a transaction until its answer is sent, so
 * give the pool room for the requests you serve at once.
 */
export function postgresFenceStore(db: Database, options: { table?: string } = {}): FenceStore {
  return {
    async withKey(key, body) {
      const table = await ensureLedger(db, options.table ?? DEFAULT_RECEIVER_TABLE);
      return inTransaction(db, async (conn) => {
        // A new key is inserted with fence -1, meaning "nothing recorded", and rolled back
        // with the transaction unless the body records something.
        const [row] = await conn.query(
          `insert into ${table} as l (key, fence) values ($1::text, -1) on conflict (key) do update set fence = l.fence returning fence, applied_fence`,
          [key],
        );
        const fence = num(row!.fence);
        const recorded = fence < 0 ? null : { fence, appliedFence: row!.applied_fence == null ? null : num(row!.applied_fence) };
        const { record, value } = await body(recorded);
        const keep = record ?? recorded;
        if (keep === null) {
          await conn.query(`delete from ${table} where key = $1::text`, [key]);
        } else {
          await conn.query(
            `update ${table} set fence = $2::bigint, applied_fence = $3::bigint, applied_at = case when $3::bigint is distinct from applied_fence then now() else applied_at end, updated_at = now() where key = $1::text`,
            [key, keep.fence, keep.appliedFence],
          );
        }
        return value;
      });
    },
  };
}
