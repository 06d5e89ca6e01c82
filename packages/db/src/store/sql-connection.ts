import type { StoreNotice } from '@fenceline/core/store';
import type { Db } from './db';
import * as notices from './notices';
import { guarded, type PoolHolder } from './on-pool';

/** How often at most a standby's answers replace the pool: a promotion takes seconds. */
const STANDBY_RECONNECT_EVERY_MS = 3_000;

/** The store's connection: the pool its statements run on, its notice subscriptions, and their lifecycle. */
export interface SqlConnection extends PoolHolder {
  /** Receives notices published by any process; the subscription carries over a reconnect. Returns an unsubscribe function. */
  subscribe(listener: (notice: StoreNotice) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  /**
   * Replaces the pool with a new one: new statements go to new connections at once, and the
   * old pool is ended without waiting, so a statement still waiting there (on a connection
   * whose server is gone without a word) fails as unavailable instead of waiting forever.
   * The notice listeners are subscribed again on the new pool.
   */
  reconnect(): Promise<void>;
}

/**
 * Owns the pool. `connectAgain` opens a new pool with the same settings, for reconnect();
 * without it there is nothing to reconnect with.
 */
export function sqlConnection(first: Db, connectAgain?: () => Db): SqlConnection {
  let current = first;
  /** When a standby's answer last replaced the pool (wall clock), so a failover replaces it at most every few seconds. */
  let standbyReconnectAtMs = 0;
  /** The notice listeners subscribed, so a reconnect can subscribe them again on the new connections. */
  const listeners = new Map<(notice: StoreNotice) => void, () => Promise<void>>();

  /** Subscribes a listener on a new pool, trying again each second while the store is away; the nodes' reconciliation covers notices missed meanwhile. */
  async function resubscribe(listener: (notice: StoreNotice) => void, db: Db): Promise<void> {
    while (listeners.has(listener) && current === db) {
      try {
        listeners.set(listener, await notices.subscribe(db, listener));
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  const connection: SqlConnection = {
    get db(): Db {
      return current;
    },
    /**
     * A statement was answered by a standby: connections that reached a node in recovery
     * stay there, failing every write, until the pool is replaced. With a multi-host URL the
     * new pool's connections go to the node that is primary now (or fail as unavailable
     * until one is promoted), so a failover cannot leave the store stuck on its old primary.
     */
    standbyAnswered(): void {
      const now = Date.now();
      if (!connectAgain || now - standbyReconnectAtMs < STANDBY_RECONNECT_EVERY_MS) return;
      standbyReconnectAtMs = now;
      void connection.reconnect().catch(() => undefined);
    },
    subscribe: async (listener) => {
      listeners.set(listener, await notices.subscribe(current, listener));
      return async () => {
        const unlisten = listeners.get(listener);
        listeners.delete(listener);
        await unlisten?.();
      };
    },
    close: async () => {
      await current.$client.end({ timeout: 5 });
    },
    reconnect: async () => {
      if (!connectAgain) return;
      const old = current;
      current = connectAgain();
      await old.$client.end({ timeout: 0 }).catch(() => undefined);
      await Promise.all([...listeners.keys()].map((listener) => resubscribe(listener, current)));
    },
  };
  // The lifecycle's calls meet a lost connection as every statement does.
  connection.subscribe = guarded(connection, connection.subscribe);
  connection.close = guarded(connection, connection.close);
  connection.reconnect = guarded(connection, connection.reconnect);
  return connection;
}
