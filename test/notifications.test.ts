import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, parseRunId, type DagSpecInput, type NotificationRow } from '@fenceline/core';
import { sleep } from '../tools/start/cluster';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';
import { Receiver } from './support/webhook-receiver';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);
// In the Standard Webhooks form, which the receiver's library reads as it is.
const SECRET = `whsec_${Buffer.from('notify-test-secret-of-32-bytes!!').toString('base64')}`;

/** A DAG of one task that fails on its only attempt. */
function failing(id: string): DagSpecInput {
  return { id, tasks: [{ id: 'boom', type: 'flaky', config: { succeedOnAttempt: 99 }, retries: 0 }] };
}

describe('notifications: a real cluster delivering to a local receiver', () => {
  let f: Fixture;
  const receiver = new Receiver(SECRET);

  beforeAll(async () => {
    await receiver.start();
    f = await startFixture({ schedulers: 2, workers: 1 });
  });
  afterAll(async () => {
    await f?.stop();
    await receiver.stop();
  });

  /** The store's notifications of a DAG's events (each test has a DAG of its own). */
  async function notificationsOf(dagId: string): Promise<NotificationRow[]> {
    return (await f.store.listNotifications({ limit: 1000 })).filter((n) => n.dagId === dagId);
  }

  async function failedRun(dagId: string): Promise<string> {
    await f.store.putDag(failing(dagId), SHARDS);
    const run = await f.store.triggerRun(parseDagId(dagId));
    await eventually('the run to fail', async () => (await f.store.getRun(parseRunId(run.id))).state === 'failed', 30_000);
    return run.id;
  }

  it('delivers one signed webhook per event of a failed run, and a Slack text, each recorded delivered once', async () => {
    const hook = await f.store.createNotificationChannel({ name: 'ops-hook', kind: 'webhook', url: `${receiver.url}/hook`, secret: SECRET });
    const slack = await f.store.createNotificationChannel({ name: 'ops-slack', kind: 'slack', url: `${receiver.url}/slack` });
    expect(JSON.stringify(await f.store.listNotificationChannels())).not.toContain(SECRET);
    const dagId = 'notify-fails';
    const runRule = await f.store.createNotificationRule({ channelId: hook.id, dagId, event: 'run_failed' });
    const taskRule = await f.store.createNotificationRule({ channelId: hook.id, dagId, event: 'task_failed' });
    const slackRule = await f.store.createNotificationRule({ channelId: slack.id, dagId, event: 'run_failed' });

    const runId = await failedRun(dagId);
    const runKey = `run_failed:${runId}:${runRule.id}`;
    const slackKey = `run_failed:${runId}:${slackRule.id}`;
    await eventually('both run notifications delivered', async () => receiver.of(runKey).length > 0 && receiver.of(slackKey).length > 0, 20_000);
    const job = (await f.store.listJobs(parseRunId(runId)))[0]!;
    const taskKey = `task_failed:${job.id}:${taskRule.id}`;
    await eventually('the task notification delivered', async () => receiver.of(taskKey).length > 0, 20_000);

    const [run] = receiver.of(runKey);
    expect(run).toMatchObject({ path: '/hook', event: 'run_failed', signed: true, signatureOk: true });
    expect(run!.body).toMatchObject({ id: runKey, event: 'run_failed', dagId, data: { runId, state: 'failed' } });
    expect(receiver.of(taskKey)[0]).toMatchObject({ event: 'task_failed', signatureOk: true, body: { data: { jobId: job.id, taskId: 'boom' } } });
    const [text] = receiver.of(slackKey);
    expect(text).toMatchObject({ path: '/slack', signed: false });
    expect(text!.body).toEqual({ text: `fenceline: run ${runId} of DAG ${dagId} failed` });

    // Give a repeat the time to show up, then count: one request and one delivered row per key.
    await eventually('every notification recorded delivered', async () => (await notificationsOf(dagId)).every((n) => n.state === 'delivered'), 10_000);
    for (const key of [runKey, slackKey, taskKey]) expect(receiver.of(key)).toHaveLength(1);
    const rows = await notificationsOf(dagId);
    expect(rows.map((n) => [n.dedupeKey, n.state, n.attempts]).sort()).toEqual(
      [
        [runKey, 'delivered', 1],
        [slackKey, 'delivered', 1],
        [taskKey, 'delivered', 1],
      ].sort(),
    );

    // The DAG's next run succeeds: that is a recovery, told once; the run after it is not.
    const recoveredRule = await f.store.createNotificationRule({ channelId: hook.id, dagId, event: 'run_recovered' });
    await f.store.putDag({ id: dagId, tasks: [{ id: 'boom', type: 'noop' }] }, SHARDS);
    const succeeded = async () => {
      const next = await f.store.triggerRun(parseDagId(dagId));
      await eventually('the run to succeed', async () => (await f.store.getRun(parseRunId(next.id))).state === 'succeeded', 30_000);
      return next.id;
    };
    const recoveredId = await succeeded();
    const recoveredKey = `run_recovered:${recoveredId}:${recoveredRule.id}`;
    await eventually('the recovery delivered', async () => receiver.of(recoveredKey).length > 0, 20_000);
    expect(receiver.of(recoveredKey)[0]).toMatchObject({ event: 'run_recovered', signatureOk: true, body: { data: { runId: recoveredId, state: 'succeeded' } } });
    const quietId = await succeeded();
    await sleep(2_000);
    expect(receiver.received.some((r) => r.body.dagId === dagId && (r.body.data as { runId?: string }).runId === quietId)).toBe(false);
    await f.store.deleteNotificationChannel(slack.id);
  }, 120_000);

  it('retries a delivery the receiver refused with a 500, after its backoff', async () => {
    const channel = await f.store.createNotificationChannel({ name: 'flaky-hook', kind: 'webhook', url: `${receiver.url}/flaky`, secret: SECRET });
    const dagId = 'notify-retries';
    const rule = await f.store.createNotificationRule({ channelId: channel.id, dagId, event: 'run_failed' });
    receiver.answer = (r) => (r.path === '/flaky' && receiver.received.filter((x) => x.path === '/flaky').length === 1 ? 500 : 200);
    try {
      const runId = await failedRun(dagId);
      const key = `run_failed:${runId}:${rule.id}`;
      await eventually('the first attempt', async () => receiver.of(key).length >= 1, 20_000);
      const failed = await eventually('the refusal recorded', async () => (await notificationsOf(dagId)).find((n) => n.attempts === 1 && n.state === 'pending'), 10_000);
      expect(failed.lastError).toContain('500');
      await eventually('the retry delivered', async () => (await notificationsOf(dagId)).find((n) => n.state === 'delivered'), 30_000);
      expect(receiver.of(key)).toHaveLength(2);
      expect(receiver.of(key).every((r) => r.signatureOk)).toBe(true);
      expect(await notificationsOf(dagId)).toEqual([expect.objectContaining({ dedupeKey: key, state: 'delivered', attempts: 2 })]);
    } finally {
      receiver.answer = () => 200;
    }
  }, 90_000);

  it('delivers after the leader is killed in the middle of a delivery, recording each notification delivered once', async () => {
    const channel = await f.store.createNotificationChannel({ name: 'held-hook', kind: 'webhook', url: `${receiver.url}/held`, secret: SECRET });
    const dagId = 'notify-crash';
    await f.store.putDag(failing(dagId), SHARDS);
    const dag = await f.store.getDag(parseDagId(dagId));
    const rule = await f.store.createNotificationRule({ channelId: channel.id, dagId, event: 'run_failed' });
    // The first request is held open; the leader that sent it is killed while it waits.
    let release: (status: number) => void = () => undefined;
    const held = new Promise<number>((resolve) => (release = resolve));
    receiver.answer = (r) => (r.path === '/held' && receiver.received.filter((x) => x.path === '/held').length === 1 ? held : 200);
    try {
      const run = await f.store.triggerRun(parseDagId(dagId));
      const key = `run_failed:${run.id}:${rule.id}`;
      await eventually('the first delivery in flight', async () => receiver.of(key).length === 1, 30_000);
      const leader = (await f.store.listShards()).find((s) => s.shard === dag.shard)!.holder!;
      f.cluster.signal(leader, 'SIGKILL');
      await eventually('the next leader to deliver it', async () => (await notificationsOf(dagId)).find((n) => n.state === 'delivered'), 30_000);
      release(200);
      // At least once to the receiver: the killed leader's request, never answered, and the
      // next leader's repeat with the same key, for the receiver to drop; once in the store.
      expect(receiver.of(key).length).toBeGreaterThanOrEqual(2);
      expect(receiver.of(key).every((r) => r.signatureOk && r.body.id === key)).toBe(true);
      const rows = await notificationsOf(dagId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ dedupeKey: key, state: 'delivered' });
      const newLeader = (await f.store.listShards()).find((s) => s.shard === dag.shard)!;
      expect(newLeader.holder).not.toBe(leader);
      expect(rows[0]!.claimedEpoch).toBe(newLeader.epoch);
    } finally {
      release(200);
      receiver.answer = () => 200;
    }
  }, 90_000);
});
