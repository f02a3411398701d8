import type { RateLimiter } from './rateLimiter.ts';

/**
 * Combines limiters: `when` asks every one (each records the failure) and returns the
 * longest delay; `numRequeues` is the largest count; `forget` forgets in all.
 *
 * ```
 * exponential(5ms..)  5, 10, 20 ...
 * bucket(burst 1)     0, 100, 200 ...
 * maxOf:              5, 100, 200 ...
 * ```
 */
export function maxOfRateLimiter<K>(...limiters: ReadonlyArray<RateLimiter<K>>): RateLimiter<K> {
  return {
    when(item: K): number {
      let longest = 0;
      for (const limiter of limiters) {
        const delay = limiter.when(item);
        if (delay > longest) longest = delay;
      }
      return longest;
    },
    forget(item: K): void {
      for (const limiter of limiters) limiter.forget(item);
    },
    numRequeues(item: K): number {
      let most = 0;
      for (const limiter of limiters) {
        const count = limiter.numRequeues(item);
        if (count > most) most = count;
      }
      return most;
    },
  };
}
