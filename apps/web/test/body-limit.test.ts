import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@fenceline/core';

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
import { POST } from '../src/app/api/trpc/[trpc]/route';
import { serveRoute } from './support/serve-route';

const LIMIT = LIMITS.maxSpecBytes + 64 * 1024;

/** Sends `total` bytes in 64 KiB chunks with no Content-Length (Transfer-Encoding: chunked). */
function sendChunked(url: string, total: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/trpc/dags.save`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    // The server may close the connection once it has refused the body.
    req.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const pump = (): void => {
      while (sent < total) {
        sent += chunk.byteLength;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

describe('console request body limit', () => {
  let server: Awaited<ReturnType<typeof serveRoute>>;
  beforeAll(async () => {
    server = await serveRoute(POST);
  });
  afterAll(async () => {
    await server.close();
  });

  it('refuses a 10 MB chunked body with no session with 413 once the limit is passed', async () => {
    const answer = await sendChunked(server.url, 10 * 1024 * 1024).catch((error: unknown) => ({ status: -1, body: String(error) }));
    expect(answer.status, answer.body).toBe(413);
    expect(answer.body).toContain('TOO_LARGE');
    // The handler stopped reading at the limit: what the socket took in is the limit plus
    // what was in flight, far from the 10 MB sent.
    expect(server.received()).toBeLessThan(LIMIT + 2 * 1024 * 1024);
  });

  it('refuses a declared oversized body without reading it', async () => {
    const res = await fetch(`${server.url}/api/trpc/dags.save`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(LIMIT + 1) });
    expect(res.status).toBe(413);
  });

  it('passes a body under the limit on to the procedures', async () => {
    const res = await fetch(`${server.url}/api/trpc/dags.save`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ json: { spec: {} } }) });
    // No session: the procedure itself answers, so the body was read and parsed.
    expect(res.status).toBe(401);
  });
});
