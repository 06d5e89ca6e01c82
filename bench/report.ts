import { fmt } from './lib';

interface Report {
  mode: string;
  startedAt: string;
  seconds: number;
  machine: Record<string, unknown>;
  ceilingJobsPerSec: number | null;
  cases: { key: string; name: string; line: string; seconds: number; jobsPerSec?: number; crashed?: string; notes?: string[]; details?: string }[];
}

/** The Markdown table of one run: a line per case, the ratio to the store ceiling, and the machine. */
export function renderMarkdown(report: Report): string {
  const m = report.machine;
  const out: string[] = [];
  out.push(`# fenceline bench: ${report.mode} run of ${report.startedAt}`);
  out.push('');
  out.push(
    `Commit ${String(m.commit)}, Node ${String(m.node)}, ${String(m.cores)} cores (${String(m.cpuModel)}), ${String(m.memoryGb)} GB, PostgreSQL ${String(m.postgres)}, load average at start ${JSON.stringify(m.loadAverageAtStart)}. The machine is shared, so absolute figures drift from run to run; the ratios to the store ceiling were measured in this same run and are the figures to compare.`,
  );
  out.push('');
  out.push('| case | figures | share of store ceiling | wall time |');
  out.push('|---|---|---|---|');
  for (const c of report.cases) {
    const ratio = c.jobsPerSec != null && report.ceilingJobsPerSec ? `${fmt((100 * c.jobsPerSec) / report.ceilingJobsPerSec, 1)}%` : '';
    out.push(`| ${c.name} | ${c.crashed ? `**crashed**: ${c.crashed.split('\n')[0]}` : c.line.replace(/\|/g, '\\|')} | ${ratio} | ${c.seconds.toFixed(1)} s |`);
  }
  for (const c of report.cases) {
    if (!c.notes?.length && !c.details) continue;
    out.push('');
    out.push(`## ${c.name}`);
    out.push('');
    for (const n of c.notes ?? []) out.push(`- ${n}`);
    if (c.details) {
      out.push('');
      out.push('```');
      out.push(c.details);
      out.push('```');
    }
  }
  out.push('');
  return out.join('\n');
}

/** A horizontal bar chart in text, which reads in any Markdown viewer. */
export function barChart(rows: { label: string; value: number }[], unit: string, width = 40): string {
  const max = Math.max(...rows.map((r) => r.value), 1);
  const pad = Math.max(...rows.map((r) => r.label.length));
  return rows.map((r) => `${r.label.padEnd(pad)} ${'#'.repeat(Math.max(1, Math.round((r.value / max) * width)))} ${fmt(r.value, r.value < 10 ? 1 : 0)} ${unit}`).join('\n');
}
