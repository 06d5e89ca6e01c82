/**
 * Time and randomness enter the scheduling logic only through these interfaces, so the
 * production scheduler binds them to the machine and the simulator to a virtual clock
 * and a seeded generator. The logic never reads the wall clock itself.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch, as this node believes it to be. */
  nowMs(): number;
}

export interface Timers {
  /** Calls `fn` after `delayMs`; returns a function that cancels it. */
  after(delayMs: number, fn: () => void): () => void;
}

export interface Random {
  /** A float in [0, 1). */
  next(): number;
}

/** A small, fast, seedable PRNG (mulberry32). Deterministic for a given seed. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return {
    next() {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}
