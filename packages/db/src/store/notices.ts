import { sql, type SQL } from 'drizzle-orm';
import type { StoreNotice } from '@fenceline/core/store';
import { rows, type Db } from './db';

/** Every process listens on this one channel; the payload says what happened. */
export const NOTICE_CHANNEL = 'fenceline';

/** A pg_notify statement; inside a transaction the notice is delivered only if it commits. */
export function noticeSql(notice: StoreNotice): SQL {
  return sql`select pg_notify(${NOTICE_CHANNEL}, ${JSON.stringify(notice)})`;
}

export async function notify(db: Db, notice: StoreNotice): Promise<void> {
  await rows(db, noticeSql(notice));
}

/**
 * LISTENs on the notice channel over postgres.js's dedicated listener connection, which
 * it re-establishes (and re-LISTENs) by itself after a connection loss. Payloads that are
 * not notices (another tool sharing the channel) are ignored rather than thrown.
 */
export async function subscribe(db: Db, listener: (notice: StoreNotice) => void): Promise<() => Promise<void>> {
  const subscription = await db.$client.listen(NOTICE_CHANNEL, (payload) => {
    let notice: StoreNotice;
    try {
      notice = JSON.parse(payload) as StoreNotice;
    } catch {
      return;
    }
    if (notice && typeof notice === 'object' && typeof notice.kind === 'string') listener(notice);
  });
  return async () => {
    await subscription.unlisten();
  };
}
