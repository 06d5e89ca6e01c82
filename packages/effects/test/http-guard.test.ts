import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fenced, fenceGuard, memoryFenceStore, postgresFenceStore, type FenceStore } from '../src/index';
import { testDatabase, type TestDatabase } from './database';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A service that counts the effects it applies per key, behind the guard. */
function service(store: FenceStore, mode?: 'once' | 'latest', style: 'node' | 'express' = 'node') {
  const applied: { key: string; fence: number }[] = [];
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const key = String(req.headers['x-fenceline-effect-key']);
    if (req.url === '/broken') {
      res.statusCode = 500;
      return void res.end('broken');
    }
    await pause(req.url === '/slow' ? 40 : 0);
    applied.push({ key, fence: Number(req.headers['x-fenceline-fence']) });
    res.end('done');
  };
  let listener: (req: IncomingMessage, res: ServerResponse) => void;
  if (style === 'node') listener = fenced(handler, { store, ...(mode ? { mode } : {}) });
  else {
    // The shape of an Express app: middleware `(req, res, next)`, then the route.
    const guard = fenceGuard({ store, ...(mode ? { mode } : {}) });
    listener = (req, res) => guard(req, res, () => void handler(req, res));
  }
  return { applied, server: createServer(listener) };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function call(base: string, fence: number | string | undefined, key: string | undefined, path = '/') {
  const headers: Record<string, string> = {};
  if (fence !== undefined) headers['x-fenceline-fence'] = String(fence);
  if (key !== undefined) headers['x-fenceline-effect-key'] = key;
  return fetch(`${base}${path}`, { method: 'POST', headers }).then(async (r) => ({ status: r.status, effect: r.headers.get('x-fenceline-effect'), body: await r.text() }));
}

let db: TestDatabase;
beforeAll(async () => {
  db = await testDatabase();
});
afterAll(async () => {
  await db?.close();
});

const stores: { name: string; store: () => FenceStore }[] = [
  { name: 'memory', store: () => memoryFenceStore() },
  { name: 'PostgreSQL (postgres.js)', store: () => postgresFenceStore(db.sql, { table: `fences_${Math.random().toString(36).slice(2, 8)}` }) },
  { name: 'PostgreSQL (pg)', store: () => postgresFenceStore(db.pool, { table: `fences_${Math.random().toString(36).slice(2, 8)}` }) },
];

describe.each(stores)('fenceGuard with the $name store', ({ store }) => {
  it('runs the first fence, refuses a lower one with 409 and, in once mode, does not run a retry again', async () => {
    const { applied, server } = service(store());
    const base = await listen(server);
    try {
      expect(await call(base, 5, 'd/1/t')).toMatchObject({ status: 200, effect: 'applied', body: 'done' });
      const stale = await call(base, 4, 'd/1/t');
      expect(stale).toMatchObject({ status: 409, effect: 'stale' });
      expect(JSON.parse(stale.body)).toMatchObject({ code: 'STALE_FENCE', fence: 4, highestFence: 5 });
      const again = await call(base, 8, 'd/1/t');
      expect(again).toMatchObject({ status: 200, effect: 'already-applied' });
      expect(JSON.parse(again.body)).toMatchObject({ appliedFence: 5 });
      // The retry raised the highest fence: the first attempt is now stale too.
      expect(await call(base, 5, 'd/1/t')).toMatchObject({ status: 409 });
      expect(await call(base, 1, 'other')).toMatchObject({ status: 200, effect: 'applied' });
      expect(applied).toEqual([
        { key: 'd/1/t', fence: 5 },
        { key: 'other', fence: 1 },
      ]);
    } finally {
      server.close();
    }
  });

  it('in latest mode runs every fence not lower than the highest', async () => {
    const { applied, server } = service(store(), 'latest', 'express');
    const base = await listen(server);
    try {
      expect((await call(base, 2, 'k')).status).toBe(200);
      expect((await call(base, 3, 'k')).status).toBe(200);
      expect((await call(base, 2, 'k')).status).toBe(409);
      expect(applied.map((a) => a.fence)).toEqual([2, 3]);
    } finally {
      server.close();
    }
  });

  it('does not count a handler that failed as applied, so the next attempt runs', async () => {
    const { applied, server } = service(store());
    const base = await listen(server);
    try {
      expect((await call(base, 2, 'k', '/broken')).status).toBe(500);
      expect((await call(base, 1, 'k')).status).toBe(409);
      expect((await call(base, 3, 'k')).status).toBe(200);
      expect(applied).toEqual([{ key: 'k', fence: 3 }]);
    } finally {
      server.close();
    }
  });

  it('answers a request without a fence or a key with 400 naming the header, and runs nothing', async () => {
    const { applied, server } = service(store());
    const base = await listen(server);
    try {
      const noFence = await call(base, undefined, 'k');
      expect(noFence.status).toBe(400);
      expect(JSON.parse(noFence.body)).toMatchObject({ code: 'INVALID_INPUT', issues: [{ path: ['x-fenceline-fence'] }] });
      expect((await call(base, '12abc', 'k')).status).toBe(400);
      expect(JSON.parse((await call(base, 3, undefined)).body)).toMatchObject({ issues: [{ path: ['x-fenceline-effect-key'] }] });
      expect((await call(base, 3, 'x'.repeat(2000))).status).toBe(400);
      expect(applied).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('lets one of two holders racing on a key apply, and never a lower fence after a higher', async () => {
    const { applied, server } = service(store(), 'once', 'express');
    const base = await listen(server);
    try {
      const keys = Array.from({ length: 6 }, (_, i) => `race-${i}`);
      const answers = await Promise.all(
        keys.flatMap((key, i) => (i % 2 === 0 ? [call(base, 10, key, '/slow'), call(base, 11, key, '/slow')] : [call(base, 11, key, '/slow'), call(base, 10, key, '/slow')])),
      );
      expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
      for (const key of keys) expect(applied.filter((a) => a.key === key)).toHaveLength(1);
    } finally {
      server.close();
    }
  });
});
