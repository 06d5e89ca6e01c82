import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../tools/start/cluster';
import { fmt, round, type BenchContext, type CaseResult } from '../lib';

/**
 * Case 7: the simulator's speed on the `mission-day` scenario, through its own CLI
 * (`npm run sim -- mission-day`). The run gets a wall-time budget; if it does not finish,
 * the case records how far it got from the CLI's progress lines rather than nothing.
 */
export async function simulatorSpeed(ctx: BenchContext): Promise<CaseResult> {
  // The target is the whole day in under 6 minutes, so a full run is given that long and a
  // little more: a budget below the target would stop a run that meets it and say it failed.
  const budgetMs = ctx.quick ? 15_000 : 390_000;
  if (!existsSync(join(REPO_ROOT, 'packages/sim/src/cli/main.ts'))) {
    return { name: 'simulator speed', line: 'not measured: the simulator CLI is not there yet', figures: { available: false } };
  }
  const jsonPath = join(tmpdir(), `fenceline-bench-sim-${process.pid}.json`);
  const started = performance.now();
  const { code, stdout, stderr, timedOut } = await run(
    ['--max-semi-space-size=64', '--import', 'tsx', join(REPO_ROOT, 'packages/sim/src/cli/main.ts'), 'mission-day', '--json', jsonPath],
    budgetMs,
  );
  const wallMs = performance.now() - started;
  if (!timedOut && existsSync(jsonPath)) {
    const report = JSON.parse(readFileSync(jsonPath, 'utf8')) as { runs: { events: number; wallMs: number; eventsPerSecond: number; virtualMs: number; outcome: string }[] };
    rmSync(jsonPath, { force: true });
    const r = report.runs[0]!;
    return {
      name: 'simulator speed',
      line: `mission-day: ${fmt(r.events)} events in ${fmt(r.wallMs / 1000, 1)} s = ${fmt(r.eventsPerSecond)} events/s (${fmt(r.virtualMs / 3_600_000, 1)} virtual h, outcome ${r.outcome}, exit ${code})`,
      figures: {
        finished: true,
        exitCode: code,
        runs: report.runs.map((x) => ({ events: x.events, wallMs: x.wallMs, eventsPerSecond: x.eventsPerSecond, virtualMs: x.virtualMs, outcome: x.outcome })),
      },
    };
  }
  // Progress lines: "... N virtual min, E events, S s".
  const progress = [...stderr.matchAll(/(\d+) virtual min, ([\d,]+) events, ([\d.]+) s/g)].pop();
  const events = progress ? Number(progress[2]!.replace(/,/g, '')) : null;
  const seconds = progress ? Number(progress[3]) : null;
  const virtualMin = progress ? Number(progress[1]) : null;
  ctx.log(`  sim exit ${code}${timedOut ? ' (stopped at the budget)' : ''}; last progress: ${progress?.[0] ?? 'none'}; stdout tail: ${stdout.slice(-300)}`);
  return {
    name: 'simulator speed',
    line: timedOut
      ? `mission-day did not finish within the ${budgetMs / 1000} s budget: ${virtualMin ?? '?'} of 1,440 virtual min, ${fmt(events)} events in ${fmt(seconds, 1)} s = ${fmt(events && seconds ? events / seconds : null)} events/s`
      : `mission-day exited ${code} without a report (${fmt(wallMs / 1000, 1)} s)`,
    figures: {
      finished: false,
      timedOut,
      exitCode: code,
      budgetMs,
      virtualMinutes: virtualMin,
      events,
      seconds,
      eventsPerSecond: events && seconds ? round(events / seconds, 0) : null,
      stderrTail: stderr.slice(-500),
    },
  };
}

function run(args: string[], budgetMs: number): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, budgetMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}
