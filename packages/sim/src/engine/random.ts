import { seededRandom, type Random } from '@fenceline/core';

/**
 * The simulator's randomness. Every stream is derived from the run's seed and a name, so
 * adding a new random decision in one part of the world (say, link jitter) does not shift
 * the numbers another part (say, job durations) draws, and a seed replays exactly.
 */
export class Rng implements Random {
  private readonly source: Random;

  constructor(
    readonly seed: number,
    readonly name = 'root',
  ) {
    this.source = seededRandom(mix(seed, name));
  }

  /** An independent stream for one concern of the world. */
  fork(name: string): Rng {
    return new Rng(this.seed, `${this.name}/${name}`);
  }

  next(): number {
    return this.source.next();
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A float in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: no items to pick from');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** An exponentially distributed delay with the given mean. */
  exponential(meanMs: number): number {
    return -Math.log(1 - this.next()) * meanMs;
  }
}

/** FNV-1a over the seed and the stream name, so streams of one seed are unrelated. */
function mix(seed: number, name: string): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  h = Math.imul(h, 0x01000193) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  h ^= Math.floor(seed / 0x100000000) >>> 0;
  return Math.imul(h, 0x01000193) >>> 0;
}
