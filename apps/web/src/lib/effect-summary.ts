import type { EffectRecord } from '@fenceline/core';

/** What the run page says of a job's effects: one word for the job, and a line per effect. */
export interface EffectSummary {
  word: 'applied' | 'refused as stale' | 'not recorded';
  /** Why, in a sentence: which fence applied the effect, or which higher fence refused it. */
  detail: string;
}

function line(e: EffectRecord): string {
  const where = `${e.key} (${e.sink})`;
  if (e.outcome === 'stale') return `${where}: refused under fence ${e.fence}, fence ${e.recordedFence ?? 'higher'} was already recorded`;
  if (e.outcome === 'already-applied') return `${where}: already applied under fence ${e.recordedFence ?? 'earlier'}, nothing written under fence ${e.fence}`;
  return `${where}: applied under fence ${e.fence}`;
}

/**
 * A job's effect outcome as its accepted attempt reported it: refused as stale when any of
 * its effects was refused (a stale write is what an operator must look at), applied when
 * every effect landed (now or by an earlier attempt), and not recorded when the attempt
 * reported none or no attempt has written a result.
 */
export function effectSummary(effects: readonly EffectRecord[] | null | undefined): EffectSummary & { lines: string[] } {
  if (!effects || effects.length === 0) return { word: 'not recorded', detail: 'no fenced effect was reported with the accepted result', lines: [] };
  const lines = effects.map(line);
  const stale = effects.filter((e) => e.outcome === 'stale');
  if (stale.length > 0) {
    const fences = [...new Set(stale.map((e) => e.recordedFence).filter((f) => f !== undefined))].join(', ');
    return { word: 'refused as stale', detail: `fence ${stale[0]!.fence} was refused: fence ${fences || 'higher'} was already recorded`, lines };
  }
  const earlier = effects.find((e) => e.outcome === 'already-applied');
  const detail = earlier ? `applied under fence ${earlier.recordedFence ?? 'earlier'} by an earlier attempt` : `applied under fence ${effects[0]!.fence}`;
  return { word: 'applied', detail, lines };
}
