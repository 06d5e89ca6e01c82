import { randomBytes } from 'node:crypto';
import type { Role, UserName } from '@fenceline/core';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { hashPassword, newSecret, secretHash } from '@fenceline/db/people';
import { AnswerCheck } from './answer-check';
import { appRoutes } from './app-routes';
import { registerSecret } from '../../../../test/support/run-logs';
import { serveRoute } from './serve-route';

type Module = Record<string, unknown>;
type Handler = (req: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

/**
 * The console's API route files (the HTTP API's among them) over real HTTP on a database of the test file's own, each
 * served at the path its folder gives it under Next's App Router. It must be started before
 * anything reads the console's settings, which it points at that database.
 */
export async function startApiHttp(): Promise<{
  url: string;
  /** Where the console's other routes are served (`/api/jobs/...`). */
  origin: string;
  store: SqlStore;
  tokenFor: (role: Role) => Promise<string>;
  /** Every answer the API gave, checked against the document (answer-check.ts). */
  answers: AnswerCheck;
  stop: () => Promise<void>;
}> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `fenceline_api_${randomBytes(6).toString('hex')}`;
  process.env.DATABASE_URL = await createDatabase(adminUrl, name);
  const store = await openStore({ databaseUrl: process.env.DATABASE_URL, max: 2, applicationName: 'api-http-test' });
  await store.initCluster(4);
  // Every route file under app/api, listed from its folders (support/app-routes.ts), so a
  // route added later is served here, and swept, the day it is added.
  const routes: [RegExp, string[], Module][] = [];
  // As Next does, a static segment is preferred to a dynamic one in the same place.
  const rank = (path: string) =>
    path
      .split('/')
      .map((s) => (s.startsWith('[') ? '1' : '0'))
      .join('');
  const files = appRoutes().filter((r) => r.kind === 'route' && r.path.startsWith('/api/'));
  for (const route of files.sort((a, b) => rank(a.path).localeCompare(rank(b.path))))
    routes.push([route.pattern, route.params, (await import(/* @vite-ignore */ route.absolute)) as Module]);
  const { consoleStore } = await import('../../src/server/store');
  const { proxy } = await import('../../src/proxy');
  const { NextRequest } = await import('next/server');
  const answers = new AnswerCheck();
  const server = await serveRoute(async (req) => {
    // The console's proxy runs first, as under `next start`: a path it answers never reaches a route.
    const early = proxy(new NextRequest(req.url, { method: req.method, headers: req.headers }));
    if (early.headers.get('x-middleware-next') !== '1') return early;
    const path = new URL(req.url).pathname;
    for (const [pattern, names, module] of routes) {
      const match = pattern.exec(path);
      if (!match) continue;
      const handler = module[req.method] as Handler | undefined;
      // Next answers a method a route file does not export with 405.
      if (handler === undefined) return new Response(null, { status: 405 });
      const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(match[i + 1]!)]));
      const res = await handler(req, { params: Promise.resolve(params) });
      await answers.check(req.method, path, res);
      return res;
    }
    return new Response(null, { status: 404 });
  });
  const password = await hashPassword('correct horse battery staple');
  let users = 0;
  return {
    url: `${server.url}/api/v1`,
    origin: server.url,
    store,
    /** A personal API token of a new user of that role. */
    tokenFor: async (role) => {
      const user = await store.createUser({ name: `${role}-${++users}` as UserName, role, passwordHash: password });
      const secret = newSecret('flt');
      await store.createApiToken({ userId: user.id, name: 'tests', role, secretHash: secretHash(secret), ttlMs: 3_600_000 });
      registerSecret(`an API token of a ${role}`, secret);
      return secret;
    },
    answers,
    /** Stops it all; an answer off the document's schema fails the test file here, after its last test. */
    stop: async () => {
      await server.close();
      await store.close();
      await (await consoleStore()).close();
      await dropDatabase(adminUrl, name);
      if (answers.offSchema.length > 0) throw new Error(`answers off the OpenAPI document's schemas:\n${answers.offSchema.join('\n')}`);
    },
  };
}
