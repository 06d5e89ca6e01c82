import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { parse as parseYaml } from 'yaml';
import { parseDagId } from '@fenceline/core';
import { acquireServer, createDatabase, dropDatabase, openStore } from '@fenceline/db';
import { Cluster, FAST_TTL_ENV, REPO_ROOT, sleep } from '../../tools/start/cluster';

/**
 * `npm run example:bank`: moves money between two accounts under chaos and checks the
 * books. Starts a cluster (2 schedulers, 3 workers) on a fresh database, a bank database
 * with alice and bob at 1000 each, runs the bank-transfers DAG (dag.yaml) three times
 * while workers are paused past their leases and killed, then checks that every transfer
 * was applied exactly once and the balances are what those transfers say. Exits 1 if not.
 */
const RUNS = 3;
const OPENING = 1000;
const TTL_MS = Number(FAST_TTL_ENV.FENCELINE_LEASE_TTL_MS);

async function main(): Promise<number> {
  const server = await acquireServer();
  const name = `fenceline_bank_${randomBytes(4).toString('hex')}`;
  const schedulerDb = await createDatabase(server.url, name);
  const bankUrl = await createDatabase(server.url, `${name}_bank`);
  const bank = postgres(bankUrl, { max: 2, onnotice: () => undefined });
  const store = await openStore({ databaseUrl: schedulerDb, applicationName: 'fenceline-bank-example', max: 2 });
  const cluster = new Cluster({
    databaseUrl: schedulerDb,
    workerToken: randomBytes(18).toString('base64url'),
    schedulers: 2,
    workers: 3,
    workerSlots: 2,
    basePort: 19_400 + Math.floor(Math.random() * 500),
    output: process.env.FENCELINE_EXAMPLE_VERBOSE ? 'prefixed' : 'quiet',
    tasksModule: join(REPO_ROOT, 'examples', 'bank', 'tasks.ts'),
    env: { ...FAST_TTL_ENV, BANK_DATABASE_URL: bankUrl, FENCELINE_SHUTDOWN_GRACE_MS: '2000' },
  });
  // Stopped from outside (Ctrl-C, or a test's time bound), it takes its processes with it.
  const stopNow = () => {
    cluster.killAll();
    process.exit(130);
  };
  process.once('SIGINT', stopNow);
  process.once('SIGTERM', stopNow);
  try {
    await bank`create table accounts (id text primary key, balance bigint not null)`;
    // No unique key on the transfer's effect key: a second transfer for one key would be
    // stored and counted, so balanced books show the fenced transaction at work.
    await bank`create table transfers (id bigserial primary key, key text not null, from_account text not null, to_account text not null, amount bigint not null, fence bigint not null)`;
    await bank`insert into accounts values ('alice', ${OPENING}), ('bob', ${OPENING})`;
    const { shardCount } = await store.initCluster(4);
    const spec = parseYaml(await readFile(join(REPO_ROOT, 'examples', 'bank', 'dag.yaml'), 'utf8'));
    await store.putDag(spec, shardCount);
    await cluster.start();
    console.log(`bank example: ${RUNS} runs of bank-transfers, workers paused and killed meanwhile`);
    // Faults start once every worker has come up: a worker paused while it starts runs nothing.
    const upBy = Date.now() + 180_000;
    while ((await store.listWorkers(30_000)).length < 3 && Date.now() < upBy) await sleep(500);
    for (let i = 0; i < RUNS; i++) await store.triggerRun(parseDagId('bank-transfers'));

    // Chaos until every run has ended: a worker paused past its lease every few seconds,
    // and now and then one killed mid-job and started again.
    let faults = 0;
    const deadline = Date.now() + 10 * 60_000;
    for (let round = 0; Date.now() < deadline; round++) {
      const runs = await store.listRuns({ dagId: parseDagId('bank-transfers'), limit: RUNS });
      if (runs.length === RUNS && runs.every((r) => r.state === 'succeeded' || r.state === 'failed')) break;
      const w = `worker-${1 + (round % 3)}`;
      if (round % 6 === 5) {
        cluster.signal(w, 'SIGKILL');
        await sleep(1000);
        cluster.startWorker(round % 3);
      } else {
        cluster.signal(w, 'SIGSTOP');
        await sleep(TTL_MS * 1.5);
        cluster.signal(w, 'SIGCONT');
      }
      faults++;
      await sleep(3000);
    }
    const runs = await store.listRuns({ dagId: parseDagId('bank-transfers'), limit: RUNS });
    console.log(`${faults} faults injected; runs: ${runs.map((r) => r.state).join(', ')}`);
    return await checkBooks(bank, RUNS);
  } finally {
    await cluster.stop(5000);
    await store.close();
    await bank.end({ timeout: 5 });
    await dropDatabase(server.url, name).catch(() => undefined);
    await dropDatabase(server.url, `${name}_bank`).catch(() => undefined);
    await server.release();
  }
}

/** Every transfer once, and balances equal to the opening ones moved by exactly those transfers. */
async function checkBooks(bank: postgres.Sql, runs: number): Promise<number> {
  const accounts = Object.fromEntries((await bank<{ id: string; balance: string }[]>`select id, balance from accounts`).map((a) => [a.id, Number(a.balance)]));
  const transfers = await bank<{ from_account: string; to_account: string; amount: string }[]>`select from_account, to_account, amount from transfers`;
  const expected: Record<string, number> = { alice: OPENING, bob: OPENING };
  for (const t of transfers) {
    expected[t.from_account]! -= Number(t.amount);
    expected[t.to_account]! += Number(t.amount);
  }
  const [dup] = await bank<
    { keys: number; extra: number }[]
  >`select count(*)::int as keys, coalesce(sum(n - 1), 0)::int as extra from (select count(*) as n from transfers group by key having count(*) > 1) d`;
  const [ledger] = await bank<{ keys: number; found: number }[]>`select count(*)::int as keys, count(*) filter (where fence > applied_fence)::int as found from fenceline_effects`;
  const wanted = runs * 12;
  const problems: string[] = [];
  if (dup!.keys > 0) problems.push(`${dup!.extra} duplicate transfers over ${dup!.keys} keys: a transfer was applied more than once`);
  if (transfers.length !== wanted) problems.push(`${transfers.length} transfers recorded, ${wanted} expected (12 per run)`);
  if (ledger!.keys !== wanted) problems.push(`${ledger!.keys} effect keys in the ledger, ${wanted} expected`);
  for (const id of ['alice', 'bob']) if (accounts[id] !== expected[id]) problems.push(`${id} holds ${accounts[id]}, the transfers say ${expected[id]}`);
  if ((accounts.alice ?? 0) + (accounts.bob ?? 0) !== 2 * OPENING) problems.push(`the accounts hold ${(accounts.alice ?? 0) + (accounts.bob ?? 0)} in all, not ${2 * OPENING}`);
  console.log(
    `alice ${accounts.alice}, bob ${accounts.bob}; ${transfers.length} transfers, ${dup!.extra} duplicates; ${ledger!.found} later attempts found their transfer already applied`,
  );
  if (problems.length > 0) {
    console.error(`the books do not balance:\n  ${problems.join('\n  ')}`);
    return 1;
  }
  console.log('the books balance');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.stack : String(err));
    process.exit(3);
  },
);
