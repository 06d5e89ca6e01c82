import { randomBytes } from 'node:crypto';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { serveRoute } from './serve-route';

/**
 * The console's tRPC endpoint over real HTTP on a database of the test file's own. It must
 * be started before anything reads the console's settings, which it points at that database.
 */
export async function startConsoleHttp(): Promise<{ url: string; store: SqlStore; stop: () => Promise<void> }> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `fenceline_test_${randomBytes(6).toString('hex')}`;
  process.env.DATABASE_URL = await createDatabase(adminUrl, name);
  const store = await openStore({ databaseUrl: process.env.DATABASE_URL, max: 2, applicationName: 'console-http-test' });
  await store.initCluster(4);
  const route = await import('../../src/app/api/trpc/[trpc]/route');
  const { consoleStore } = await import('../../src/server/store');
  const server = await serveRoute((req) => (req.method === 'GET' ? route.GET(req) : route.POST(req)));
  return {
    url: server.url,
    store,
    stop: async () => {
      await server.close();
      await store.close();
      await (await consoleStore()).close();
      await dropDatabase(adminUrl, name);
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The procedure's result, or its error's message and code. */
  data: unknown;
  error: { message: string; code: string } | null;
}

/** Calls one procedure the way the console's client does (superjson envelope), with these headers. */
export async function callProcedure(base: string, path: string, opts: { input?: unknown; mutation?: boolean; headers?: Record<string, string> } = {}): Promise<Answer> {
  // No input is sent as no input at all, as the client does, so a schema's default applies.
  const envelope = JSON.stringify({ json: opts.input });
  const query = opts.input === undefined ? '' : `?input=${encodeURIComponent(envelope)}`;
  const res = opts.mutation
    ? await fetch(`${base}/api/trpc/${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...opts.headers }, body: envelope })
    : await fetch(`${base}/api/trpc/${path}${query}`, { headers: opts.headers });
  const body = (await res.json()) as { result?: { data: { json: unknown } }; error?: { json: { message: string; data: { code: string } } } };
  return {
    status: res.status,
    headers: res.headers,
    data: body.result?.data.json,
    error: body.error ? { message: body.error.json.message, code: body.error.json.data.code } : null,
  };
}

/** The name=value part of a Set-Cookie header, as a browser would send it back. */
export function cookieOf(answer: Answer): string {
  const header = answer.headers.get('set-cookie');
  if (!header) throw new Error(`no cookie was set (status ${answer.status}: ${answer.error?.message ?? ''})`);
  return header.split(';')[0]!;
}
