import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acquireServer } from '@fenceline/db';
import { REPO_ROOT } from '../tools/start/cluster';
import { fmt, machineInfo, type BenchContext, type CaseResult } from './lib';
import { storeCeiling } from './cases/store-ceiling';
import { endToEnd } from './cases/end-to-end';
import { renewalStorm } from './cases/renewal-storm';
import { tickAtScale } from './cases/tick';
import { failover } from './cases/failover';
import { idleCost } from './cases/idle';
import { simulatorSpeed } from './cases/simulator';
import { storeFailover } from './cases/store-failover';
import { renderMarkdown } from './report';
import { guardRun } from './cpu-guard';
import { peers } from './cases/peers';
import { fleetConnections } from './cases/fleet';
import { targetLines } from './targets';

/**
 * npm run bench [-- --quick] [--only a,b] [--out DIR]
 *
 * Runs every case against real processes and a real PostgreSQL (DATABASE_URL, else the
 * server on 127.0.0.1:5432, else an embedded one started for the run and removed after it;
 * each case in a fresh database), prints one line of figures per case, and writes a JSON report and a
 * Markdown table under bench/results/. Figures are printed and recorded; one is asserted:
 * the exit code is 1 when a case crashed and 3 when an end-to-end phase's CPU per job is
 * more than 3x its baseline in bench/cpu-baseline.json (cpu-guard.ts).
 */
const CASES: { key: string; run: (ctx: BenchContext) => Promise<CaseResult> }[] = [
  { key: 'ceiling', run: storeCeiling },
  { key: 'e2e', run: endToEnd },
  { key: 'peers', run: peers },
  { key: 'renewal', run: renewalStorm },
  { key: 'tick', run: tickAtScale },
  { key: 'failover', run: failover },
  { key: 'idle', run: idleCost },
  { key: 'sim', run: simulatorSpeed },
  { key: 'store-failover', run: storeFailover },
  { key: 'fleet', run: fleetConnections },
];

/**
 * Cases that --quick leaves out unless --only names them: the store-failover drill brings
 * up a PostgreSQL formation of its own and takes about a minute (the cluster test
 * test/store-failover.test.ts runs the same drill in the test suite), and the peer queues
 * install their own packages and take minutes, as does the fleet case, which also holds
 * tens of thousands of sockets.
 */
const NOT_IN_QUICK = new Set(['store-failover', 'peers', 'fleet']);

/**
 * Cases that run alone before the others in quick mode: the store ceiling, and the end to
 * end case, whose CPU per job the guard compares with its baseline (cpu-guard.ts).
 */
const ALONE_IN_QUICK = new Set(['ceiling', 'e2e']);

const USAGE = `usage: npm run bench -- [--quick] [--only ${CASES.map((c) => c.key).join(',')}] [--out DIR] [--set-cpu-baseline "why"]`;

function parseArgs(argv: string[]): { quick: boolean; only: string[] | null; out: string; setBaseline: string | null } {
  let quick = false;
  let only: string[] | null = null;
  let out = join(REPO_ROOT, 'bench', 'results');
  let setBaseline: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') quick = true;
    else if (a === '--only') only = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (a === '--out') out = argv[++i] ?? out;
    else if (a === '--set-cpu-baseline') setBaseline = argv[++i] ?? '';
    else {
      process.stderr.write(`unknown argument ${a}\n${USAGE}\n`);
      process.exit(64);
    }
  }
  if (setBaseline !== null && setBaseline.trim() === '') {
    process.stderr.write(`--set-cpu-baseline needs the reason the baseline moves, in words\n${USAGE}\n`);
    process.exit(64);
  }
  const unknown = (only ?? []).filter((k) => !CASES.some((c) => c.key === k));
  if (unknown.length > 0) {
    process.stderr.write(`unknown case ${unknown.join(', ')}\n${USAGE}\n`);
    process.exit(64);
  }
  return { quick, only, out, setBaseline };
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const server = await acquireServer();
  if (server.source === 'embedded') process.stderr.write(`no DATABASE_URL and no PostgreSQL at 127.0.0.1:5432: started an embedded one at ${server.url}\n`);
  // The cases read it from here (bench/lib.ts), as do the processes they start.
  process.env.DATABASE_URL = server.url;
  try {
    return await runCases(args);
  } finally {
    await server.release();
  }
}

async function runCases(args: ReturnType<typeof parseArgs>): Promise<number> {
  const ctx: BenchContext = { quick: args.quick, log: (msg) => process.stderr.write(`${msg}\n`) };
  const startedAt = new Date();
  const machine = await machineInfo();
  process.stdout.write(
    `fenceline bench (${args.quick ? 'quick' : 'full'}) on ${String(machine.cores)} cores, PostgreSQL ${String(machine.postgres)}, commit ${String(machine.commit)}\n`,
  );
  const results: (CaseResult & { key: string; seconds: number; crashed?: string })[] = [];
  let ceiling: number | null = null;
  const runCase = async (c: (typeof CASES)[number]): Promise<void> => {
    const t0 = performance.now();
    ctx.log(`[${c.key}] starting`);
    try {
      const r = await c.run(ctx);
      const seconds = Math.round(performance.now() - t0) / 1000;
      if (c.key === 'ceiling' && r.jobsPerSec) ceiling = r.jobsPerSec;
      const ratio = r.jobsPerSec != null && ceiling && c.key !== 'ceiling' ? ` [${fmt((100 * r.jobsPerSec) / ceiling, 1)}% of ceiling]` : '';
      process.stdout.write(`${c.key.padEnd(9)} ${r.line}${ratio}\n`);
      results.push({ key: c.key, seconds, ...r });
    } catch (err) {
      const seconds = Math.round(performance.now() - t0) / 1000;
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      process.stdout.write(`${c.key.padEnd(9)} CRASHED: ${message.split('\n')[0]}\n`);
      ctx.log(message);
      results.push({ key: c.key, name: c.key, line: 'crashed', figures: {}, seconds, crashed: message });
    }
  };
  const selected = CASES.filter((c) => (args.only ? args.only.includes(c.key) : !(args.quick && NOT_IN_QUICK.has(c.key))));
  if (args.quick) {
    // Quick mode is CI's smoke test that every case still runs, and its CPU guard: the
    // ceiling and the end to end case run alone, then the other cases run side by side,
    // so their figures are disturbed by each other and only full runs give figures to compare.
    for (const c of selected.filter((c) => ALONE_IN_QUICK.has(c.key))) await runCase(c);
    await Promise.all(selected.filter((c) => !ALONE_IN_QUICK.has(c.key)).map(runCase));
    results.sort((a, b) => CASES.findIndex((c) => c.key === a.key) - CASES.findIndex((c) => c.key === b.key));
  } else {
    for (const c of selected) await runCase(c);
  }
  const report = {
    mode: args.quick ? 'quick' : 'full',
    startedAt: startedAt.toISOString(),
    seconds: (Date.now() - startedAt.getTime()) / 1000,
    machine,
    ceilingJobsPerSec: ceiling,
    cases: results,
  };
  mkdirSync(join(args.out, 'raw'), { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  writeFileSync(join(args.out, 'raw', `${stamp}-${report.mode}.json`), JSON.stringify(report, null, 2));
  writeFileSync(join(args.out, `latest-${report.mode}.json`), JSON.stringify(report, null, 2));
  writeFileSync(join(args.out, `latest-${report.mode}.md`), renderMarkdown(report));
  process.stdout.write(`report: bench/results/latest-${report.mode}.md (${report.seconds.toFixed(0)} s)\n`);
  for (const line of targetLines(results)) process.stdout.write(`${line}\n`);
  if (results.some((r) => r.crashed)) return 1;
  return guardCpu(results, report.mode as 'quick' | 'full', String(machine.commit), args.setBaseline);
}

/** Prints the CPU guard's verdict (cpu-guard.ts) and returns its exit code. */
function guardCpu(results: { key: string; figures: Record<string, unknown> }[], mode: 'quick' | 'full', commit: string, setBaseline: string | null): number {
  const outcome = guardRun(results, mode, commit, setBaseline);
  for (const line of outcome.out) process.stdout.write(`${line}\n`);
  for (const line of outcome.err) process.stderr.write(`${line}\n`);
  return outcome.code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
