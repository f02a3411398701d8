/**
 * A small seeded PRNG (mulberry32) with the few draws the recovery harness
 * needs. Separate streams (schedule, writes, server latencies, the informer's
 * jitter) are separate instances, so what the informer does never shifts the
 * writes or the faults of a schedule.
 */
import { seededRandom } from '../../../src/util/seededRandom.ts';
export class Rng {
  /** A number in [0, 1). */
  readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A number in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  /** An exponential draw with this mean, clamped (write inter-arrival times). */
  exponential(mean: number, min: number, max: number): number {
    return Math.min(max, Math.max(min, -Math.log(1 - this.next()) * mean));
  }

  /** A function of [0, 1) draws, for the informer's `random` option. */
  asFunction(): () => number {
    return () => this.next();
  }
}

/** Derives independent seeds from one (so one schedule seed drives every stream). */
export function subSeed(seed: number, stream: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(stream + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}
