import type { Knobs } from './knobs';

/**
 * The knobs as the user types them. Each field keeps its text exactly as typed, so that a
 * keystroke is never rewritten (clamping "-" or "" as they pass through would turn "-5"
 * into 15 and ".5" into 1); the text is parsed and checked when a run is asked for, and
 * the page shows each field's problem beside it meanwhile.
 */
// Which side lends is set by Compare, not typed.
export type KnobField = Exclude<keyof Knobs, 'lending'>;

export interface KnobForm {
  text: Record<KnobField, string>;
  /** Runs without a cap; the cap's text is kept, so unticking brings the user's value back. */
  capOff: boolean;
}

export interface KnobRule {
  label: string;
  kind: 'count' | 'probability';
  min: number;
  max: number;
}

/** The knobs in the order the page shows them, with what each accepts. */
export const KNOB_RULES: Record<KnobField, KnobRule> = {
  workers: { label: 'Workers', kind: 'count', min: 1, max: 5_000 },
  capPercent: { label: 'Cap % of pool', kind: 'count', min: 1, max: 100 },
  // The reserve the lending side keeps free, as a fraction of the pool; all of it would lend nothing.
  lendReserve: { label: 'Lending reserve', kind: 'probability', min: 0, max: 0.99 },
  fanoutTasks: { label: 'Fan-out jobs', kind: 'count', min: 1, max: 5_000 },
  otherDags: { label: 'Other DAGs', kind: 'count', min: 0, max: 1_000 },
  seed: { label: 'Seed', kind: 'count', min: 1, max: 1_000_000 },
  // Fault rates are probabilities per ten-second fault tick.
  workerPause: { label: 'Worker pause', kind: 'probability', min: 0, max: 1 },
  workerCrash: { label: 'Worker crash', kind: 'probability', min: 0, max: 1 },
  leaderCrash: { label: 'Leader crash', kind: 'probability', min: 0, max: 1 },
  linkCut: { label: 'Link cut', kind: 'probability', min: 0, max: 1 },
};

export const KNOB_FIELDS = Object.keys(KNOB_RULES) as KnobField[];

/** What a field accepts, in words: "a whole number from 1 to 5,000", "a probability from 0 to 1". */
export function allowedText(rule: KnobRule): string {
  const range = `from ${rule.min.toLocaleString('en-US')} to ${rule.max.toLocaleString('en-US')}`;
  return rule.kind === 'count' ? `a whole number ${range}` : `a probability ${range} (0.05 is 5%)`;
}

const WHOLE = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

/** The value of one field's text, or the sentence that says what is wrong with it. */
export function parseKnob(field: KnobField, text: string): { value: number } | { error: string } {
  const rule = KNOB_RULES[field];
  const allowed = allowedText(rule);
  const t = text.trim();
  if (t === '') return { error: `Required: ${allowed}.` };
  if (!(rule.kind === 'count' ? WHOLE : DECIMAL).test(t)) return { error: `"${t}" is not ${rule.kind === 'count' ? 'a whole number' : 'a number'}: enter ${allowed}.` };
  const value = Number(t);
  if (value < rule.min || value > rule.max) return { error: `${t} is out of range: enter ${allowed}.` };
  return { value };
}

export function formOf(k: Knobs, fallbackCapPercent = 30): KnobForm {
  const text = Object.fromEntries(KNOB_FIELDS.map((f) => [f, String(k[f] ?? '')])) as Record<KnobField, string>;
  if (k.capPercent === null) text.capPercent = String(fallbackCapPercent);
  return { text, capOff: k.capPercent === null };
}

export type KnobErrors = Partial<Record<KnobField, string>>;

/**
 * Every field's problem. The cap's text counts only when a cap is asked for: always for a
 * comparison (its cap-on side runs with it), and for a single run unless Cap off is ticked.
 */
export function knobErrors(form: KnobForm, mode: 'run' | 'compare' = 'run'): KnobErrors {
  const errors: KnobErrors = {};
  for (const f of KNOB_FIELDS) {
    if (f === 'capPercent' && form.capOff && mode === 'run') continue;
    const parsed = parseKnob(f, form.text[f]);
    if ('error' in parsed) errors[f] = parsed.error;
  }
  return errors;
}

export type ParsedKnobs = { ok: true; knobs: Knobs } | { ok: false; errors: KnobErrors };

/** The knobs a run gets, or every field that stops it. Nothing is clamped or rounded: a value is taken as typed or refused. */
export function parseKnobs(form: KnobForm, mode: 'run' | 'compare' = 'run'): ParsedKnobs {
  const errors = knobErrors(form, mode);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const value = (f: KnobField): number => (parseKnob(f, form.text[f]) as { value: number }).value;
  const knobs = Object.fromEntries(KNOB_FIELDS.map((f) => [f, f === 'capPercent' && form.capOff && mode === 'run' ? null : value(f)])) as unknown as Knobs;
  return { ok: true, knobs };
}
