import { WorkQueueError } from './errors.ts';
import type { RateLimiter } from './rateLimiter.ts';

/** The exponential limiter also reports how many items it tracks (for leak checks). */
export interface ItemExponentialFailureRateLimiter<K> extends RateLimiter<K> {
  readonly size: number;
}

/**
 * Per-item exponential backoff: the n-th `when(item)` (n from 0) returns
 * `min(baseDelayMs * 2^n, maxDelayMs)`. `forget(item)` drops the item's count.
 *
 * ```
 * when('a') x6, base 5, max 100:   5, 10, 20, 40, 80, 100
 * ```
 *
 * @throws WorkQueueError `InvalidArgument` for a negative, NaN or infinite delay.
 */
export function itemExponentialFailureRateLimiter<K>(baseDelayMs = 5, maxDelayMs = 1_000_000): ItemExponentialFailureRateLimiter<K> {
  // A maxDelayMs of Infinity would be reached after ~1,021 failures: the key then waits for ever, with no timer armed.
  if (!(baseDelayMs >= 0) || !Number.isFinite(baseDelayMs) || !(maxDelayMs >= 0) || !Number.isFinite(maxDelayMs)) {
    throw new WorkQueueError(
      'InvalidArgument',
      `exponential limiter needs 0 <= baseDelayMs < Infinity and 0 <= maxDelayMs < Infinity, got ${baseDelayMs}, ${maxDelayMs}`,
    );
  }
  const failures = new Map<K, number>();
  return {
    when(item: K): number {
      const exp = failures.get(item) ?? 0;
      failures.set(item, exp + 1);
      if (baseDelayMs === 0) return 0;
      const backoff = baseDelayMs * 2 ** exp;
      return backoff > maxDelayMs ? maxDelayMs : backoff;
    },
    forget(item: K): void {
      failures.delete(item);
    },
    numRequeues(item: K): number {
      return failures.get(item) ?? 0;
    },
    get size(): number {
      return failures.size;
    },
  };
}
