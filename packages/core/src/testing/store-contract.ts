import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../store';
import type { EventReadStore } from './event-reads';
import { badBytesContract } from './store-contract/bad-bytes';
import { batchJudgingContract } from './store-contract/batch-judging';
import { ContractContext } from './store-contract/context';
import { auditLogContract } from './store-contract/audit-log';
import { backfillsContract } from './store-contract/backfills';
import { credentialsContract } from './store-contract/credentials';
import { dagsContract } from './store-contract/dags';
import { leadershipContract } from './store-contract/leadership';
import { leaseContract } from './store-contract/leases';
import { resourcesContract } from './store-contract/resources';
import { lendingContract } from './store-contract/lending';
import { notificationReadsContract } from './store-contract/notification-reads';
import { notificationsContract } from './store-contract/notifications';
import { notificationWatchContract } from './store-contract/notification-watch';
import { peopleContract } from './store-contract/people';
import { runParamsContract } from './store-contract/run-params';
import { runsContract } from './store-contract/runs';
import { runActionsContract } from './store-contract/run-actions';
import { runPagesContract } from './store-contract/run-pages';
import { attemptsContract } from './store-contract/attempts';
import { effectReportsContract } from './store-contract/effect-reports';
import { logChunksContract } from './store-contract/log-chunks';
import { sessionsContract } from './store-contract/sessions';
import { ticksContract } from './store-contract/ticks';
import { triggersContract } from './store-contract/triggers';
import { upstreamOutputsContract } from './store-contract/upstream-outputs';
import { workerWritesContract } from './store-contract/worker-writes';
import { workersAndEventsContract } from './store-contract/workers-and-events';

export * from './store-contract/one-leader';
export type { EventQuery, EventReadStore } from './event-reads';

/**
 * The Store contract as behaviours, exercised only through the Store interface so the SQL
 * store and the simulator's in-memory store pass the same suite.
 *
 * `setup` runs before every test and `teardown` after it. `advanceMs` moves store time
 * forward: the SQL store sleeps, a virtual-clock store steps its clock. Tests keep lease
 * TTLs short so the SQL run stays fast, and they never assume a store is empty: each test
 * works on its own DAGs, in its own shards, with its own node and worker names, so a
 * store shared by the tests of one file is fine.
 */
export interface StoreHarness {
  /** The store under test, with the test-only read of its event log. */
  store: Store & EventReadStore;
  advanceMs(ms: number): Promise<void>;
  teardown(): Promise<void>;
}

/**
 * Registers the whole contract for one store. Its parts live in store-contract/, along the
 * Store's roles: leadership and workers-and-events (cluster, events, notices), dags,
 * triggers, run-params and backfills (catalogue, and the leader's backfill steps), ticks, runs
 * and leases (leader), worker-writes, upstream-outputs, bad-bytes, sessions and batch-judging
 * (worker protocol), credentials (worker credentials), people (users, sessions,
 * API tokens) and audit-log.
 */
export function storeContract(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`${name}: store contract`, () => {
    const c = new ContractContext();

    beforeEach(async () => {
      c.use(await setup());
    });
    afterEach(async () => {
      await c.h.teardown();
    });

    leaseContract(c);
    resourcesContract(c);
    lendingContract(c);
    notificationsContract(c);
    notificationReadsContract(c);
    notificationWatchContract(c);
    workerWritesContract(c);
    upstreamOutputsContract(c);
    badBytesContract(c);
    sessionsContract(c);
    batchJudgingContract(c);
    leadershipContract(c);
    ticksContract(c);
    runsContract(c);
    runActionsContract(c);
    runPagesContract(c);
    attemptsContract(c);
    effectReportsContract(c);
    logChunksContract(c);
    dagsContract(c);
    triggersContract(c);
    runParamsContract(c);
    backfillsContract(c);
    workersAndEventsContract(c);
    peopleContract(c);
    auditLogContract(c);
    credentialsContract(c);
  });
}
