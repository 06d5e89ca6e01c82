import type { TestProject } from 'vitest/node';
import { acquireServer, type AcquiredServer, type ServerSource } from '@fenceline/db';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the run's PostgreSQL came from, so the embedded server's own tests run when it is the one in use. */
    databaseSource: ServerSource;
  }
}

/**
 * Vitest global setup of every project that needs PostgreSQL: one server for the whole
 * run, whichever projects run. DATABASE_URL when set; else the server on 127.0.0.1:5432
 * when one answers; else an embedded PostgreSQL in a temporary directory, stopped and
 * removed when the run ends (also on failure and Ctrl-C). FENCELINE_TEST_EMBEDDED=1 asks
 * for the embedded server even when another is there.
 *
 * Its URL goes into process.env.DATABASE_URL before any test worker starts; the workers
 * inherit it, and so do the processes the tests spawn.
 */

interface Shared {
  server: Promise<AcquiredServer>;
  users: number;
}

// Each project loads this module on its own, so the one server is kept on the process.
const KEY = Symbol.for('fenceline.test.databaseServer');
const holder = globalThis as { [KEY]?: Shared };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (holder[KEY] ??= {
    server: acquireServer({ embedded: process.env.FENCELINE_TEST_EMBEDDED === '1' }),
    users: 0,
  });
  shared.users++;
  const server = await shared.server;
  if (server.source === 'embedded' && shared.users === 1) {
    const why = process.env.FENCELINE_TEST_EMBEDDED === '1' ? 'FENCELINE_TEST_EMBEDDED=1' : 'no DATABASE_URL and no PostgreSQL at 127.0.0.1:5432';
    console.log(`[tests] ${why}: started an embedded PostgreSQL for this run at ${server.url}`);
  }
  process.env.DATABASE_URL = server.url;
  project.provide('databaseSource', server.source);
  return async () => {
    if (--shared.users > 0) return;
    delete holder[KEY];
    await server.release();
  };
}
