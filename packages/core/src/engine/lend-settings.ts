import type { LendReserve } from '../fairshare/lend-check';
import { DEFAULT_NODE_CONFIG } from './config';

/** The lending settings of a scheduler node, as NodeConfig holds them. */
export interface LendSettings {
  /** The reserve's share of the pool; null: no lending, the cap is strict. */
  lendReserveFraction: number | null;
  lendReserveMinSlots: number;
}

/**
 * Reads lending from the environment the schedulers and the console share
 * (docs/configuration.md): FENCELINE_LEND (on or off), FENCELINE_LEND_RESERVE_PERCENT (a
 * number in [0, 100), or off) and FENCELINE_LEND_RESERVE_MIN_SLOTS (a whole number of at
 * least 0). The console reads them too, so the reserve it shows is the one the schedulers
 * keep. A value that cannot be read is refused, naming its variable, rather than guessed.
 */
export function readLendSettings(env: Readonly<Record<string, string | undefined>>, defaults: LendSettings = DEFAULT_NODE_CONFIG): LendSettings {
  const switchWord = env.FENCELINE_LEND?.trim() ?? '';
  const off = ['off', 'false', '0'].includes(switchWord);
  if (switchWord !== '' && !off && !['on', 'true', '1'].includes(switchWord)) throw new Error(`FENCELINE_LEND must be on or off, got "${env.FENCELINE_LEND}"`);
  const percent = env.FENCELINE_LEND_RESERVE_PERCENT?.trim() ?? '';
  let fraction = defaults.lendReserveFraction;
  if (percent === 'off') fraction = null;
  else if (percent !== '') {
    const n = Number(percent);
    if (!/^\d+(\.\d+)?$/.test(percent) || !(n >= 0 && n < 100)) {
      throw new Error(`FENCELINE_LEND_RESERVE_PERCENT must be a number in [0, 100) or off, got "${env.FENCELINE_LEND_RESERVE_PERCENT}"`);
    }
    fraction = n / 100;
  }
  const floor = env.FENCELINE_LEND_RESERVE_MIN_SLOTS?.trim() ?? '';
  let minSlots = defaults.lendReserveMinSlots;
  if (floor !== '') {
    if (!/^\d+$/.test(floor) || !Number.isSafeInteger(Number(floor))) {
      throw new Error(`FENCELINE_LEND_RESERVE_MIN_SLOTS must be a whole number of at least 0, got "${env.FENCELINE_LEND_RESERVE_MIN_SLOTS}"`);
    }
    minSlots = Number(floor);
  }
  // Off wins over a share set beside it: one switch turns lending off whatever else is set.
  return { lendReserveFraction: off ? null : fraction, lendReserveMinSlots: minSlots };
}

/** The reserve rule of lending settings, or null without lending. */
export function lendReserveOf(settings: LendSettings): LendReserve | null {
  return settings.lendReserveFraction === null ? null : { fraction: settings.lendReserveFraction, minSlots: settings.lendReserveMinSlots };
}
