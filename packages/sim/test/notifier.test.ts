import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deliveryRequest, Notifier, type DeliveryRequest, type NotifyIo } from '@fenceline/core/engine';
import { type LeaderToken } from '@fenceline/core/store';
import { memoryStore } from '../src/store/memory-store';

/** The scheduler's signature: a base64 HMAC-SHA256. */
const sign = (key: Uint8Array, content: string): string => createHmac('sha256', key).update(content).digest('base64');

/** A channel secret in the Standard Webhooks form: `whsec_` and 32 bytes in base64. */
const SECRET = `whsec_${Buffer.from('a key of thirty-two bytes, at 32').toString('base64')}`;

/** A store with a led shard, a channel, and a rule for run failures of DAG `d`. */
async function setup(kind: 'webhook' | 'slack' = 'webhook', secret: string = SECRET) {
  // The wall clock's time, since a receiver's library checks the timestamp against its own clock.
  let nowMs = Date.now();
  const store = memoryStore({ nowMs: () => nowMs });
  await store.initCluster(1);
  const token = (await store.acquireShard({ shard: 0, nodeId: 'n1', ttlMs: 60_000 }))!.token;
  const channel = await store.createNotificationChannel({ name: 'c', kind, url: 'http://127.0.0.1:9/hook', secret: kind === 'webhook' ? secret : null });
  await store.createNotificationRule({ channelId: channel.id, dagId: 'd', event: 'run_failed' });
  const sent: DeliveryRequest[] = [];
  let answer: (r: DeliveryRequest) => Promise<{ status: number }> = async () => ({ status: 200 });
  const io: NotifyIo = { deliver: (r) => (sent.push(r), answer(r)), sign };
  const tokens: LeaderToken[] = [token];
  const notifier = new Notifier({
    store,
    io,
    clock: { nowMs: () => nowMs },
    tokens: () => tokens,
    metric: () => undefined,
    onError: (where, err) => {
      throw new Error(`${where}: ${String(err)}`);
    },
  });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
  return { store, token, tokens, notifier, sent, settle, advance: (ms: number) => (nowMs += ms), answerWith: (f: typeof answer) => (answer = f) };
}

describe('Notifier', () => {
  it('queues a failed run once, signs the webhook body, and records it delivered', async () => {
    const t = await setup();
    const run = { id: '7', dagId: 'd', scheduledAt: new Date(0) };
    t.notifier.runEnded(t.token, run, 'failed');
    t.notifier.runEnded(t.token, run, 'failed');
    await t.settle();
    await t.notifier.deliverDue();
    expect(t.sent).toHaveLength(1);
    const [req] = t.sent;
    expect(req!.headers).toMatchObject({ 'content-type': 'application/json', 'x-fenceline-event': 'run_failed', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) });
    expect(req!.headers['webhook-id']).toBe(req!.headers['x-fenceline-idempotency-key']);
    // A Standard Webhooks library verifies it with the channel's secret as it is written.
    expect(new Webhook(SECRET).verify(req!.body, req!.headers)).toMatchObject({ event: 'run_failed' });
    expect(JSON.parse(req!.body)).toMatchObject({ event: 'run_failed', dagId: 'd', data: { runId: '7', state: 'failed' } });
    expect(await t.store.listNotifications({})).toEqual([expect.objectContaining({ state: 'delivered', attempts: 1, claimedEpoch: t.token.epoch })]);
    // Delivered: nothing more is sent, however often the node asks.
    t.advance(60_000);
    await t.notifier.deliverDue();
    expect(t.sent).toHaveLength(1);
  });

  it('queues on load what a predecessor finished as failed and died before queueing', async () => {
    const t = await setup();
    await t.store.putDag({ id: 'd', tasks: [{ id: 'a', type: 'noop' }] }, 1);
    const run = await t.store.triggerRun('d' as never);
    // The predecessor's finish landed; it died before telling the notifier.
    await t.store.finishRunsAcross([{ token: t.token, items: [{ runId: run.id, state: 'failed' }] }]);
    t.advance(1);
    t.notifier.loaded(t.token);
    t.notifier.loaded(t.token);
    await t.settle();
    await t.notifier.deliverDue();
    expect(t.sent).toHaveLength(1);
    expect(JSON.parse(t.sent[0]!.body)).toMatchObject({ event: 'run_failed', data: { runId: run.id, state: 'failed' } });
  });

  it('sends a Slack text without a signature', async () => {
    const t = await setup('slack');
    t.notifier.runEnded(t.token, { id: '8', dagId: 'd', scheduledAt: new Date(0) }, 'failed');
    await t.settle();
    await t.notifier.deliverDue();
    expect(JSON.parse(t.sent[0]!.body)).toEqual({ text: 'fenceline: run 8 of DAG d failed' });
    expect(t.sent[0]!.headers['webhook-signature']).toBeUndefined();
  });

  it('retries a refused delivery after its backoff, and a deposed leader’s late record changes nothing', async () => {
    const t = await setup();
    t.answerWith(async () => ({ status: 503 }));
    t.notifier.runEnded(t.token, { id: '9', dagId: 'd', scheduledAt: new Date(0) }, 'failed');
    await t.settle();
    await t.notifier.deliverDue();
    expect(await t.store.listNotifications({})).toEqual([expect.objectContaining({ state: 'pending', attempts: 1, lastError: 'the receiver answered HTTP 503' })]);
    await t.notifier.deliverDue();
    expect(t.sent).toHaveLength(1);
    t.advance(5_001);

    // The next attempt hangs; meanwhile another node takes the shard over.
    let answer: (s: { status: number }) => void = () => undefined;
    t.answerWith(() => new Promise((resolve) => (answer = resolve)));
    const pass = t.notifier.deliverDue();
    await t.settle();
    expect(t.sent).toHaveLength(2);
    await t.store.releaseShard(t.token);
    const next = (await t.store.acquireShard({ shard: 0, nodeId: 'n2', ttlMs: 60_000 }))!.token;
    answer({ status: 200 });
    await pass;
    expect(await t.store.listNotifications({})).toEqual([expect.objectContaining({ state: 'pending', attempts: 1 })]);
    // The new leader sends it again at once, with the same key, and records it.
    const request = deliveryRequest((await t.store.dueNotifications(next, 10))[0]!, { sign }, Date.now());
    expect(request.headers['x-fenceline-idempotency-key']).toBe(t.sent[1]!.headers['x-fenceline-idempotency-key']);
    expect(await t.store.recordDelivery(next, (await t.store.listNotifications({}))[0]!.id, { kind: 'delivered' })).toMatchObject({ state: 'delivered', claimedEpoch: next.epoch });
  });

  it('signs id, timestamp and body together, so a changed timestamp, id or body, or an old delivery, is refused', async () => {
    const t = await setup('webhook', 'a plain secret, used as its UTF-8 bytes');
    t.notifier.runEnded(t.token, { id: '10', dagId: 'd', scheduledAt: new Date(0) }, 'failed');
    await t.settle();
    await t.notifier.deliverDue();
    const req = t.sent[0]!;
    const receiver = new Webhook(new TextEncoder().encode('a plain secret, used as its UTF-8 bytes'), { format: 'raw' });
    expect(receiver.verify(req.body, req.headers)).toMatchObject({ data: { runId: '10' } });
    const shifted = String(Number(req.headers['webhook-timestamp']) - 1);
    for (const headers of [
      { ...req.headers, 'webhook-timestamp': shifted },
      { ...req.headers, 'webhook-id': `${req.headers['webhook-id']!}x` },
      { ...req.headers, 'webhook-signature': req.headers['webhook-signature']!.replace('v1,', 'v1,A') },
    ]) {
      expect(() => receiver.verify(req.body, headers)).toThrow();
    }
    expect(() => receiver.verify(req.body.replace('"10"', '"11"'), req.headers)).toThrow();
    // The same delivery signed six minutes ago (a capture replayed) is past the receiver's tolerance.
    const row = (await t.store.listNotifications({}))[0]!;
    const channel = { kind: 'webhook' as const, url: req.url, secret: 'a plain secret, used as its UTF-8 bytes' };
    const old = deliveryRequest({ ...row, attempts: 0, channel }, { sign }, Date.now() - 6 * 60_000);
    expect(old.body).toBe(req.body);
    expect(() => receiver.verify(old.body, old.headers)).toThrow(/too old/);
  });

  it('refuses a whsec_ secret a library could not read, and a NUL in any field, naming the field', async () => {
    const store = memoryStore({ nowMs: () => 0 });
    const base = { name: 'c', kind: 'webhook' as const, url: 'https://hooks.example.com/x' };
    for (const [input, field] of [
      [{ ...base, secret: 'whsec_not base64!' }, 'secret'],
      [{ ...base, secret: `whsec_${Buffer.alloc(16).toString('base64')}` }, 'secret'],
      [{ ...base, secret: 'nul\u0000secret' }, 'secret'],
      [{ ...base, name: 'nul\u0000name' }, 'name'],
      [{ ...base, url: 'https://hooks.example.com/\u0000' }, 'url'],
      [{ ...base, name: 'lone\ud800' }, 'name'],
    ] as const) {
      await expect(store.createNotificationChannel(input)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field } });
    }
    expect(await store.listNotificationChannels()).toEqual([]);
    await store.createNotificationChannel({ ...base, secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` });
  });
});
