import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { runCli } from './support/cli-process';
import { ADMIN_URL } from './support/cluster-fixture';

/** `fenceline notify` as an operator runs it: the real CLI process against a database of its own. */
describe('cli: notify', () => {
  let databaseName: string;
  let databaseUrl: string;
  let store: SqlStore;
  const secret = `s-${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    databaseName = `fenceline_cli_notify_${randomBytes(4).toString('hex')}`;
    databaseUrl = await createDatabase(ADMIN_URL, databaseName);
    store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 2 });
    process.env.FENCELINE_TEST_NOTIFY_SECRET = secret;
  });
  afterAll(async () => {
    delete process.env.FENCELINE_TEST_NOTIFY_SECRET;
    await store?.close();
    if (databaseName) await dropDatabase(ADMIN_URL, databaseName).catch(() => undefined);
  });

  it('adds, lists and deletes channels and rules, never prints a secret, and refuses bad input naming the field', async () => {
    const added = await runCli(databaseUrl, 'notify', 'channel', 'add', 'ops', '--endpoint', 'https://hooks.example.com/ops', '--secret-env', 'FENCELINE_TEST_NOTIFY_SECRET');
    expect(added.code).toBe(0);
    // The URL is shown masked: its short path is hidden whole.
    expect(added.stdout).toContain('ops (webhook) -> https://hooks.example.com/…, signed');
    const [channel] = await store.listNotificationChannels();
    expect(channel).toMatchObject({ name: 'ops', hasSecret: true });

    const listed = await runCli(databaseUrl, 'notify', 'channel', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('ops');
    expect(listed.stdout).toContain('set');
    expect(listed.stdout + listed.stderr + added.stdout + added.stderr).not.toContain(secret);

    const badUrl = await runCli(databaseUrl, 'notify', 'channel', 'add', 'other', '--endpoint', 'ftp://x.example/a');
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toContain('INVALID_INPUT: url');
    const noSecret = await runCli(databaseUrl, 'notify', 'channel', 'add', 'other', '--endpoint', 'https://x.example', '--secret-env', 'FENCELINE_TEST_UNSET_VARIABLE');
    expect(noSecret.code).toBe(1);
    expect(noSecret.stderr).toContain('INVALID_INPUT: secret');
    expect(await store.listNotificationChannels()).toHaveLength(1);

    const rule = await runCli(databaseUrl, 'notify', 'rule', 'add', channel!.id, '--event', 'run_failed', '--dag', 'nightly');
    expect(rule.code).toBe(0);
    expect(rule.stdout).toContain('run_failed of nightly');
    const badEvent = await runCli(databaseUrl, 'notify', 'rule', 'add', channel!.id, '--event', 'run_exploded');
    expect(badEvent.code).toBe(1);
    expect(badEvent.stderr).toContain('INVALID_INPUT: event');
    const unknownChannel = await runCli(databaseUrl, 'notify', 'rule', 'add', '999999', '--event', 'run_failed');
    expect(unknownChannel.stderr).toContain('INVALID_INPUT: channelId');
    // The core's one sequence id rule: no channel or rule could have these ids, so nothing is read or written.
    const outOfRange = 'must be a numeric id from 1 to 9223372036854775807';
    expect((await runCli(databaseUrl, 'notify', 'rule', 'add', '0', '--event', 'run_failed')).stderr).toContain(`INVALID_INPUT: channelId: ${outOfRange}`);
    expect((await runCli(databaseUrl, 'notify', 'channel', 'delete', '9223372036854775808')).stderr).toContain(`INVALID_INPUT: ID: ${outOfRange}`);
    expect((await runCli(databaseUrl, 'notify', 'rule', 'delete', '0')).stderr).toContain(`INVALID_INPUT: ID: ${outOfRange}`);
    expect(await store.listNotificationRules()).toHaveLength(1);
    expect((await runCli(databaseUrl, 'notify', 'rule', 'list')).stdout).toContain('nightly');

    const list = await runCli(databaseUrl, 'notify', 'list', '--state', 'dead');
    expect(list.code).toBe(0);
    const badState = await runCli(databaseUrl, 'notify', 'list', '--state', 'lost');
    expect(badState.stderr).toContain('INVALID_INPUT: state');

    expect((await runCli(databaseUrl, 'notify', 'channel', 'delete', channel!.id)).code).toBe(0);
    expect(await store.listNotificationRules()).toEqual([]);
    expect((await runCli(databaseUrl, 'notify', 'channel', 'delete', channel!.id)).code).toBe(1);
    expect((await runCli(databaseUrl, 'notify', 'nothing')).code).toBe(2);
  }, 300_000);

  it('adds timed and cluster rules with durations, lists their time and pool, and refuses what they cannot take', async () => {
    const added = await runCli(databaseUrl, 'notify', 'channel', 'add', 'timed', '--endpoint', 'https://hooks.example.com/timed');
    expect(added.code).toBe(0);
    const channel = (await store.listNotificationChannels()).find((c) => c.name === 'timed')!;
    const before = (await store.listNotificationRules()).length;

    const deadline = await runCli(databaseUrl, 'notify', 'rule', 'add', channel.id, '--event', 'deadline_missed', '--after', '10m', '--dag', 'nightly');
    expect(deadline.code).toBe(0);
    expect(deadline.stdout).toContain('deadline_missed of nightly after 10m');
    const shard = await runCli(databaseUrl, 'notify', 'rule', 'add', channel.id, '--event', 'shard_leaderless', '--after', '90s');
    expect(shard.stdout).toContain('shard_leaderless of every shard after 90s');
    const pool = await runCli(databaseUrl, 'notify', 'rule', 'add', channel.id, '--event', 'pool_no_worker', '--after', '2h', '--pool', 'gpu');
    expect(pool.stdout).toContain('pool_no_worker of pool gpu after 2h');
    const rules = (await store.listNotificationRules()).slice(before);
    expect(rules.map((r) => [r.event, r.dagId, r.afterSeconds, r.pool])).toEqual([
      ['deadline_missed', 'nightly', 600, null],
      ['shard_leaderless', null, 90, null],
      ['pool_no_worker', null, 7200, 'gpu'],
    ]);
    const listed = (await runCli(databaseUrl, 'notify', 'rule', 'list')).stdout;
    expect(listed).toContain('10m');
    expect(listed).toContain('90s');
    expect(listed).toContain('gpu');

    // Each refusal names its field and stores nothing.
    const refusals = [
      [['--event', 'deadline_missed'], 'afterSeconds'],
      [['--event', 'deadline_missed', '--after', 'soon'], 'afterSeconds'],
      [['--event', 'deadline_missed', '--after', '0s'], 'afterSeconds'],
      [['--event', 'run_failed', '--after', '5m'], 'afterSeconds'],
      [['--event', 'shard_leaderless', '--after', '1m', '--dag', 'nightly'], 'dagId'],
      [['--event', 'deadline_missed', '--after', '1m', '--pool', 'gpu'], 'pool'],
      [['--event', 'pool_no_worker', '--after', '1m', '--pool', 'GPU!'], 'pool'],
    ] as const;
    for (const [flags, field] of refusals) {
      const refused = await runCli(databaseUrl, 'notify', 'rule', 'add', channel.id, ...flags);
      expect(refused.code, flags.join(' ')).toBe(1);
      expect(refused.stderr).toMatch(new RegExp(`INVALID_INPUT: .*${field}`));
    }
    expect(await store.listNotificationRules()).toHaveLength(before + 3);
    expect((await runCli(databaseUrl, 'help')).stdout).toContain('--event pool_no_worker --after 2m [--pool POOL]');
  }, 300_000);
});
