import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId } from '@fenceline/core';
import { eventually, startFixture, type Fixture } from './support/cluster-fixture';

/** One exported span as OTLP/JSON carries it, with the service that sent it. */
interface ExportedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
}

type OtlpBody = {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeSpans?: { spans?: { name: string; traceId: string; spanId: string; parentSpanId?: string }[] }[];
  }[];
};

/** A stand-in OTLP/HTTP collector: it keeps every span the processes export to /v1/traces. */
async function collector(): Promise<{ server: Server; url: string; spans: ExportedSpan[] }> {
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpBody;
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) spans.push({ service, name: s.name, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '' });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

/**
 * The real processes, configured only by the environment a user would set: both export
 * their spans over OTLP/HTTP, and the log lines each prints about the job carry the same
 * trace id as the spans and as the traceparent the called service received.
 */
describe('cluster: traces and logs of the real processes', () => {
  let f: Fixture;
  let otlp: Awaited<ReturnType<typeof collector>>;
  const traceparents: string[] = [];
  const service = createServer((req, res) => {
    traceparents.push(String(req.headers.traceparent));
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  let serviceUrl = '';

  beforeAll(async () => {
    otlp = await collector();
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/hook`;
    f = await startFixture({
      schedulers: 1,
      workers: 1,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100', FENCELINE_LOG_LEVEL: 'debug' },
    });
  });
  afterAll(async () => {
    await f?.stop();
    service.close();
    otlp?.server.close();
  });

  it('exports one trace from the scheduler and the worker, and both log the job under its trace id', async () => {
    await f.store.putDag({ id: 'traced-logs', tasks: [{ id: 'call', type: 'http', config: { url: serviceUrl } }] }, 4);
    const run = await f.store.triggerRun(parseDagId('traced-logs'));
    const [job] = await eventually(
      'the job to succeed',
      async () => {
        const jobs = await f.store.listJobs(run.id);
        return jobs.length === 1 && jobs[0]!.state === 'succeeded' ? jobs : null;
      },
      60_000,
    );
    expect(traceparents).toHaveLength(1);
    const traceId = traceparents[0]!.split('-')[1]!;

    const spans = await eventually(
      'both processes to export the trace',
      async () => {
        const inTrace = otlp.spans.filter((s) => s.traceId === traceId);
        return inTrace.some((s) => s.name === 'fenceline.run') && inTrace.some((s) => s.name === 'HTTP GET') ? inTrace : null;
      },
      20_000,
    );
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['fenceline-scheduler', 'fenceline-worker']));
    const attempt = spans.find((s) => s.name === 'fenceline.job.attempt')!;
    expect(spans.find((s) => s.name === 'fenceline.job.run')?.parentSpanId).toBe(attempt.spanId);

    const linesAbout = (proc: string) => (f.cluster.procs.get(proc)?.logs ?? []).filter((l) => l.job_id === job!.id);
    const scheduler = linesAbout('scheduler-1');
    const worker = linesAbout('worker-1');
    expect(scheduler.map((l) => l.msg)).toContain('lease:granted');
    expect(worker.length).toBeGreaterThan(0);
    for (const line of [...scheduler, ...worker]) {
      expect(line.trace_id).toBe(traceId);
      expect(line.run_id).toBe(run.id);
    }
    expect(scheduler.find((l) => l.msg === 'lease:granted')?.span_id).toBe(attempt.spanId);
  });
});
