import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * npx tsx bench/profile-summary.ts <dir-or-file.cpuprofile> [top] [--by-package] [--per N]
 *
 * Sums self time per function (name and file:line) over V8 CPU profiles written by
 * `node --cpu-prof` (set BENCH_CPU_PROF=<dir> for a bench run) and prints the top entries,
 * with the share of the profile's total, so the hot path can be read without DevTools.
 *
 * --by-package sums self time by where the code lives instead: each workspace package
 * (packages/core, packages/sim, apps/scheduler, ...), node_modules, Node's own modules,
 * garbage collection, and native code with no script (microtask runs and the like).
 * V8 counts inlined builtins (Map, Array) as self time of the calling function, so this
 * is close to "time spent on behalf of" each package. --per N adds microseconds per unit
 * (say, per job simulated) to each line.
 */
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const flag = (name: string): boolean => args.includes(name);
const option = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const positional = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--per');
const target = positional[0];
const top = Number(positional[1] ?? 30);
const byPackage = flag('--by-package');
const per = option('--per') === undefined ? null : Number(option('--per'));
if (!target || (per !== null && !(per > 0))) {
  process.stderr.write('usage: npx tsx bench/profile-summary.ts <dir-or-file.cpuprofile> [top] [--by-package] [--per N]\n');
  process.exit(64);
}

/** Where a frame's code lives, for --by-package. */
function packageOf(frame: Node['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(root)') return functionName;
    return 'native (no script)';
  }
  if (url.includes('/node_modules/')) return 'node_modules';
  const workspace = url.match(/\/(packages|apps)\/([^/]+)\//);
  if (workspace) return `${workspace[1]}/${workspace[2]}`;
  if (url.startsWith('node:')) return 'node internals';
  return 'other';
}

const files = target.endsWith('.cpuprofile')
  ? [target]
  : readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(target, f));
for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    const url = n.callFrame.url.replace(/^.*\/(node_modules|packages|apps)\//, '$1/');
    const key = byPackage ? packageOf(n.callFrame) : `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const idle = [...self].filter(([k]) => k.startsWith('(idle)') || k.startsWith('(program)')).reduce((s, [, v]) => s + v, 0);
  process.stdout.write(`\n${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(((total - idle) / total) * 100).toFixed(0)}% busy\n`);
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const perUnit = per === null ? '' : `  ${(us / per).toFixed(1).padStart(8)} µs each`;
    process.stdout.write(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms${perUnit}  ${key}\n`);
  }
}
