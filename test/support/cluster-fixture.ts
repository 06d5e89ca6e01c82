import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { DagSpecInput } from '@fenceline/core';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { Cluster, FAST_TTL_ENV, REPO_ROOT, sleep, type ClusterOptions } from '../../tools/start/cluster';
import { registerSecret, runLogFile } from './run-logs';

export const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Short lease times, so failures and takeovers happen within seconds in tests. */
export const FAST_ENV = { ...FAST_TTL_ENV, FENCELINE_LOG_LEVEL: 'info' };

export interface Fixture {
  cluster: Cluster;
  /** The SQL store itself, so a test can also write around the API (as an older release or an operator would). */
  store: SqlStore;
  databaseUrl: string;
  stop(): Promise<void>;
}

let nextPort = 17400 + Math.floor(Math.random() * 2000);

/** A fresh database and a real cluster of scheduler and worker processes on it. */
export async function startFixture(opts: Partial<ClusterOptions> & { schedulers: number; workers: number }): Promise<Fixture> {
  const name = `fenceline_it_${randomBytes(4).toString('hex')}`;
  const databaseUrl = await createDatabase(ADMIN_URL, name);
  const store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 4 });
  await store.initCluster(Number(FAST_ENV.FENCELINE_SHARDS));
  const basePort = nextPort;
  nextPort += 10;
  const cluster = new Cluster({
    databaseUrl,
    workerToken: randomBytes(18).toString('base64url'),
    basePort,
    output: process.env.FENCELINE_TEST_VERBOSE ? 'prefixed' : 'quiet',
    tasksModule: join(REPO_ROOT, 'examples', 'tasks.ts'),
    tee: runLogFile,
    ...opts,
    env: { ...FAST_ENV, ...opts.env },
  });
  registerSecret("the fixture cluster's worker token", cluster.opts.workerToken);
  await cluster.start();
  return {
    cluster,
    store,
    databaseUrl,
    async stop() {
      await cluster.stop(5000);
      await store.close();
      await dropDatabase(ADMIN_URL, name).catch(() => undefined);
    },
  };
}

export async function loadExample(file: string): Promise<DagSpecInput> {
  const text = await readFile(join(REPO_ROOT, 'examples', file), 'utf8');
  return (file.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as DagSpecInput;
}

/** Polls `probe` until it returns a truthy value, or fails with the last value seen. */
export async function eventually<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}
