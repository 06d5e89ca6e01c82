import { describe, expect, it } from 'vitest';
import { formOf, knobErrors, parseKnob, parseKnobs, type KnobForm } from '../src/app/(console)/simulator/knob-form';
import { DEFAULT_KNOBS } from '../src/app/(console)/simulator/knobs';

const form = (text: Partial<KnobForm['text']>, capOff = false): KnobForm => {
  const base = formOf(DEFAULT_KNOBS);
  return { text: { ...base.text, ...text }, capOff };
};

describe('Simulator knobs: parsing what the user typed', () => {
  it('takes valid text as typed, without clamping or rounding', () => {
    expect(parseKnob('workers', '50')).toEqual({ value: 50 });
    expect(parseKnob('workers', ' 5000 ')).toEqual({ value: 5000 });
    expect(parseKnob('otherDags', '0')).toEqual({ value: 0 });
    expect(parseKnob('workerPause', '.5')).toEqual({ value: 0.5 });
    expect(parseKnob('workerPause', '0.05')).toEqual({ value: 0.05 });
    expect(parseKnob('leaderCrash', '1')).toEqual({ value: 1 });
    expect(parseKnob('linkCut', '0')).toEqual({ value: 0 });
  });

  it('refuses a count out of range, naming the range, instead of clamping it', () => {
    expect(parseKnob('workers', '-5')).toEqual({ error: '-5 is out of range: enter a whole number from 1 to 5,000.' });
    expect(parseKnob('workers', '5001')).toEqual({ error: '5001 is out of range: enter a whole number from 1 to 5,000.' });
    expect(parseKnob('capPercent', '0')).toEqual({ error: '0 is out of range: enter a whole number from 1 to 100.' });
    expect(parseKnob('otherDags', '-1')).toMatchObject({ error: expect.stringContaining('from 0 to 1,000') });
  });

  it('refuses text that is not a whole number, and an empty field', () => {
    expect(parseKnob('workers', '')).toEqual({ error: 'Required: a whole number from 1 to 5,000.' });
    expect(parseKnob('workers', '2.5')).toEqual({ error: '"2.5" is not a whole number: enter a whole number from 1 to 5,000.' });
    expect(parseKnob('seed', '1e3')).toMatchObject({ error: expect.stringContaining('is not a whole number') });
    expect(parseKnob('fanoutTasks', 'abc')).toMatchObject({ error: expect.stringContaining('"abc" is not a whole number') });
    expect(parseKnob('workers', '-')).toMatchObject({ error: expect.stringContaining('is not a whole number') });
  });

  it('takes fault rates as probabilities in [0, 1]', () => {
    expect(parseKnob('workerPause', '1.5')).toEqual({ error: '1.5 is out of range: enter a probability from 0 to 1 (0.05 is 5%).' });
    expect(parseKnob('workerCrash', '-0.1')).toMatchObject({ error: expect.stringContaining('out of range') });
    expect(parseKnob('workerCrash', '5%')).toMatchObject({ error: expect.stringContaining('"5%" is not a number') });
    expect(parseKnob('workerCrash', '.')).toMatchObject({ error: expect.stringContaining('is not a number') });
  });

  it('runs the defaults, and refuses a run while any field is invalid, listing each', () => {
    expect(parseKnobs(formOf(DEFAULT_KNOBS))).toEqual({ ok: true, knobs: DEFAULT_KNOBS });
    const parsed = parseKnobs(form({ workers: '-5', workerPause: '2' }));
    expect(parsed.ok).toBe(false);
    expect(Object.keys(parsed.ok ? {} : parsed.errors).sort()).toEqual(['workerPause', 'workers']);
  });

  it('ignores the cap for a run with the cap off, keeps its text, and needs it for a comparison', () => {
    const off = form({ capPercent: '45' }, true);
    expect(parseKnobs(off)).toEqual({ ok: true, knobs: { ...DEFAULT_KNOBS, capPercent: null } });
    // Unticking Cap off gives back what the user had typed.
    expect(parseKnobs({ ...off, capOff: false })).toEqual({ ok: true, knobs: { ...DEFAULT_KNOBS, capPercent: 45 } });
    expect(parseKnobs(off, 'compare')).toEqual({ ok: true, knobs: { ...DEFAULT_KNOBS, capPercent: 45 } });
    const badCap = form({ capPercent: '' }, true);
    expect(knobErrors(badCap, 'run')).toEqual({});
    expect(Object.keys(knobErrors(badCap, 'compare'))).toEqual(['capPercent']);
  });

  it('starts from the knobs it is given, and a null cap shows as Cap off with a cap to come back to', () => {
    expect(formOf({ ...DEFAULT_KNOBS, capPercent: null })).toMatchObject({ capOff: true, text: { capPercent: '30' } });
    expect(formOf(DEFAULT_KNOBS).text.workerPause).toBe('0');
  });
});
