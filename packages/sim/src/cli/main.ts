import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidInputError } from '@fenceline/core';
import { renderHtml } from '../report/html';
import { runScenario, type RunReport, type ScenarioFile, type ScenarioProgress, type ScenarioReport } from '../scenario/run';
import { SCENARIOS } from '../scenarios';

/**
 * npm run sim -- <scenario|file.json> [--seed N] [--runs K] [--scale F] [--variant NAME]
 *                 [--json out.json] [--html out.html] [--replay | --replay-dag DAG] [--keep-going] [--quiet]
 *
 * --replay adds to the JSON report a replay of one DAG's jobs over virtual time (the
 * fan-out DAG by default; --replay-dag names another), as the console's Replay panel draws it.
 *
 * Exit codes: 0 every run kept every invariant; 1 a safety invariant was violated;
 * 2 a liveness invariant was violated; 3 the simulation crashed; 64 bad usage (including a
 * scenario file that cannot run: every wrong field is named).
 */
const EXIT = { ok: 0, safety: 1, liveness: 2, crash: 3, usage: 64 } as const;

interface Args {
  scenario: string;
  seed?: number;
  runs?: number;
  scale?: number;
  variants?: string[];
  json?: string;
  html?: string;
  replay?: true | string;
  quiet: boolean;
  keepGoing?: boolean;
}

function usage(message?: string): never {
  if (message) process.stderr.write(`${message}\n`);
  process.stderr.write(
    `usage: npm run sim -- <${Object.keys(SCENARIOS).join('|')}|file.json> [--seed N] [--runs K] [--scale F] [--variant NAME] [--json out.json] [--html out.html] [--replay | --replay-dag DAG] [--keep-going] [--quiet]\n`,
  );
  process.exit(EXIT.usage);
}

function parseArgs(argv: string[]): Args {
  const args: Args = { scenario: '', quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      return v;
    };
    const number = (): number => {
      const v = Number(value());
      if (!Number.isFinite(v)) usage(`${a} needs a number`);
      return v;
    };
    if (a === '--seed') args.seed = Math.floor(number());
    else if (a === '--runs') args.runs = Math.max(1, Math.floor(number()));
    else if (a === '--scale') args.scale = number();
    else if (a === '--variant') args.variants = [...(args.variants ?? []), value()];
    else if (a === '--json') args.json = value();
    else if (a === '--html') args.html = value();
    else if (a === '--replay') args.replay = true;
    else if (a === '--replay-dag') args.replay = value();
    else if (a === '--quiet') args.quiet = true;
    else if (a === '--keep-going') args.keepGoing = true;
    else if (a === '--help' || a === '-h') usage();
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (!args.scenario) args.scenario = a;
    else usage(`unexpected argument ${a}`);
  }
  if (!args.scenario) usage('name a scenario');
  return args;
}

function loadScenario(name: string): ScenarioFile {
  const named = SCENARIOS[name];
  if (named) return named;
  if (name.endsWith('.json')) {
    let text: string;
    try {
      text = readFileSync(resolve(name), 'utf8');
    } catch (err) {
      usage(`cannot read ${name}: ${(err as Error).message}`);
    }
    try {
      return JSON.parse(text) as ScenarioFile;
    } catch (err) {
      usage(`${name} is not valid JSON: ${(err as Error).message}`);
    }
  }
  usage(`no scenario named "${name}"`);
}

/** One line, redrawn in place on a terminal. */
function progressBar(p: ScenarioProgress, wallStartMs: number): string {
  const fraction = p.totalMs > 0 ? Math.min(1, p.virtualMs / p.totalMs) : 1;
  const width = 30;
  const filled = Math.round(fraction * width);
  const wallS = (performance.now() - wallStartMs) / 1000;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% run ${p.run + 1}/${p.runs} ${p.variant} seed ${p.seed} ${p.phase} ${(p.virtualMs / 60_000).toFixed(0)} virtual min, ${p.events.toLocaleString('en-US')} events, ${wallS.toFixed(1)} s`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')).join('\n');
}

function summary(report: ScenarioReport): string {
  const lines: string[] = [];
  const head = ['run', 'seed', 'outcome', 'events', 'wall s', 'events/s', 'virtual h', 'trace hash'];
  lines.push(
    table([
      head,
      ...report.runs.map((r) => [
        r.variant,
        String(r.seed),
        r.outcome,
        r.events.toLocaleString('en-US'),
        (r.wallMs / 1000).toFixed(1),
        r.eventsPerSecond.toLocaleString('en-US'),
        (r.virtualMs / 3_600_000).toFixed(2),
        r.traceHash,
      ]),
    ]),
  );
  const shown = report.runs.length <= 4 ? report.runs : report.runs.filter((r) => r.outcome !== 'ok').slice(0, 4);
  for (const r of shown) {
    lines.push(
      '',
      `${r.variant} (seed ${r.seed}, scale ${r.scale}; ${r.size.dags.toLocaleString('en-US')} DAGs, ${r.size.workers.toLocaleString('en-US')} workers, ${r.size.nodes} nodes):`,
    );
    lines.push(table(Object.entries(r.figures).map(([k, v]) => [`  ${k}`, String(v)])));
    if (r.nodeErrors.unexpected.length > 0)
      lines.push(`  unexpected node errors (${r.nodeErrors.unexpected.length}):`, ...r.nodeErrors.unexpected.slice(0, 5).map((e) => `    ${e}`));
  }
  if (report.runs.length > 4) {
    const bad = report.runs.filter((r) => r.outcome !== 'ok').length;
    lines.push('', `${report.runs.length - bad} of ${report.runs.length} runs kept every invariant.`);
  }
  return lines.join('\n');
}

function failure(r: RunReport): string {
  const v = r.violations[0];
  const lines = [`FAILED ${r.scenario}/${r.variant}: ${r.outcome}`];
  if (v) lines.push(`  ${v.invariant} (${v.kind}) at ${new Date(v.atMs).toISOString()}: ${v.message}`);
  if (r.violationCounts)
    lines.push(
      `  violations: ${Object.entries(r.violationCounts)
        .map(([id, n]) => `${id} ${n}`)
        .join(', ')}`,
    );
  if (r.crash) lines.push(`  crash: ${r.crash.split('\n').slice(0, 6).join('\n  ')}`);
  if (r.traceTail.length > 0) lines.push('  last events:', ...r.traceTail.slice(-25).map((l) => `    ${l}`));
  lines.push(`  replay: ${r.replay}`, `  --seed ${r.seed}`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const file = loadScenario(args.scenario);
  const tty = process.stderr.isTTY && !args.quiet;
  const wallStart = performance.now();
  let lastDraw = 0;
  const report = await runScenario(
    file,
    (p) => {
      if (args.quiet) return;
      const now = performance.now();
      if (now - lastDraw < (tty ? 200 : 5000) && p.phase !== 'done') return;
      lastDraw = now;
      process.stderr.write(tty ? `\r${progressBar(p, wallStart)}\u001b[K` : `${progressBar(p, wallStart)}\n`);
    },
    {
      seed: args.seed,
      runs: args.runs,
      scale: args.scale,
      variants: args.variants,
      dagReplay: args.replay === true ? true : args.replay ? { dagId: args.replay } : undefined,
      keepGoing: args.keepGoing,
    },
  );
  if (tty) process.stderr.write('\n');
  process.stdout.write(`${summary(report)}\n`);
  for (const r of report.runs) if (r.outcome !== 'ok') process.stdout.write(`\n${failure(r)}\n`);
  if (args.json) writeFileSync(resolve(args.json), JSON.stringify(report, null, 2));
  if (args.html) writeFileSync(resolve(args.html), renderHtml(report));
  // The resident set at its largest over the run (maxRSS is in kilobytes), not as it is now.
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const mem = process.memoryUsage();
  process.stdout.write(`\npeak RSS ${(peakRss / 1e6).toFixed(0)} MB, heap now ${(mem.heapUsed / 1e6).toFixed(0)} MB; ${report.outcome}\n`);
  // exitCode, not exit(): on a pipe stdout is written asynchronously and exit() would cut it off.
  process.exitCode = EXIT[report.outcome];
}

main().catch((err: unknown) => {
  // A scenario that cannot run is the user's input, not a crash of the simulator.
  if (err instanceof InvalidInputError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(EXIT.usage);
  }
  process.stderr.write(`simulator crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(EXIT.crash);
});
