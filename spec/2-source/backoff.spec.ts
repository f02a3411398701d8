import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Backoff } from '../../src/pipeline.ts';

/** Waits for failures at the given times. */
const waits = (backoff: Backoff, times: readonly number[]) => times.map((t) => backoff.next(t));

describe('Backoff', () => {
  it('defaults are client-go’s: 800 ms doubling, capped at 30 s (random 0: no jitter)', () => {
    const b = new Backoff({}, () => 0);
    expect(waits(b, [0, 1, 2, 3, 4, 5, 6, 7, 8])).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
  });

  it('jitter 1.0 puts each wait in [d, 2d)', () => {
    expect(waits(new Backoff({}, () => 0.5), [0, 1, 2])).toEqual([1200, 2400, 4800]);
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 0.999_999, noNaN: true }), { minLength: 1, maxLength: 12 }), (randoms) => {
        let i = 0;
        const b = new Backoff({}, () => randoms[i++ % randoms.length]!);
        let d = 800;
        for (let n = 0; n < randoms.length; n++) {
          const wait = b.next(n);
          expect(wait).toBeGreaterThanOrEqual(d);
          expect(wait).toBeLessThan(2 * d);
          d = Math.min(d * 2, 30_000);
        }
      }),
    );
  });

  it('starts over after more than two quiet minutes (measured from the last failure)', () => {
    const b = new Backoff({}, () => 0);
    expect(waits(b, [0, 1000, 2000])).toEqual([800, 1600, 3200]);
    expect(b.next(2000 + 120_000)).toBe(6400); // exactly two minutes: not yet
    expect(b.next(122_000 + 120_001)).toBe(800);
    expect(b.next(242_001 + 5)).toBe(1600);
  });

  it('honours its options', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000, factor: 3, jitter: 0.5, resetAfterMs: 10_000 }, () => 1);
    // d + 1 · 0.5 · d
    expect(waits(b, [0, 1, 2, 3, 4])).toEqual([150, 450, 1350, 1500, 1500]);
    expect(b.next(10_005)).toBe(150);
    expect(waits(new Backoff({ jitter: 0 }, () => 0.9), [0, 1])).toEqual([800, 1600]);
  });
});
