'use client';

import { useEffect, useRef, useState, type ReactNode } from 'react';
import { BarChart, LineChart, seriesColor } from '@/components/charts';
import { Card, Empty, PageHeader, Stat } from '@/components/ui';
import { DEFAULT_KNOBS, type InvariantTable, type Knobs, type SimMessage, type SimProgress, type SimRunReport } from './knobs';
import { ReplayPanel } from './replay-panel';

interface Side {
  label: string;
  knobs: Knobs;
  state: 'running' | 'done' | 'failed';
  progress: SimProgress | null;
  report: SimRunReport | null;
  invariants: InvariantTable | null;
  error: string | null;
}

function capLabel(k: Knobs): string {
  return k.capPercent === null ? 'cap off' : `cap ${k.capPercent}%`;
}

/**
 * The deterministic simulator, run in the browser. Nothing here talks to the store: the
 * simulator brings its own in-memory store, so a viewer may use the page as freely as an
 * operator.
 */
export default function SimulatorPage() {
  const [knobs, setKnobs] = useState<Knobs>(DEFAULT_KNOBS);
  const [sides, setSides] = useState<Side[]>([]);
  const workers = useRef<Worker[]>([]);

  const stopAll = () => {
    for (const w of workers.current) w.terminate();
    workers.current = [];
  };
  // A run left behind by navigating away would keep a core busy for nothing.
  useEffect(() => stopAll, []);

  const start = (configs: { label: string; knobs: Knobs }[]) => {
    stopAll();
    setSides(configs.map((c) => ({ ...c, state: 'running', progress: null, report: null, invariants: null, error: null })));
    configs.forEach((c, i) => {
      const worker = new Worker(new URL('./sim.worker.ts', import.meta.url), { type: 'module' });
      workers.current.push(worker);
      const update = (patch: Partial<Side>) => setSides((all) => all.map((s, j) => (j === i ? { ...s, ...patch } : s)));
      worker.onmessage = (e: MessageEvent<SimMessage>) => {
        const m = e.data;
        if (m.kind === 'progress') update({ progress: m.progress });
        else if (m.kind === 'report') {
          update({ state: 'done', report: m.report, invariants: m.invariants });
          worker.terminate();
        } else {
          update({ state: 'failed', error: m.message });
          worker.terminate();
        }
      };
      worker.onerror = (e) => {
        update({ state: 'failed', error: e.message || 'the simulator worker failed to start' });
        worker.terminate();
      };
      worker.postMessage({ label: c.label, knobs: c.knobs });
    });
  };

  const running = sides.some((s) => s.state === 'running');
  const set = <K extends keyof Knobs>(key: K, value: Knobs[K]) => setKnobs((k) => ({ ...k, [key]: value }));
  const num = (key: 'workers' | 'fanoutTasks' | 'otherDags' | 'seed', label: string, min: number, max: number) => (
    <label className="field">
      <span>{label}</span>
      <input type="number" min={min} max={max} value={knobs[key]} data-testid={`sim-knob-${key}`} onChange={(e) => set(key, Math.max(min, Math.min(max, Math.round(Number(e.target.value) || min))))} />
    </label>
  );
  const prob = (key: 'workerPause' | 'workerCrash' | 'leaderCrash' | 'linkCut', label: string) => (
    <label className="field">
      <span>{label}</span>
      <input type="number" min={0} max={1} step={0.01} value={knobs[key]} data-testid={`sim-knob-${key}`} onChange={(e) => set(key, Math.max(0, Math.min(1, Number(e.target.value) || 0)))} />
    </label>
  );

  return (
    <>
      <PageHeader
        title="Simulator"
        subtitle="The production scheduling logic against an in-memory store and a simulated fleet, with faults, in virtual time. It runs in this browser and writes nothing to the cluster."
        actions={
          <>
            <button className="primary" disabled={running} data-testid="sim-run" onClick={() => start([{ label: capLabel(knobs), knobs }])}>
              Run
            </button>
            <button
              disabled={running}
              data-testid="sim-compare"
              onClick={() => {
                const capOn = { ...knobs, capPercent: knobs.capPercent ?? DEFAULT_KNOBS.capPercent };
                const capOff = { ...knobs, capPercent: null };
                start([
                  { label: capLabel(capOn), knobs: capOn },
                  { label: capLabel(capOff), knobs: capOff },
                ]);
              }}
            >
              Compare cap on / off
            </button>
            {running ? (
              <button
                data-testid="sim-stop"
                onClick={() => {
                  stopAll();
                  setSides((all) => all.map((s) => (s.state === 'running' ? { ...s, state: 'failed', error: 'stopped' } : s)));
                }}
              >
                Stop
              </button>
            ) : null}
          </>
        }
      />
      <Card title="Scenario: fanout, scaled down">
        <p className="muted small">
          One DAG fans out five-minute jobs three minutes in, while the other DAGs run a one-minute job every 15 minutes. 30 virtual minutes with faults, then 10 healed. Fault rates are the
          probability per 10-second tick that such a fault starts somewhere.
        </p>
        <div className="field-row">
          {num('workers', 'Workers', 1, 5000)}
          <label className="field">
            <span>Cap % of pool</span>
            <input
              type="number"
              min={1}
              max={100}
              disabled={knobs.capPercent === null}
              value={knobs.capPercent ?? ''}
              data-testid="sim-knob-cap"
              onChange={(e) => set('capPercent', Math.max(1, Math.min(100, Math.round(Number(e.target.value) || 1))))}
            />
          </label>
          <label className="field">
            <span>Cap off</span>
            <input type="checkbox" checked={knobs.capPercent === null} data-testid="sim-knob-cap-off" onChange={(e) => set('capPercent', e.target.checked ? null : (DEFAULT_KNOBS.capPercent ?? 30))} />
          </label>
          {num('fanoutTasks', 'Fan-out jobs', 1, 5000)}
          {num('otherDags', 'Other DAGs', 0, 1000)}
          {num('seed', 'Seed', 1, 1_000_000)}
        </div>
        <div className="field-row">
          {prob('workerPause', 'Worker pause')}
          {prob('workerCrash', 'Worker crash')}
          {prob('leaderCrash', 'Leader crash')}
          {prob('linkCut', 'Link cut')}
        </div>
      </Card>
      {sides.length === 0 ? (
        <Empty>Set the knobs and press Run, or Compare to run the same world with the cap on and off side by side.</Empty>
      ) : (
        <div className={sides.length > 1 ? 'grid-2' : ''}>
          {sides.map((s, i) => (
            <SideView key={i} side={s} index={i} />
          ))}
        </div>
      )}
    </>
  );
}

function fmt(v: number | string | boolean | undefined, digits = 1): string {
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(digits);
  return v === undefined ? '–' : String(v);
}

function SideView({ side, index }: { side: Side; index: number }) {
  const p = side.progress;
  const fraction = side.state === 'done' ? 1 : p && p.totalMs > 0 ? Math.min(1, p.virtualMs / p.totalMs) : 0;
  const r = side.report;
  return (
    <div data-testid={`sim-side-${index}`} data-state={side.state}>
      <Card title={`Run ${index + 1}: ${side.label}, seed ${side.knobs.seed}`}>
        <div className="meter" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(fraction * 100)} data-testid={`sim-progress-${index}`}>
          <div className="meter-fill" style={{ width: `${fraction * 100}%` }} />
        </div>
        <div className="small muted" data-testid={`sim-status-${index}`}>
          {side.state === 'running'
            ? p
              ? `${p.phase}: ${(p.virtualMs / 60_000).toFixed(1)} of ${(p.totalMs / 60_000).toFixed(0)} virtual min, ${p.events.toLocaleString('en-US')} events`
              : 'starting the simulator…'
            : side.state === 'failed'
              ? <span className="bad-text">{side.error}</span>
              : r
                ? `done: ${r.events.toLocaleString('en-US')} events in ${(r.wallMs / 1000).toFixed(1)} s (${Math.round(r.eventsPerSecond).toLocaleString('en-US')} events/s), trace ${r.traceHash}`
                : null}
        </div>
      </Card>
      {r && side.invariants ? <Report report={r} invariants={side.invariants} knobs={side.knobs} index={index} /> : null}
    </div>
  );
}

function Report({ report: r, invariants, knobs, index }: { report: SimRunReport; invariants: InvariantTable; knobs: Knobs; index: number }) {
  const f = r.figures;
  // The report's size.slots is the whole pool (workers times slots each), as the cap is computed from it.
  const pool = r.size.slots;
  const cap = knobs.capPercent === null ? undefined : Math.max(1, Math.floor((knobs.capPercent / 100) * pool + 1e-9));
  const groups = [...new Set(r.samples.flatMap((s) => Object.keys(s.leasedByGroup)))].sort();
  const latency = Object.entries(r.startLatencyMs).sort(([a], [b]) => a.localeCompare(b));
  const byInvariant = (id: string) => r.violations.filter((v) => v.invariant === id).length;
  return (
    <>
      <div className="stats">
        <Stat
          label="Fan-out makespan"
          value={<span data-testid={`sim-makespan-${index}`}>{fmt(f.fanoutMakespanMin)} min</span>}
          hint={`half done at ${fmt(f.fanout50PercentDoneMin)} min, 99% at ${fmt(f.fanout99PercentDoneMin)} min${f.fanoutFinished === false ? ', not finished' : ''}`}
          testId={`sim-headline-${index}`}
        />
        <Stat label="Fan-out peak leases" value={fmt(f.fanoutPeakLeases)} hint={cap !== undefined ? `cap ${cap} of ${pool} slots` : `no cap, ${pool} slots`} testId={`sim-peak-${index}`} />
        <Stat
          label="Other DAGs' start p99"
          value={`${fmt(f.otherStartLatencyP99s)} s`}
          hint={`max ${fmt(f.otherStartLatencyMaxS)} s over ${fmt(f.otherJobsStarted)} jobs`}
          tone={typeof f.otherStartLatencyP99s === 'number' && f.otherStartLatencyP99s > 60 ? 'warn' : 'good'}
          testId={`sim-latency-${index}`}
        />
        <Stat
          label="Violations"
          value={<span data-testid={`sim-violations-${index}`}>{r.violations.length}</span>}
          hint={`outcome ${r.outcome}${r.crash ? `: ${r.crash}` : ''}`}
          tone={r.violations.length === 0 && r.outcome === 'ok' ? 'good' : 'bad'}
          testId={`sim-outcome-${index}`}
        />
      </div>
      {r.dagReplay ? <ReplayPanel replay={r.dagReplay} index={index} /> : null}
      <Card title="Invariants checked">
        <table className="table" data-testid={`sim-invariants-${index}`} data-violations={r.violations.length}>
          <thead>
            <tr>
              <th>Invariant</th>
              <th>Kind</th>
              <th>Statement</th>
              <th className="num">Violations</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(invariants).map(([id, inv]) => {
              const n = byInvariant(id);
              return (
                <tr key={id} data-testid={`sim-invariant-${index}-${id}`} data-violations={n}>
                  <td>{id}</td>
                  <td>{inv.kind}</td>
                  <td>{inv.text}</td>
                  <td className="num">{n > 0 ? <strong className="bad-text">{n}</strong> : 0}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        {r.violations.length > 0 ? (
          <ul className="issues" data-testid={`sim-violation-list-${index}`}>
            {r.violations.slice(0, 20).map((v, i) => (
              <li key={i}>
                {v.invariant} at {((v.atMs - (r.samples[0]?.atMs ?? v.atMs)) / 1000).toFixed(1)} s: {v.message}
              </li>
            ))}
          </ul>
        ) : null}
        {/* The report's replay command names only the written scenario and seed, not these knobs, so the page shows the trace hash instead. */}
        <p className="small muted">
          The same knobs and seed give the same trace hash, <code>{r.traceHash}</code>.
        </p>
      </Card>
      <Card title="Running jobs per DAG group">
        <LineChart series={groups.map((g) => ({ name: g, values: r.samples.map((s) => s.leasedByGroup[g] ?? 0) }))} capLine={cap} testId={`sim-running-chart-${index}`} />
        <Legend names={groups} note={`one point per ${r.samples.length > 1 ? Math.round((r.samples[1]!.atMs - r.samples[0]!.atMs) / 1000) : 30} virtual seconds`} />
      </Card>
      <Card title="Start latency by DAG group (p50, p90, p99, max; seconds)">
        <BarChart
          values={latency.flatMap(([, d]) => [d.p50, d.p90, d.p99, d.max].map((ms) => Math.round(ms / 100) / 10))}
          labels={latency.flatMap(([g]) => ['p50', 'p90', 'p99', 'max'].map((q) => `${g} ${q}`))}
          testId={`sim-latency-chart-${index}`}
        />
        <table className="table small">
          <thead>
            <tr>
              <th>Group</th>
              <th className="num">Jobs</th>
              <th className="num">p50</th>
              <th className="num">p90</th>
              <th className="num">p99</th>
              <th className="num">max</th>
            </tr>
          </thead>
          <tbody>
            {latency.map(([g, d]) => (
              <tr key={g}>
                <td>{g}</td>
                <td className="num">{d.count}</td>
                {[d.p50, d.p90, d.p99, d.max].map((ms, i) => (
                  <td key={i} className="num">
                    {(ms / 1000).toFixed(1)} s
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </Card>
    </>
  );
}

function Legend({ names, note }: { names: string[]; note: ReactNode }) {
  return (
    <div className="small muted">
      {names.map((n, i) => (
        <span key={n} style={{ marginRight: 12 }}>
          <i className="swatch" style={{ background: seriesColor(i) }} /> {n}
        </span>
      ))}
      {note}
    </div>
  );
}
