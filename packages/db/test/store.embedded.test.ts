import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { storeContract } from '../../core/src/testing/store-contract';
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/index';
import { freshDatabase, sqlHarness } from './harness';

// The embedded server runs when asked for (CI runs it as its own step) or when there is no
// DATABASE_URL, i.e. on a machine where it is the only PostgreSQL the product would use.
const enabled = process.env.FENCELINE_TEST_EMBEDDED === '1' || !process.env.DATABASE_URL;

describe.runIf(enabled)('embedded PostgreSQL', () => {
  let dir: string;
  let server: EmbeddedServer;
  let database: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fenceline-pg-'));
    // As root the server runs as the `postgres` user, which must be able to enter the directory.
    await fs.chmod(dir, 0o755);
    server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
    database = await freshDatabase(server.url);
  });
  afterAll(async () => {
    await database?.drop();
    await server?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  storeContract('embedded PostgreSQL', () => sqlHarness(database.url));
});
