'use client';

import { useEffect, useMemo, useRef, useState } from 'react';
import { Empty, PageHeader } from '@/components/ui';
import { knobInputId, KnobCard } from './knob-card';
import { KNOB_FIELDS, KNOB_RULES, formOf, knobErrors, parseKnobs, type KnobForm } from './knob-form';
import { DEFAULT_KNOBS, type Knobs, type SimMessage, type SimRequest } from './knobs';
import { livenessNotice, planLiveness, sharedLivenessMs, spanText, type LivenessNotice } from './liveness';
import { scalesOf, type ScaledRun } from './report-scales';
import { SideView, type Side } from './side-view';

function capLabel(k: Knobs): string {
  if (k.capPercent === null) return 'cap off';
  return k.lending ? `cap ${k.capPercent}% lending, reserve ${Math.round(k.lendReserve * 1000) / 10}%` : `cap ${k.capPercent}%`;
}

/** The notice for Run's knobs, and a word on Compare when its cap-on side needs a longer window than Run. */
function noticeFor(form: KnobForm): { livenessMs: number | null; notice: LivenessNotice | null } {
  const run = parseKnobs(form, 'run');
  if (!run.ok) return { livenessMs: null, notice: null };
  const plan = planLiveness(run.knobs);
  let notice = livenessNotice(plan, run.knobs);
  const compare = parseKnobs(form, 'compare');
  if (form.capOff && compare.ok) {
    const capOn = planLiveness(compare.knobs);
    if (capOn.livenessMs > plan.livenessMs) {
      const more = `Compare gives both sides ${spanText(capOn.livenessMs)} healed, which its cap-on side needs.`;
      notice = { tone: capOn.exceedsBound || notice?.tone === 'warn' ? 'warn' : 'info', text: notice ? `${notice.text} ${more}` : more };
    }
  }
  return { livenessMs: plan.livenessMs, notice };
}

/**
 * What the page showed when the user left it: the module outlives the page within the
 * console, so coming back to the Simulator finds the same knobs and the last results
 * rather than the defaults. A run cut off by leaving reads as stopped.
 */
let kept: { form: KnobForm; sides: Side[] } | null = null;

/**
 * The deterministic simulator, run in the browser. Nothing here talks to the store: the
 * simulator brings its own in-memory store, so a viewer may use the page as freely as an
 * operator.
 */
export default function SimulatorPage() {
  const [form, setForm] = useState<KnobForm>(() => kept?.form ?? formOf(DEFAULT_KNOBS));
  // The mode of a Run or Compare refused for invalid knobs: its problems stay on show until fixed.
  const [refusedMode, setRefusedMode] = useState<'run' | 'compare' | null>(null);
  const [sides, setSides] = useState<Side[]>(() => kept?.sides ?? []);
  const workers = useRef<Worker[]>([]);
  useEffect(() => {
    kept = { form, sides: sides.map((side) => (side.state === 'running' ? { ...side, state: 'stopped' } : side)) };
  }, [form, sides]);

  const stopAll = () => {
    for (const w of workers.current) w.terminate();
    workers.current = [];
  };
  // A run left behind by navigating away would keep a core busy for nothing.
  useEffect(() => stopAll, []);

  const start = (configs: Pick<Side, 'name' | 'label' | 'knobs' | 'livenessMs'>[]) => {
    stopAll();
    setRefusedMode(null);
    setSides(configs.map((c) => ({ ...c, state: 'running', progress: null, report: null, invariants: null, world: null, error: null })));
    configs.forEach((c, i) => {
      const worker = new Worker(new URL('./sim.worker.ts', import.meta.url), { type: 'module' });
      workers.current.push(worker);
      const update = (patch: Partial<Side>) => setSides((all) => all.map((s, j) => (j === i ? { ...s, ...patch } : s)));
      worker.onmessage = (e: MessageEvent<SimMessage>) => {
        const m = e.data;
        if (m.kind === 'progress') update({ progress: m.progress });
        else if (m.kind === 'report') {
          update({ state: 'done', report: m.report, invariants: m.invariants, world: m.world });
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
      worker.postMessage({ label: c.label, knobs: c.knobs, livenessMs: c.livenessMs } satisfies SimRequest);
    });
  };

  /** Refuses a run while any knob it needs is invalid, and takes the user to the first one. */
  const refuse = (mode: 'run' | 'compare') => {
    setRefusedMode(mode);
    const first = KNOB_FIELDS.find((f) => knobErrors(form, mode)[f] !== undefined && !(f === 'capPercent' && form.capOff));
    if (first) document.getElementById(knobInputId(first))?.focus();
  };

  const run = () => {
    const parsed = parseKnobs(form, 'run');
    if (!parsed.ok) return refuse('run');
    const k = parsed.knobs;
    start([{ name: 'Simulation', label: capLabel(k), knobs: k, livenessMs: planLiveness(k).livenessMs }]);
  };

  const compare = () => {
    const parsed = parseKnobs(form, 'compare');
    if (!parsed.ok) return refuse('compare');
    const capOn = parsed.knobs;
    const capOff: Knobs = { ...capOn, capPercent: null };
    // The fanout scenario's third variant: the same cap, with idle slots lent above the reserve.
    const lend: Knobs = { ...capOn, lending: true };
    // Every side runs on one clock, so their plots share the x axis. Lending finishes no
    // later than the strict cap, so the cap-on side's healed phase covers it.
    const livenessMs = sharedLivenessMs([planLiveness(capOn), planLiveness(capOff)]);
    start([
      { name: 'Simulation A', label: capLabel(capOn), knobs: capOn, livenessMs },
      { name: 'Simulation B', label: capLabel(capOff), knobs: capOff, livenessMs },
      { name: 'Simulation C', label: capLabel(lend), knobs: lend, livenessMs },
    ]);
  };

  const errors = knobErrors(form, refusedMode ?? 'run');
  const invalid = KNOB_FIELDS.filter((f) => errors[f] !== undefined);
  const refusal =
    refusedMode && invalid.length > 0
      ? `Not started: ${invalid.map((f) => KNOB_RULES[f].label).join(', ')} ${invalid.length === 1 ? 'needs' : 'need'} a valid value.${
          form.capOff && errors.capPercent ? ' Compare runs its cap-on side with the cap: untick Cap off to set it.' : ''
        }`
      : null;
  const { livenessMs, notice } = useMemo(() => noticeFor(form), [form]);

  const running = sides.some((s) => s.state === 'running');
  const done = sides.filter((s): s is Side & ScaledRun => s.report !== null && s.world !== null);
  // Side by side, every plot takes its scale from both runs, so equal heights mean equal values.
  const shared = sides.length > 1 && done.length > 0 ? scalesOf(done) : null;
  const nodes = Array.from({ length: done[0]?.world.nodes ?? 0 }, (_, i) => `node-${i}`);

  return (
    <>
      <PageHeader
        title="Simulator"
        subtitle="The production scheduling logic against an in-memory store and a simulated fleet, with faults, in virtual time. It runs in this browser and writes nothing to the cluster."
        actions={
          <>
            <button className="primary" disabled={running} data-testid="sim-run" onClick={run}>
              Run
            </button>
            <button disabled={running} data-testid="sim-compare" onClick={compare}>
              Compare cap, no cap, lending
            </button>
            {running ? (
              <button
                data-testid="sim-stop"
                onClick={() => {
                  stopAll();
                  setSides((all) => all.map((s) => (s.state === 'running' ? { ...s, state: 'stopped' } : s)));
                }}
              >
                Stop
              </button>
            ) : null}
          </>
        }
      />
      <KnobCard form={form} errors={errors} onChange={setForm} livenessMs={livenessMs} notice={notice} refusal={refusal} />
      {sides.length === 0 ? (
        <Empty>Set the knobs and press Run, or Compare to run the same world with the cap, without it, and with the cap lending idle slots, side by side.</Empty>
      ) : (
        <div className={sides.length > 1 ? 'grid-2' : ''}>
          {sides.map((s, i) => (
            <SideView
              key={i}
              side={s}
              index={i}
              scales={shared ?? (s.report && s.world ? scalesOf([{ report: s.report, world: s.world, knobs: s.knobs }]) : null)}
              compact={sides.length > 1}
              nodes={nodes}
            />
          ))}
        </div>
      )}
    </>
  );
}
