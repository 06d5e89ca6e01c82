import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { parseDagId, parseWorkerId, type Timers } from '@fenceline/core';
import { SchedulerNode } from '@fenceline/core/engine';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { createSchedulerServer, WorkerAuth } from '@fenceline/scheduler';
import { tracedStore, type TracingSetup } from '@fenceline/telemetry';
import { startTracing } from '@fenceline/telemetry/sdk';
import { Worker } from '@fenceline/worker';
import { ADMIN_URL, eventually } from './support/cluster-fixture';

const timers: Timers = {
  after(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    return () => clearTimeout(t);
  },
};

/** Listens on 127.0.0.1 and keeps the headers of every request: the user's service of an HTTP task. */
async function receiver(): Promise<{ server: Server; url: string; requests: IncomingHttpHeaders[] }> {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    requests.push(req.headers);
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, requests };
}

const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/**
 * One process, the real parts: a scheduler node on PostgreSQL behind its HTTP server, a
 * worker polling it over HTTP, and the OpenTelemetry SDK with its in-memory exporter. The
 * worker's spans find their parent only through the traceparent its lease carried over
 * the wire: the tracing port never uses the process's active context.
 */
describe('tracing: one run end to end', () => {
  const exporter = new InMemorySpanExporter();
  const dbName = `fenceline_it_${randomBytes(4).toString('hex')}`;
  let setup: TracingSetup;
  let store: SqlStore;
  let node: SchedulerNode;
  let auth: WorkerAuth;
  let server: Server;
  let worker: Worker;
  let hook: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    setup = startTracing({ serviceName: 'fenceline-trace-test', spanProcessors: [new SimpleSpanProcessor(exporter)] });
    store = await openStore({ databaseUrl: await createDatabase(ADMIN_URL, dbName), applicationName: 'fenceline-trace-test', max: 6 });
    await store.initCluster(2);
    node = new SchedulerNode({
      nodeId: 'scheduler-1',
      store: tracedStore(store, setup.tracing),
      clock: { nowMs: () => Date.now() },
      timers,
      tracing: setup.tracing,
      config: { shardCount: 2, tickIntervalMs: 100, pollWaitMs: 1_000, eventFlushIntervalMs: 100 },
    });
    await node.start();
    const token = randomBytes(18).toString('base64url');
    auth = new WorkerAuth({ mode: 'dev', devToken: token, store, nowMs: () => Date.now() });
    await auth.start();
    server = createSchedulerServer(node, auth);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hook = await receiver();
    worker = new Worker({
      workerId: parseWorkerId('worker-1'),
      slots: 2,
      pool: 'default',
      labels: [],
      schedulerUrls: [`http://127.0.0.1:${(server.address() as AddressInfo).port}`],
      token,
      shell: { allowed: false, allowedEnv: [], cwdRoot: process.cwd(), killGraceMs: 1_000 },
      pollWaitMs: 1_000,
      shutdownGraceMs: 1_000,
      log: () => undefined,
      tracing: setup.tracing,
    });
    await worker.start();
  });

  afterAll(async () => {
    await worker?.stop();
    await node?.stop();
    server?.closeAllConnections();
    server?.close();
    hook?.server.close();
    await auth?.stop().catch(() => undefined);
    await store?.close();
    await setup?.shutdown();
    await dropDatabase(ADMIN_URL, dbName).catch(() => undefined);
  });

  it("puts the run, its job attempts, the worker's spans and the HTTP call in one tree the called service joins", async () => {
    await store.putDag(
      {
        id: 'traced',
        tasks: [
          { id: 'prepare', type: 'noop' },
          { id: 'call', type: 'http', config: { url: hook.url, method: 'POST', body: 'hello' }, dependsOn: ['prepare'] },
        ],
      },
      2,
    );
    const run = await store.triggerRun(parseDagId('traced'));
    await eventually('the run to succeed', async () => (await store.getRun(run.id)).state === 'succeeded', 30_000, 50);
    const spans = await eventually(
      'the run span to end',
      async () => {
        const finished = exporter.getFinishedSpans();
        return finished.some((s) => s.name === 'fenceline.run' && s.attributes['fenceline.run.id'] === run.id) ? finished : null;
      },
      10_000,
      50,
    );

    const runSpan = spans.find((s) => s.name === 'fenceline.run' && s.attributes['fenceline.run.id'] === run.id)!;
    const traceId = runSpan.spanContext().traceId;
    expect(runSpan.attributes['fenceline.run.state']).toBe('succeeded');
    const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);

    const attempts = inTrace.filter((s) => s.name === 'fenceline.job.attempt');
    expect(attempts.map((a) => a.attributes['fenceline.task.id']).sort()).toEqual(['call', 'prepare']);
    for (const attempt of attempts) {
      expect(parentOf(attempt)).toBe(runSpan.spanContext().spanId);
      expect(attempt.events.map((e) => e.name)).toEqual(['ready', 'leased', 'delivered', 'result']);
      expect(attempt.attributes['fenceline.job.state']).toBe('succeeded');
      expect(attempt.attributes['fenceline.worker.id']).toBe('worker-1');
    }

    const runs = inTrace.filter((s) => s.name === 'fenceline.job.run');
    expect(runs).toHaveLength(2);
    for (const jobRun of runs) {
      const attempt = attempts.find((a) => a.attributes['fenceline.job.id'] === jobRun.attributes['fenceline.job.id']);
      expect(parentOf(jobRun)).toBe(attempt?.spanContext().spanId);
      expect(jobRun.parentSpanContext?.isRemote).toBe(true);
      expect(jobRun.events.map((e) => e.name)).toEqual(['running', 'result']);
    }

    const callRun = runs.find((s) => s.attributes['fenceline.task.id'] === 'call')!;
    const client = inTrace.find((s) => s.name === 'HTTP POST')!;
    expect(parentOf(client)).toBe(callRun.spanContext().spanId);
    expect(client.attributes['http.response.status_code']).toBe(200);

    // The called service was handed the client span's context: its own spans join the trace.
    expect(hook.requests).toHaveLength(1);
    expect(hook.requests[0]!.traceparent).toBe(`00-${traceId}-${client.spanContext().spanId}-01`);

    // The store writes of the hot path and the ticks are traced too, each in its own trace.
    const names = new Set(spans.map((s) => s.name));
    for (const name of ['fenceline.tick', 'store.grantLeasesMany', 'store.completeJobs', 'store.promoteJobsAcross', 'store.finishRunsAcross']) expect(names).toContain(name);
  });
});
