import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startFixture, type Fixture } from './support/cluster-fixture';
import { parseDagId } from '@fenceline/core';

const SHARDS = 4;

describe('cluster: an http job that fails', () => {
  let f: Fixture;
  // Accepts connections and never answers, as a hung service does.
  const silent = createServer(() => undefined);
  let silentPort = 0;
  let closedPort = 0;
  beforeAll(async () => {
    silentPort = await new Promise<number>((resolve) => silent.listen(0, '127.0.0.1', () => resolve((silent.address() as AddressInfo).port)));
    const probe = createServer();
    closedPort = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as AddressInfo).port)));
    await new Promise((resolve) => probe.close(resolve));
    f = await startFixture({ schedulers: 1, workers: 1 });
  });
  afterAll(async () => {
    silent.closeAllConnections();
    silent.close();
    await f?.stop();
  });

  it('records the cause and host:port as the job error, for a refused connection and a timeout', async () => {
    await f.store.putDag(
      {
        id: 'http-failures',
        tasks: [
          { id: 'refused', type: 'http', config: { url: `http://127.0.0.1:${closedPort}/hook` }, retries: 0 },
          { id: 'hung', type: 'http', config: { url: `http://127.0.0.1:${silentPort}/slow` }, retries: 0, timeoutMs: 500 },
        ],
      },
      SHARDS,
    );
    const run = await f.store.triggerRun(parseDagId('http-failures'));
    const jobs = await eventually(
      'both jobs to fail',
      async () => {
        const list = await f.store.listJobs(run.id);
        return list.length === 2 && list.every((j) => j.state === 'failed') ? list : null;
      },
      60_000,
    );
    const errorOf = (task: string) => jobs.find((j) => j.taskId === task)!.lastError;
    expect(errorOf('refused')).toBe(`GET http://127.0.0.1:${closedPort}/hook: connection refused by 127.0.0.1:${closedPort}: nothing listens there (ECONNREFUSED)`);
    expect(errorOf('hung')).toBe(`GET http://127.0.0.1:${silentPort}/slow: no answer from 127.0.0.1:${silentPort} before the job was stopped: timed out after 500 ms`);
  });
});
