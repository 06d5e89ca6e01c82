import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from '../../tools/start/cluster';
import { fmt, type BenchContext, type CaseResult } from '../lib';

/**
 * Where the peer queues' script lives: BENCH_PEERS_DIR, else a `shared/peers` folder beside
 * the repository's own folder (where the machines this is measured on keep it).
 */
export function peersDir(env = process.env): string {
  return resolve(env.BENCH_PEERS_DIR ?? join(REPO_ROOT, '..', 'shared', 'peers'));
}

/** One peer case's median line: `case=gw.c10.tuned jobs=20000 seconds=4.1 jobs_per_s=4912.0 ...`. */
export interface PeerFigure {
  case: string;
  jobsPerSec: number;
}

/** The median lines `run.sh` prints last, one per case. */
export function parsePeerMedians(output: string): PeerFigure[] {
  const medians = output.split('# medians over repeats')[1] ?? '';
  return medians
    .split('\n')
    .filter((l) => l.startsWith('case='))
    .map((l) => Object.fromEntries(l.split(' ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])))
    .filter((kv) => Number.isFinite(Number(kv.jobs_per_s)))
    .map((kv) => ({ case: String(kv.case), jobsPerSec: Number(kv.jobs_per_s) }));
}

/**
 * The best job queue of the peers' run, by jobs/s processed (`<queue>.process.<variant>`).
 * Enqueue lines only insert, and the `raw.*` cases are the bare lease loop with no queue
 * around it (the store's own ceiling), so neither is a peer to compare with.
 */
export function bestPeer(figures: PeerFigure[]): PeerFigure | null {
  return figures
    .filter((f) => f.case.includes('.process.') && !f.case.startsWith('raw.'))
    .reduce<PeerFigure | null>((best, f) => (best && best.jobsPerSec >= f.jobsPerSec ? best : f), null);
}

/**
 * The peer queues (graphile-worker, pg-boss, BullMQ) measured on this machine minutes apart
 * from fenceline's own cases, so the e2e phases can be read as a ratio of the best tuned
 * peer of the same run. Runs the peers' `run.sh` when it is there, and says so when not.
 * BENCH_PEERS_N (default 20,000 jobs), BENCH_PEERS_REPEATS (default 1) and BENCH_PEERS_ONLY
 * (a regex of case ids) are passed on as its N, REPEATS and ONLY.
 */
export async function peers(ctx: BenchContext): Promise<CaseResult> {
  const dir = peersDir();
  const script = join(dir, 'run.sh');
  if (!existsSync(script)) {
    return { name: 'peers', line: `not run: no peer script at ${script} (set BENCH_PEERS_DIR to the folder holding run.sh)`, figures: { ran: false, script } };
  }
  const env = {
    ...process.env,
    N: process.env.BENCH_PEERS_N ?? (ctx.quick ? '2000' : '20000'),
    REPEATS: process.env.BENCH_PEERS_REPEATS ?? '1',
    ONLY: process.env.BENCH_PEERS_ONLY ?? '.',
  };
  ctx.log(`  running ${script} (N=${env.N}, REPEATS=${env.REPEATS}, ONLY=${env.ONLY})`);
  const output = await new Promise<string>((done, fail) => {
    const child = spawn('bash', [script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => ctx.log(`  peers: ${chunk.toString('utf8').trimEnd()}`));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(text) : fail(new Error(`${script} exited ${String(code)}: ${text.split('\n').slice(-5).join(' | ')}`))));
  });
  const figures = parsePeerMedians(output);
  const best = bestPeer(figures);
  return {
    name: 'peers',
    line: best
      ? `best peer ${best.case} ${fmt(best.jobsPerSec)} jobs/s; ${figures.map((f) => `${f.case} ${fmt(f.jobsPerSec)}`).join(', ')}`
      : `the peer script printed no medians (${figures.length} cases)`,
    figures: { ran: true, script, cases: figures, best },
    ...(best ? { jobsPerSec: best.jobsPerSec } : {}),
  };
}
