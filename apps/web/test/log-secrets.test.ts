import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NewNotificationChannel } from '@fenceline/core';
import { logSafeError, redactSecrets } from '@fenceline/core';
import { createDatabase, dropDatabase, notificationChannels, openStore, type SqlStore } from '@fenceline/db';
import { signInThroughRoute } from './support/route-sign-in';

// A database of this file's own, named before the console reads its settings (once).
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = `fenceline_test_${randomBytes(6).toString('hex')}`;
process.env.DATABASE_URL = await createDatabase(ADMIN_URL, DB_NAME);
const { POST } = await import('../src/app/api/trpc/[trpc]/route');
const { consoleStore } = await import('../src/server/store');

/**
 * A channel whose creation fails in the store in a way no check foresaw: the statement
 * PostgreSQL refuses carries the channel's URL and secret as parameters, and the console's
 * log must carry neither, nor the caller's answer.
 */
describe('console: secrets stay out of the log', () => {
  let store: SqlStore;
  beforeAll(async () => {
    store = await openStore({ databaseUrl: process.env.DATABASE_URL!, max: 2 });
    await store.initCluster(4);
  });
  afterAll(async () => {
    await store?.close();
    await (await consoleStore()).close();
    await dropDatabase(ADMIN_URL, DB_NAME);
  });

  it('logs a failed channel creation without its URL, its secret or the statement', async () => {
    const cookie = await signInThroughRoute(POST, store, 'admin');
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const hookPath = `services/${randomBytes(12).toString('hex')}`;
    const url = `https://hooks.example.com/${hookPath}`;
    const live = await consoleStore();
    // An insert of the channel as given, with a name PostgreSQL refuses (a NUL), so the real
    // driver's error (statement and parameters) reaches the console's error path.
    const spy = vi.spyOn(live, 'createNotificationChannel').mockImplementation(async (input: NewNotificationChannel) => {
      await live.db.insert(notificationChannels).values({ name: `${input.name}\u0000`, kind: input.kind, url: input.url, secret: input.secret ?? null });
      throw new Error('unreachable');
    });
    const logged: string[] = [];
    const errors = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
    const warnings = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
    try {
      const res = await POST(
        new Request('http://console.test/api/trpc/notifications.createChannel', {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json' },
          body: JSON.stringify({ json: { name: 'failing', kind: 'webhook', url, secret } }),
        }),
      );
      const text = await res.text();
      expect(res.status, text).toBe(500);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(hookPath);
      const id = /internal error; id ([0-9a-f]{16})/.exec(text)?.[1];
      expect(id, text).toBeDefined();
      const lines = logged.filter((line) => line.includes(id!));
      expect(lines).toHaveLength(1);
      // The line says what failed, and PostgreSQL's reason, but not what was sent.
      expect(lines[0]).toMatch(/a store statement failed/);
      expect(lines[0]).toMatch(/invalid byte sequence/);
      for (const line of logged) {
        expect(line).not.toContain(secret);
        expect(line).not.toContain(secret.slice(6, 30));
        expect(line).not.toContain(hookPath);
        expect(line).not.toMatch(/insert into|params:/i);
      }
    } finally {
      spy.mockRestore();
      errors.mockRestore();
      warnings.mockRestore();
    }
    expect((await store.listNotificationChannels()).map((c) => c.name)).not.toContain('failing');
  });

  it('redacts every credential shape and masks every URL in a text it logs', () => {
    const token = `flt_${randomBytes(32).toString('base64url')}`;
    const credential = `flw.gpu.${randomBytes(32).toString('base64url')}`;
    const hook = `https://hooks.slack.com/services/${randomBytes(10).toString('hex')}`;
    const text = redactSecrets(`tried ${token} then ${credential} against ${hook} with Authorization: Bearer ${token} and whsec_c2VjcmV0c2VjcmV0c2VjcmV0`);
    for (const secret of [token, credential, hook, token.slice(4), 'c2VjcmV0c2VjcmV0c2VjcmV0']) expect(text).not.toContain(secret);
    expect(text).toContain('flw.gpu.[redacted]');
    expect(text).toContain('https://hooks.slack.com/');
    const error = new Error(`Failed query: insert into t values ($1)\nparams: ${token}`, { cause: new Error('value too long') });
    const fields = logSafeError(error);
    expect(JSON.stringify(fields)).not.toContain(token.slice(4));
    expect(fields.error).toBe('a store statement failed (its text and parameters are not logged): value too long');
  });
});
