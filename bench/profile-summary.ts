import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * npx tsx bench/profile-summary.ts <dir-or-file.cpuprofile> [top]
 *
 * Sums self time per function (name and file:line) over V8 CPU profiles written by
 * `node --cpu-prof` (set BENCH_CPU_PROF=<dir> for a bench run) and prints the top entries,
 * with the share of the profile's total, so the hot path can be read without DevTools.
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

const target = process.argv[2];
const top = Number(process.argv[3] ?? 30);
if (!target) {
  process.stderr.write('usage: npx tsx bench/profile-summary.ts <dir-or-file.cpuprofile> [top]\n');
  process.exit(64);
}
const files = target.endsWith('.cpuprofile') ? [target] : readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(target, f));
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
    const key = `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
  });
  const idle = [...self].filter(([k]) => k.startsWith('(idle)') || k.startsWith('(program)')).reduce((s, [, v]) => s + v, 0);
  process.stdout.write(`\n${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(((total - idle) / total) * 100).toFixed(0)}% busy\n`);
  for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}\n`);
  }
}
