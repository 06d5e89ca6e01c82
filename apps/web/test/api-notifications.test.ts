import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFY_LIMITS, parseDagId, shardOf } from '@fenceline/core';
import { type LeaderToken } from '@fenceline/core/store';
import { startApiHttp } from './support/api-http';

/**
 * The notification endpoints of the HTTP API through their real route handlers over HTTP,
 * on a real PostgreSQL: each with good and bad input and with every role (and none), channel
 * URLs masked and secrets never shown, refusals in the one error shape with nothing written,
 * and every change audited.
 */

let api: Awaited<ReturnType<typeof startApiHttp>>;
let viewer: string;
let operator: string;
let admin: string;

const SECRET = 'hmac-key-that-must-never-be-shown';
const HOOK_TOKEN = 'T0AAAA/B0BBBB/verysecrettokenwxyz';
const HOOK_URL = `https://hooks.slack.com/services/${HOOK_TOKEN}`;

beforeAll(async () => {
  api = await startApiHttp();
  viewer = await api.tokenFor('viewer');
  operator = await api.tokenFor('operator');
  admin = await api.tokenFor('admin');
});
afterAll(async () => {
  await api?.stop();
});

interface Answer {
  status: number;
  body: Record<string, unknown> & { code?: string; message?: string; issues?: { field: string; message: string }[] };
}

async function send(method: 'GET' | 'POST' | 'DELETE', path: string, opts: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${api.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

const fields = (answer: Answer) => (answer.body.issues ?? []).map((i) => i.field);
const auditCount = async () => (await api.store.listAudit({ limit: 500 })).length;

/** A refusal in the one error shape that says nothing of how the server is built, nor the URL or secret it was given. */
function expectRefusal(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.body.code).toBe(code);
  const text = JSON.stringify(answer.body);
  expect(text).not.toMatch(/SELECT|INSERT|UPDATE |\bat .*\.ts:|node_modules/);
  expect(text).not.toContain(HOOK_TOKEN);
  expect(text).not.toContain(SECRET);
  expect(Object.keys(answer.body).every((k) => ['code', 'message', 'issues'].includes(k))).toBe(true);
}

const channelBody = (name: string, extra: Record<string, unknown> = {}) => ({ name, kind: 'slack', url: HOOK_URL, secret: SECRET, ...extra });

describe('HTTP API: notification channels', () => {
  it('lets an admin add a channel, answering with its URL masked and never its secret, and audits it', async () => {
    const created = await send('POST', '/notifications/channels', { token: admin, body: channelBody('ops-slack') });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ops-slack', kind: 'slack', url: 'https://hooks.slack.com/…wxyz', hasSecret: true });
    const listed = await send('GET', '/notifications/channels', { token: viewer });
    expect(listed.status).toBe(200);
    expect(listed.body.channels).toEqual([expect.objectContaining({ id: created.body.id, url: 'https://hooks.slack.com/…wxyz', hasSecret: true })]);
    for (const answer of [created, listed]) {
      expect(JSON.stringify(answer.body)).not.toContain(HOOK_TOKEN);
      expect(JSON.stringify(answer.body)).not.toContain(SECRET);
    }
    const [entry] = await api.store.listAudit({ action: 'notify.channel_created' });
    expect(entry).toMatchObject({ actorKind: 'token', target: created.body.id, details: { name: 'ops-slack', kind: 'slack', url: 'https://hooks.slack.com/…wxyz', signed: true } });
    expect(JSON.stringify(entry)).not.toContain(HOOK_TOKEN);
  });

  it('refuses a channel from an operator, a viewer or no token, and bad input naming the field, storing nothing', async () => {
    const before = (await api.store.listNotificationChannels()).length;
    const audits = await auditCount();
    expectRefusal(await send('POST', '/notifications/channels', { body: channelBody('nobody') }), 401, 'UNAUTHORIZED');
    expectRefusal(await send('POST', '/notifications/channels', { token: viewer, body: channelBody('viewers') }), 403, 'FORBIDDEN');
    expectRefusal(await send('POST', '/notifications/channels', { token: operator, body: channelBody('operators') }), 403, 'FORBIDDEN');
    const bad: [Record<string, unknown>, string][] = [
      [channelBody('bad-kind', { kind: 'email' }), 'kind'],
      [channelBody('bad-scheme', { url: `ftp://hooks.slack.com/services/${HOOK_TOKEN}` }), 'url'],
      [channelBody('bad-url', { url: `not a url ${HOOK_TOKEN}` }), 'url'],
      [channelBody('bad-secret', { secret: '' }), 'secret'],
      [channelBody('  '), 'name'],
      [channelBody('ops-slack'), 'name'],
      [channelBody('extra', { colour: 'red' }), 'colour'],
      [{ kind: 'webhook', url: HOOK_URL }, 'name'],
    ];
    for (const [body, field] of bad) {
      const answer = await send('POST', '/notifications/channels', { token: admin, body });
      expectRefusal(answer, 400, 'INVALID_INPUT');
      expect(fields(answer), JSON.stringify(body)).toContain(field);
    }
    expect(await api.store.listNotificationChannels()).toHaveLength(before);
    expect(await auditCount()).toBe(audits);
  });

  it('lists channels for every role but no token, and lets only an admin delete one', async () => {
    expectRefusal(await send('GET', '/notifications/channels'), 401, 'UNAUTHORIZED');
    for (const token of [viewer, operator, admin]) expect((await send('GET', '/notifications/channels', { token })).status).toBe(200);
    const made = await send('POST', '/notifications/channels', { token: admin, body: { name: 'to-delete', kind: 'webhook', url: 'http://127.0.0.1:9/hook' } });
    expect(made.body).toMatchObject({ url: 'http://127.0.0.1:9/…', hasSecret: false });
    const id = String(made.body.id);
    expectRefusal(await send('DELETE', `/notifications/channels/${id}`), 401, 'UNAUTHORIZED');
    expectRefusal(await send('DELETE', `/notifications/channels/${id}`, { token: viewer }), 403, 'FORBIDDEN');
    expectRefusal(await send('DELETE', `/notifications/channels/${id}`, { token: operator }), 403, 'FORBIDDEN');
    const badId = await send('DELETE', '/notifications/channels/abc', { token: admin });
    expectRefusal(badId, 400, 'INVALID_INPUT');
    expect(fields(badId)).toEqual(['id']);
    expect((await api.store.listNotificationChannels()).some((c) => c.id === id)).toBe(true);
    expect(await send('DELETE', `/notifications/channels/${id}`, { token: admin })).toEqual({ status: 200, body: { id, deleted: true } });
    expectRefusal(await send('DELETE', `/notifications/channels/${id}`, { token: admin }), 404, 'NOT_FOUND');
    expect((await api.store.listNotificationChannels()).some((c) => c.id === id)).toBe(false);
    expect((await api.store.listAudit({ action: 'notify.channel_deleted' }))[0]).toMatchObject({ target: id, details: { name: 'to-delete' } });
  });
});

describe('HTTP API: notification rules', () => {
  let channelId: string;
  beforeAll(async () => {
    channelId = String((await send('POST', '/notifications/channels', { token: admin, body: { name: 'rules-hook', kind: 'webhook', url: 'http://127.0.0.1:9/rules' } })).body.id);
  });

  it('lets an operator or an admin add rules of every kind, and lists them for a viewer', async () => {
    const perDag = await send('POST', '/notifications/rules', { token: operator, body: { channelId, event: 'run_failed', dagId: 'nightly' } });
    expect(perDag.status).toBe(201);
    expect(perDag.body).toMatchObject({ channelId, event: 'run_failed', dagId: 'nightly', afterSeconds: null, pool: null });
    const timed = await send('POST', '/notifications/rules', { token: admin, body: { channelId, event: 'pool_no_worker', afterSeconds: 120, pool: 'gpu' } });
    expect(timed.status).toBe(201);
    expect(timed.body).toMatchObject({ event: 'pool_no_worker', dagId: null, afterSeconds: 120, pool: 'gpu' });
    const listed = await send('GET', '/notifications/rules', { token: viewer });
    expect(listed.status).toBe(200);
    expect((listed.body.rules as { id: string }[]).map((r) => r.id)).toEqual(expect.arrayContaining([perDag.body.id, timed.body.id]));
    expectRefusal(await send('GET', '/notifications/rules'), 401, 'UNAUTHORIZED');
    expect((await api.store.listAudit({ action: 'notify.rule_created' })).map((e) => e.target)).toEqual([timed.body.id, perDag.body.id]);
  });

  it('refuses a rule from a viewer or no token, and bad input naming the field, storing nothing', async () => {
    const before = (await api.store.listNotificationRules()).length;
    const audits = await auditCount();
    expectRefusal(await send('POST', '/notifications/rules', { body: { channelId, event: 'run_failed' } }), 401, 'UNAUTHORIZED');
    expectRefusal(await send('POST', '/notifications/rules', { token: viewer, body: { channelId, event: 'run_failed' } }), 403, 'FORBIDDEN');
    const bad: [Record<string, unknown>, string][] = [
      [{ channelId, event: 'run_exploded' }, 'event'],
      [{ channelId: '999999', event: 'run_failed' }, 'channelId'],
      [{ channelId: 'x', event: 'run_failed' }, 'channelId'],
      [{ channelId, event: 'run_failed', dagId: 'Not A Dag!' }, 'dagId'],
      [{ channelId, event: 'deadline_missed', dagId: 'nightly' }, 'afterSeconds'],
      [{ channelId, event: 'deadline_missed', afterSeconds: 0 }, 'afterSeconds'],
      [{ channelId, event: 'shard_leaderless', afterSeconds: 1.5 }, 'afterSeconds'],
      [{ channelId, event: 'run_failed', afterSeconds: 60 }, 'afterSeconds'],
      [{ channelId, event: 'shard_leaderless', afterSeconds: 60, dagId: 'nightly' }, 'dagId'],
      [{ channelId, event: 'run_failed', pool: 'gpu' }, 'pool'],
      [{ channelId, event: 'pool_no_worker', afterSeconds: 60, pool: 'Bad Pool' }, 'pool'],
      [{ event: 'run_failed' }, 'channelId'],
    ];
    for (const [body, field] of bad) {
      const answer = await send('POST', '/notifications/rules', { token: operator, body });
      expectRefusal(answer, 400, 'INVALID_INPUT');
      expect(fields(answer), JSON.stringify(body)).toContain(field);
    }
    expect(await api.store.listNotificationRules()).toHaveLength(before);
    expect(await auditCount()).toBe(audits);
  });

  it('lets an operator delete a rule and refuses a viewer, no token, a bad id and a rule that is gone', async () => {
    const rule = await send('POST', '/notifications/rules', { token: operator, body: { channelId, event: 'task_failed' } });
    const id = String(rule.body.id);
    expectRefusal(await send('DELETE', `/notifications/rules/${id}`), 401, 'UNAUTHORIZED');
    expectRefusal(await send('DELETE', `/notifications/rules/${id}`, { token: viewer }), 403, 'FORBIDDEN');
    expectRefusal(await send('DELETE', '/notifications/rules/1.5', { token: operator }), 400, 'INVALID_INPUT');
    expect(await send('DELETE', `/notifications/rules/${id}`, { token: operator })).toEqual({ status: 200, body: { id, deleted: true } });
    expectRefusal(await send('DELETE', `/notifications/rules/${id}`, { token: operator }), 404, 'NOT_FOUND');
    expect((await api.store.listNotificationRules()).some((r) => r.id === id)).toBe(false);
    expect((await api.store.listAudit({ action: 'notify.rule_deleted' }))[0]).toMatchObject({ target: id, details: { event: 'task_failed' } });
  });
});

describe('HTTP API: notifications and dead letters', () => {
  let token: LeaderToken;
  let deadId: string;
  let deliveredId: string;

  // A dead notification takes eight failed deliveries with backoff, so the test records them
  // through the store as a shard's leader would, under a lead of its own.
  beforeAll(async () => {
    const dagId = parseDagId('api-notified');
    const acquired = await api.store.acquireShard({ shard: shardOf(dagId, 4), nodeId: 'api-test-leader', ttlMs: 600_000 });
    token = acquired!.token;
    const channel = await api.store.createNotificationChannel({ name: 'dead-letters', kind: 'slack', url: HOOK_URL });
    await api.store.createNotificationRule({ channelId: channel.id, dagId, event: 'run_failed' });
    const [dead, delivered] = await api.store.enqueueNotifications(token, [
      { event: 'run_failed', dagId, subject: 'run-1', payload: { runId: 'run-1' } },
      { event: 'run_failed', dagId, subject: 'run-2', payload: { runId: 'run-2' } },
    ]);
    deadId = dead!.id;
    deliveredId = delivered!.id;
    for (let i = 0; i < NOTIFY_LIMITS.maxAttempts; i++) await api.store.recordDelivery(token, deadId, { kind: 'failed', error: `no answer from ${HOOK_URL}` });
    await api.store.recordDelivery(token, deliveredId, { kind: 'delivered' });
  });

  it('lists notifications by state for every role, the dead letters with their attempts and masked last error', async () => {
    for (const t of [viewer, operator, admin]) {
      const dead = await send('GET', '/notifications?state=dead&limit=10', { token: t });
      expect(dead.status).toBe(200);
      expect(dead.body.notifications).toEqual([
        expect.objectContaining({ id: deadId, state: 'dead', attempts: NOTIFY_LIMITS.maxAttempts, lastError: 'no answer from https://hooks.slack.com/…wxyz' }),
      ]);
      expect(JSON.stringify(dead.body)).not.toContain(HOOK_TOKEN);
    }
    const all = await send('GET', '/notifications', { token: viewer });
    expect((all.body.notifications as { id: string }[]).map((n) => n.id)).toEqual([deliveredId, deadId]);
    expect(((await send('GET', '/notifications?limit=1', { token: viewer })).body.notifications as unknown[]).length).toBe(1);
    expectRefusal(await send('GET', '/notifications'), 401, 'UNAUTHORIZED');
    for (const [query, field] of [
      ['state=lost', 'state'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=many', 'limit'],
      ['colour=red', 'colour'],
    ]) {
      const answer = await send('GET', `/notifications?${query}`, { token: viewer });
      expectRefusal(answer, 400, 'INVALID_INPUT');
      expect(fields(answer)).toEqual([field]);
    }
  });

  it('lets an operator retry a dead notification once, audited, and refuses everything else changing nothing', async () => {
    expectRefusal(await send('POST', `/notifications/${deadId}/retry`), 401, 'UNAUTHORIZED');
    expectRefusal(await send('POST', `/notifications/${deadId}/retry`, { token: viewer }), 403, 'FORBIDDEN');
    const delivered = await send('POST', `/notifications/${deliveredId}/retry`, { token: operator });
    expectRefusal(delivered, 400, 'INVALID_INPUT');
    expect(fields(delivered)).toEqual(['id']);
    expectRefusal(await send('POST', '/notifications/999999999/retry', { token: operator }), 404, 'NOT_FOUND');
    const badId = await send('POST', '/notifications/abc/retry', { token: operator });
    expectRefusal(badId, 400, 'INVALID_INPUT');
    expect(fields(badId)).toEqual(['id']);
    expect((await api.store.listNotifications({ state: 'dead' })).map((n) => n.id)).toEqual([deadId]);
    expect(await api.store.listAudit({ action: 'notify.retried' })).toEqual([]);

    const retried = await send('POST', `/notifications/${deadId}/retry`, { token: operator });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: deadId, state: 'pending', attempts: 0 });
    expect(await api.store.listNotifications({ state: 'dead' })).toEqual([]);
    expect((await api.store.dueNotifications(token, 10)).map((n) => [n.id, n.channel.url])).toEqual([[deadId, HOOK_URL]]);
    const again = await send('POST', `/notifications/${deadId}/retry`, { token: admin });
    expectRefusal(again, 400, 'INVALID_INPUT');
    expect((await api.store.listAudit({ action: 'notify.retried' })).map((e) => [e.target, e.actorKind, e.dagId])).toEqual([[deadId, 'token', 'api-notified']]);
  });
});
