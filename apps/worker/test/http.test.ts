import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fenced, memoryFenceStore } from '@fenceline/effects';
import { runHttp } from '../src/handlers/http';
import type { TaskContext, UpstreamOutputs } from '../src/task';

function context(signal = new AbortController().signal, params: TaskContext['params'] = {}, outputs: UpstreamOutputs = {}): TaskContext & { lines: string[] } {
  const lines: string[] = [];
  return {
    jobId: '7',
    runId: '1',
    dagId: 'd',
    taskId: 't',
    attempt: 1,
    fence: 42,
    effectKey: 'd/1/t',
    params,
    upstream: async () => outputs,
    signal,
    log: (m) => lines.push(m),
    checkFence: async () => undefined,
    reportEffect: () => undefined,
    lines,
  };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** What runHttp threw, as an Error. */
async function failure(config: Record<string, unknown>, ctx = context()): Promise<Error> {
  const outcome = await runHttp(config, ctx).then(
    () => null,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(Error);
  return outcome as Error;
}

describe('worker: http jobs', () => {
  let port = 0;
  let closedPort = 0;
  let silentPort = 0;
  const server = createServer((req, res) => {
    res.statusCode = req.url === '/broken' ? 500 : 200;
    if (req.url?.startsWith('/echo')) {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => res.end(JSON.stringify({ url: req.url, region: req.headers['x-region'], body })));
      return;
    }
    res.end(`fence ${req.headers['x-fenceline-fence']} key ${req.headers['x-fenceline-effect-key']}`);
  });
  // Accepts connections and never answers, as a hung service does.
  const silent = createServer(() => undefined);
  beforeAll(async () => {
    port = await listen(server);
    silentPort = await listen(silent);
    const probe = createServer();
    closedPort = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
  });
  afterAll(async () => {
    silent.closeAllConnections();
    await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => silent.close(r))]);
  });

  it('succeeds on an expected status, sending the fence and the effect key', async () => {
    const out = await runHttp({ url: `http://127.0.0.1:${port}/` }, context());
    expect(out).toEqual({ status: 200, body: 'fence 42 key d/1/t' });
  });

  it('fills {{params.NAME}} in the url (URL-encoded), the headers and the body', async () => {
    const params = { region: 'eu west', day: '2026/12/02', batch: 3 };
    const out = (await runHttp(
      {
        method: 'POST',
        url: `http://127.0.0.1:${port}/echo/{{params.day}}?r={{ params.region }}`,
        headers: { 'x-region': '{{params.region}}' },
        body: '{"batch": {{params.batch}}}',
      },
      context(undefined, params),
    )) as { body: string };
    expect(JSON.parse(out.body)).toEqual({ url: '/echo/2026%2F12%2F02?r=eu%20west', region: 'eu west', body: '{"batch": 3}' });
  });

  it('never lets a param move the request to another path, wherever it stands in the url', async () => {
    const values = ['.', '..', '...', '../admin', '..%2F..', '%2e%2e', '.%2e', 'a/../b', '?x=1', '#frag', 'ok'];
    const templates = ['/echo/{{params.p}}', '/echo/{{params.p}}/tail', '/echo/x{{params.p}}', '/echo/{{params.p}}y/tail', '/echo/{{params.p}}?q=1', '/echo/q?v={{params.p}}'];
    for (const template of templates) {
      for (const p of values) {
        let url: string;
        try {
          const out = (await runHttp({ method: 'POST', url: `http://127.0.0.1:${port}${template}`, body: '' }, context(undefined, { p }))) as { body: string };
          url = (JSON.parse(out.body) as { url: string }).url;
        } catch (err) {
          // Refused only where the value is a whole segment of only dots.
          expect((err as Error).name, `${template} ${p}`).toBe('NonRetryableError');
          expect(['.', '..'], `${template} ${p}`).toContain(p);
          continue;
        }
        // The request kept the path the template fixed, and its segment count.
        const fixed = template.split('{{')[0]!;
        expect(url.startsWith(fixed), `${template} with ${p} went to ${url}`).toBe(true);
        const segments = (u: string) => u.split(/[?#]/)[0]!.split('/').length;
        expect(segments(url), `${template} with ${p} went to ${url}`).toBe(segments(template));
      }
    }
  });

  it('keeps the fixed prefix and segment count of any template, however placeholders and dots stand together', async () => {
    // A segment is built from placeholders and literal text, dots and encoded dots among it,
    // so adjacent placeholders and a placeholder beside a dot are generated, not listed.
    const piece = fc.constantFrom('{{params.a}}', '{{params.b}}', '{{ params.c }}', '.', '%2e', '%2E', 'x');
    // Each generated segment holds a placeholder: a template's own fixed `..` is its author's to write.
    const segment = fc
      .array(piece, { minLength: 1, maxLength: 4 })
      .filter((parts) => parts.some((part) => part.includes('{{')))
      .map((parts) => parts.join(''));
    const template = fc
      .tuple(fc.array(segment, { minLength: 1, maxLength: 3 }), fc.boolean(), fc.boolean())
      .map(([segments, tail, query]) => `/echo/${segments.join('/')}${tail ? '/tail' : ''}${query ? '?q={{params.a}}' : ''}`);
    const value = fc.oneof(fc.constantFrom('', '.', '..', '%2e', '/', '../', '?', '#', '\\', 'ok'), fc.string({ maxLength: 4 }));
    const pathOf = (u: string) => u.split(/[?#]/)[0]!;
    await fc.assert(
      fc.asyncProperty(template, value, value, value, async (t, a, b, c) => {
        const params = { a, b, c };
        // The oracle: fill naively, and see whether a segment holding a placeholder decodes to a dot segment.
        const naive = pathOf(t)
          .split('/')
          .map((s) => ({
            placeholder: s.includes('{{'),
            decoded: decodeURIComponent(s.replace(/\{\{\s*params\.(\w+)\s*\}\}/g, (_, n: 'a' | 'b' | 'c') => encodeURIComponent(params[n]))),
          }));
        const moves = naive.some((s) => s.placeholder && (s.decoded === '.' || s.decoded === '..'));
        const outcome = await runHttp({ method: 'POST', url: `http://127.0.0.1:${port}${t}`, body: '' }, context(undefined, params)).then(
          (out) => (JSON.parse((out as { body: string }).body) as { url: string }).url,
          (err: Error) => err,
        );
        if (moves) {
          expect(outcome, `${t} with ${JSON.stringify(params)}`).toBeInstanceOf(Error);
          expect((outcome as Error).name).toBe('NonRetryableError');
          expect((outcome as Error).message).toMatch(/^url: the path segment filled from \{\{params\.[abc]\}\}/);
          return;
        }
        expect(typeof outcome, `${t} with ${JSON.stringify(params)}: ${String(outcome)}`).toBe('string');
        const url = outcome as string;
        expect(url.startsWith(t.split('{{')[0]!), `${t} went to ${url}`).toBe(true);
        expect(pathOf(url).split('/').length, `${t} went to ${url}`).toBe(pathOf(t).split('/').length);
      }),
      { numRuns: 300 },
    );
  });

  it('fails without retrying when a placeholder names a parameter the run has no value for', async () => {
    const err = await failure({ url: `http://127.0.0.1:${port}/echo/{{params.missing}}` });
    expect(err.name).toBe('NonRetryableError');
    expect(err.message).toBe('{{params.missing}} names a parameter this run has no value for');
  });

  it('fails on an unexpected status, naming it', async () => {
    const err = await failure({ url: `http://127.0.0.1:${port}/broken` });
    expect(err.message).toBe(`GET http://127.0.0.1:${port}/broken answered 500, expected one of 200, 201, 202, 204`);
  });

  it('says a connection was refused, and by which host and port', async () => {
    const err = await failure({ url: `http://127.0.0.1:${closedPort}/x` });
    expect(err.message).toBe(`GET http://127.0.0.1:${closedPort}/x: connection refused by 127.0.0.1:${closedPort}: nothing listens there (ECONNREFUSED)`);
  });

  it('says a DNS name was not found, or that the resolver did not answer', async () => {
    // The .invalid top-level domain never resolves (RFC 6761), so this fails at once offline
    // too. Which answer comes depends on the machine: a resolver says "not found", while a
    // machine with no resolver at all (an isolated network namespace) gets "try again".
    const err = await failure({ method: 'POST', url: 'http://no-such-service.invalid:8080/hook', body: '{}' });
    expect([
      'POST http://no-such-service.invalid:8080/hook: DNS name not found: no-such-service.invalid (for no-such-service.invalid:8080) (ENOTFOUND)',
      'POST http://no-such-service.invalid:8080/hook: DNS lookup of no-such-service.invalid failed for now (no answer from the resolver), connecting to no-such-service.invalid:8080 (EAI_AGAIN)',
    ]).toContain(err.message);
  });

  it('says a TLS handshake failed, with the host and port', async () => {
    // Plain HTTP on the other end: the TLS handshake reads a reply that is not TLS.
    const err = await failure({ url: `https://127.0.0.1:${port}/` });
    expect(err.message).toMatch(new RegExp(`^GET https://127\\.0\\.0\\.1:${port}/: TLS error with 127\\.0\\.0\\.1:${port}: .+ \\(ERR_SSL_[A-Z_]+\\)$`));
    expect(err.message).not.toContain('\n');
  });

  it('says which host did not answer before the job was stopped for its timeout', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('timed out after 200 ms')), 200);
    const err = await failure({ url: `http://127.0.0.1:${silentPort}/slow` }, context(controller.signal));
    expect(err.message).toBe(`GET http://127.0.0.1:${silentPort}/slow: no answer from 127.0.0.1:${silentPort} before the job was stopped: timed out after 200 ms`);
    // The worker reports this message for a stopped job because it carries the stop's reason.
    expect(err.cause).toBe(controller.signal.reason);
  });
});

describe('worker: http jobs to a fenced receiver', () => {
  it('is fenced by a receiver guard through the headers it sends: a later attempt finds the effect applied, an earlier one is refused', async () => {
    let applied = 0;
    const receiver = createServer(fenced((_req, res) => void res.end(`applied ${++applied}`), { store: memoryFenceStore() }));
    const port = await listen(receiver);
    try {
      const url = `http://127.0.0.1:${port}/charge`;
      const attempt = (fence: number) => ({ ...context(), fence });
      expect(await runHttp({ method: 'POST', url }, attempt(42))).toEqual({ status: 200, body: 'applied 1' });
      expect(await runHttp({ method: 'POST', url }, attempt(44))).toMatchObject({ status: 200, body: expect.stringContaining('already-applied') });
      const stale = await runHttp({ method: 'POST', url }, attempt(43)).catch((err: unknown) => err as Error);
      expect(stale).toBeInstanceOf(Error);
      expect((stale as Error).message).toBe(`POST ${url} answered 409, expected one of 200, 201, 202, 204`);
      expect(applied).toBe(1);
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });
});
