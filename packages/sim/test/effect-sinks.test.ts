import { describe, expect, it } from 'vitest';
import { Checker } from '../src/check/checker';
import { EffectSinks, WORLD_SINKS, type EffectAttempt } from '../src/world/effect-sinks';

function checker(): Checker {
  return new Checker({ failoverBoundMs: 60_000, capFraction: 0.3, poolSlots: () => 10, schedulersImpaired: () => false });
}

/** Two holders of one key, the older waking late after the newer applied, then a retry; another key untouched. */
function story(apply: (key: string, fence: number, late: boolean, atMs: number) => void): void {
  apply('d/1/t', 5, false, 1);
  apply('d/1/t', 7, false, 2);
  apply('d/1/t', 6, true, 3);
  apply('d/1/t', 9, false, 4);
  apply('d/2/t', 3, false, 5);
}

describe('effect sinks and I12', () => {
  it('keeps I12 with the sinks deciding by the effects rule, refusing the late holder', () => {
    const c = checker();
    const seen: EffectAttempt[] = [];
    const sinks = new EffectSinks(WORLD_SINKS, (a) => {
      seen.push(a);
      c.observeEffect(a);
    });
    story((...args) => sinks.apply(...args));
    expect(c.violations).toEqual([]);
    const database = seen.filter((a) => a.sink === 'database' && a.key === 'd/1/t').map((a) => `${a.fence}:${a.outcome}`);
    expect(database).toEqual(['5:applied', '7:already-applied', '6:stale', '9:already-applied']);
    const service = seen.filter((a) => a.sink === 'service' && a.key === 'd/1/t').map((a) => `${a.fence}:${a.outcome}`);
    expect(service).toEqual(['5:applied', '7:applied', '6:stale', '9:applied']);
    expect(c.effectCounts).toMatchObject({ stale: 2, late: 2, unguardedDuplicates: 6 });
  });

  it('finds a sink that takes every effect without checking the fence', () => {
    const c = checker();
    story((key, fence, late, atMs) => {
      for (const { name, mode } of WORLD_SINKS) c.observeEffect({ sink: name, mode, key, fence, outcome: 'applied', late, atMs });
    });
    const messages = c.violations.filter((v) => v.invariant === 'I12').map((v) => v.message);
    expect(messages).toContain('service applied the effect of d/1/t under fence 6 after fence 7 was applied');
    expect(messages).toContain('database applied the once effect of d/1/t a second time (fence 7, first under fence 5)');
  });
});
