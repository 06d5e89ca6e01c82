import type { EffectMode, EffectOutcome } from './context';

export type { EffectMode, EffectOutcome };

/** What a sink has recorded for one key: the highest fence it saw, and the fence its effect was applied under. */
export interface RecordedFence {
  fence: number;
  appliedFence: number | null;
}

/**
 * The rule every sink applies, under the key's lock: a fence lower than the highest
 * recorded is stale; in once mode a key whose effect was applied is done; otherwise the
 * effect applies. Pure, so the simulator judges its sinks by the same rule.
 */
export function decide(recorded: RecordedFence | null, fence: number, mode: EffectMode): EffectOutcome {
  if (recorded === null) return 'applied';
  if (fence < recorded.fence) return 'stale';
  if (mode === 'once' && recorded.appliedFence !== null) return 'already-applied';
  return 'applied';
}

/** What the sink records after deciding. */
export function recordAfter(recorded: RecordedFence | null, fence: number, outcome: EffectOutcome): RecordedFence {
  if (outcome === 'stale') return recorded!;
  const highest = Math.max(recorded?.fence ?? fence, fence);
  return { fence: highest, appliedFence: outcome === 'applied' ? fence : (recorded?.appliedFence ?? null) };
}
