import { type SchedulerLike } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import { bucketRateLimiter } from './bucketRateLimiter.ts';
import { itemExponentialFailureRateLimiter } from './itemExponentialFailureRateLimiter.ts';
import { maxOfRateLimiter } from './maxOfRateLimiter.ts';
import type { RateLimiter } from './rateLimiter.ts';

/**
 * client-go's default: the larger of per-item exponential backoff (5 ms doubling up to
 * 1000 s) and an overall token bucket of 10 qps with a burst of 100.
 *
 * ```
 * one failing item:  5, 10, 20, 40 ... 1_000_000 ms
 * 101 items at t=0:  5 ms each for the first 100, then 100 ms, 200 ms, ...
 * ```
 */
export function defaultControllerRateLimiter<K>(scheduler: SchedulerLike = monotonicScheduler): RateLimiter<K> {
  return maxOfRateLimiter<K>(itemExponentialFailureRateLimiter<K>(5, 1_000_000), bucketRateLimiter<K>({ qps: 10, burst: 100, scheduler }));
}
