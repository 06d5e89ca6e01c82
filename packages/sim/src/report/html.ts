import type { RunReport, ScenarioReport } from '../scenario/run';

interface Series {
  name: string;
  points: [number, number][];
}

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563', '#ca8a04'];

function esc(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** A plain SVG chart: lines (or bars) over a shared x axis, with axis labels and a legend. */
function chart(title: string, series: Series[], opts: { xLabel: string; yLabel: string; bars?: boolean; dots?: boolean }): string {
  const w = 720;
  const h = 260;
  const m = { l: 60, r: 20, t: 30, b: 40 };
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) return `<figure><figcaption>${esc(title)}</figcaption><p>no data</p></figure>`;
  const xMin = Math.min(...all.map((p) => p[0]));
  const xMax = Math.max(...all.map((p) => p[0]), xMin + 1);
  const yMax = Math.max(1, ...all.map((p) => p[1]));
  const x = (v: number): number => m.l + ((v - xMin) / (xMax - xMin)) * (w - m.l - m.r);
  const y = (v: number): number => h - m.b - (v / yMax) * (h - m.t - m.b);
  const parts: string[] = [];
  for (let k = 0; k <= 4; k++) {
    const v = (yMax * k) / 4;
    parts.push(
      `<line x1="${m.l}" x2="${w - m.r}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e7eb"/><text x="${m.l - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${Math.round(v * 10) / 10}</text>`,
    );
    const xv = xMin + ((xMax - xMin) * k) / 4;
    parts.push(`<text x="${x(xv)}" y="${h - m.b + 16}" text-anchor="middle" font-size="11">${Math.round(xv * 10) / 10}</text>`);
  }
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    if (opts.bars) {
      const bw = Math.max(1, (w - m.l - m.r) / Math.max(1, s.points.length) - 1);
      for (const [px, py] of s.points) parts.push(`<rect x="${x(px) - bw / 2}" y="${y(py)}" width="${bw}" height="${y(0) - y(py)}" fill="${color}" opacity="0.7"/>`);
    } else if (opts.dots) {
      for (const [px, py] of s.points) parts.push(`<circle cx="${x(px)}" cy="${y(py)}" r="3" fill="${color}"/>`);
    } else {
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${s.points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`).join(' ')}"/>`);
    }
    parts.push(`<rect x="${m.l + 10 + i * 130}" y="8" width="10" height="10" fill="${color}"/><text x="${m.l + 24 + i * 130}" y="17" font-size="11">${esc(s.name)}</text>`);
  });
  parts.push(`<text x="${(w + m.l) / 2}" y="${h - 6}" text-anchor="middle" font-size="12">${esc(opts.xLabel)}</text>`);
  parts.push(`<text x="14" y="${h / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 14 ${h / 2})">${esc(opts.yLabel)}</text>`);
  return `<figure><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">${parts.join('')}</svg></figure>`;
}

function runSection(r: RunReport): string {
  const minutes = (ms: number): number => ms / 60_000;
  const t0 = r.samples[0] ? r.samples[0].atMs - (r.samples[1] ? r.samples[1].atMs - r.samples[0].atMs : 0) : 0;
  const groups = [...new Set(r.samples.flatMap((s) => Object.keys(s.leasedByGroup)))].sort();
  const running: Series[] = groups.map((g) => ({ name: g, points: r.samples.map((s) => [minutes(s.atMs - t0), s.leasedByGroup[g] ?? 0]) }));
  const latency: Series[] = Object.entries(r.startLatencyMs).map(([g, d]) => ({
    name: g,
    points: [
      [50, d.p50 / 1000],
      [90, d.p90 / 1000],
      [99, d.p99 / 1000],
      [100, d.max / 1000],
    ],
  }));
  const expiries: Series[] = [
    { name: 'lease expiries', points: r.samples.map((s) => [minutes(s.atMs - t0), s.expired]) },
    { name: 'refused writes', points: r.samples.map((s) => [minutes(s.atMs - t0), s.refused]) },
  ];
  const leaders: Series[] = [{ name: 'leader elected (shard)', points: r.leaderChanges.map((c) => [minutes(c.atMs - t0), c.shard]) }];
  const figures = Object.entries(r.figures)
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(String(v))}</td></tr>`)
    .join('');
  const violations = r.violations.map((v) => `<li><b>${v.invariant}</b> (${v.kind}) ${esc(v.message)}</li>`).join('');
  return `<section>
<h2>${esc(r.scenario)} / ${esc(r.variant)}, seed ${r.seed} - ${esc(r.outcome)}</h2>
<p>${r.events.toLocaleString('en-US')} events in ${(r.wallMs / 1000).toFixed(1)} s wall (${r.eventsPerSecond.toLocaleString('en-US')} events/s), ${(r.virtualMs / 3_600_000).toFixed(2)} virtual hours, scale ${r.scale}. Trace hash ${r.traceHash}. Replay: <code>${esc(r.replay)}</code></p>
${violations ? `<ul class="bad">${violations}</ul>` : '<p>All invariants I1-I8 held.</p>'}
<table>${figures}</table>
${chart('Running jobs per DAG group', running, { xLabel: 'virtual minutes', yLabel: 'leases held' })}
${chart('Start latency percentiles (ready to leased)', latency, { xLabel: 'percentile', yLabel: 'seconds', dots: true })}
${chart('Lease expiries and refused writes per sample interval', expiries, { xLabel: 'virtual minutes', yLabel: 'count', bars: true })}
${chart('Leader changes', leaders, { xLabel: 'virtual minutes', yLabel: 'shard', dots: true })}
</section>`;
}

/** A self-contained HTML page with the summary and the plots of every run of a report. */
export function renderHtml(report: ScenarioReport): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>fenceline sim: ${esc(report.scenario)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:900px}table{border-collapse:collapse}td{border:1px solid #ddd;padding:2px 8px}figure{margin:1em 0}figcaption{font-weight:600}.bad{color:#b91c1c}code{background:#f3f4f6;padding:1px 4px}</style>
</head><body><h1>${esc(report.scenario)}: ${esc(report.outcome)}</h1><p>${esc(report.description)}</p>${report.runs.map(runSection).join('\n')}</body></html>`;
}
