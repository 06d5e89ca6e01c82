import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SEQUENCE_ID } from '@fenceline/core';
import { startApiHttp } from './support/api-http';

/**
 * Every HTTP API path that names a run action, backfill, channel, rule or notification by
 * its sequence id holds it to the core's one rule: 0, a leading zero and anything above
 * the largest bigint are refused as bad input naming the path's id, and nothing reads the
 * store with them; the largest bigint is a well-formed id that names nothing.
 */

let api: Awaited<ReturnType<typeof startApiHttp>>;
let admin: string;

beforeAll(async () => {
  api = await startApiHttp();
  admin = await api.tokenFor('admin');
});
afterAll(async () => {
  await api?.stop();
});

const PATHS: ['GET' | 'POST' | 'DELETE', (id: string) => string][] = [
  ['GET', (id) => `/actions/${id}`],
  ['GET', (id) => `/backfills/${id}`],
  ['POST', (id) => `/backfills/${id}/cancel`],
  ['DELETE', (id) => `/notifications/channels/${id}`],
  ['DELETE', (id) => `/notifications/rules/${id}`],
  ['POST', (id) => `/notifications/${id}/retry`],
];

async function send(method: string, path: string): Promise<{ status: number; body: { code?: string; issues?: { field: string; message: string }[] } }> {
  const res = await fetch(`${api.url}${path}`, { method, headers: { authorization: `Bearer ${admin}` } });
  return { status: res.status, body: (await res.json()) as { code?: string; issues?: { field: string; message: string }[] } };
}

describe('HTTP API: sequence ids in paths', () => {
  it('refuses 0, a leading zero and values above the largest bigint, naming the id', async () => {
    for (const [method, path] of PATHS) {
      for (const bad of ['0', '01', '9223372036854775808', '1'.repeat(20), 'abc']) {
        const answer = await send(method, path(bad));
        expect(answer.status, `${method} ${path(bad)}`).toBe(400);
        expect(answer.body.code).toBe('INVALID_INPUT');
        expect(answer.body.issues?.map((i) => i.field)).toEqual(['id']);
      }
    }
  });

  it('takes the largest bigint as an id, which names nothing yet', async () => {
    for (const [method, path] of PATHS) {
      const answer = await send(method, path(MAX_SEQUENCE_ID));
      expect(answer.status, `${method} ${path(MAX_SEQUENCE_ID)}`).toBe(404);
      expect(answer.body.code).toBe('NOT_FOUND');
    }
  });
});
