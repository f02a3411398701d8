import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import { checkOptionNames } from '../util/optionNames.ts';
import { WorkQueueError } from './errors.ts';
import type { RateLimiter } from './rateLimiter.ts';

export interface BucketRateLimiterOptions {
  /** Tokens added per second. Default 10. `Infinity` never delays. */
  readonly qps?: number;
  /** Bucket size (and initial tokens). Default 100. */
  readonly burst?: number;
  /** Clock. Default `monotonicScheduler` (`asyncScheduler`'s timers, a monotonic clock: src/util/monotonicNow.ts). */
  readonly scheduler?: SchedulerLike;
}

/** Every option of {@link bucketRateLimiter}, from its type. */
const BUCKET_OPTION_NAMES = Object.keys({ qps: true, burst: true, scheduler: true } satisfies Record<keyof BucketRateLimiterOptions, true>);

/** Rounds to whole nanoseconds, as Go durations are, so 1/10 s comes out as exactly 100 ms. */
const toNanosecondPrecision = (ms: number): number => Math.round(ms * 1e6) / 1e6;

/**
 * Overall token bucket shared by all items (golang.org/x/time/rate `Reserve().Delay()`):
 * every `when` reserves one token and returns how long until that token exists. The bucket
 * starts full, refills at `qps` per second up to `burst`, and may go into debt.
 * Keeps no per-item state: `numRequeues` is always 0 and `forget` does nothing.
 *
 * ```
 * qps 10, burst 2, five calls at t=0:   0, 0, 100, 200, 300
 * ```
 *
 * @throws WorkQueueError `InvalidArgument` unless qps > 0 and burst is a positive integer.
 * @throws TypeError for an option it does not know (`bucketRateLimiter: unknown option `qsp` …; did you mean `qps`?`).
 */
export function bucketRateLimiter<K>(options: BucketRateLimiterOptions = {}): RateLimiter<K> {
  checkOptionNames('bucketRateLimiter', options, BUCKET_OPTION_NAMES);
  const { qps = 10, burst = 100, scheduler = monotonicScheduler } = options;
  if (!(qps > 0) || !Number.isInteger(burst) || burst < 1) {
    throw new WorkQueueError('InvalidArgument', `bucket limiter needs qps > 0 and an integer burst >= 1, got ${qps}, ${burst}`);
  }
  let tokens = burst;
  let last: number | undefined;
  return {
    when(): number {
      if (qps === Infinity) return 0;
      const now = scheduler.now();
      if (last === undefined || now < last) last = now;
      tokens = Math.min(burst, tokens + ((now - last) * qps) / 1000);
      last = now;
      tokens -= 1;
      return tokens < 0 ? toNanosecondPrecision((-tokens * 1000) / qps) : 0;
    },
    forget(): void {},
    numRequeues(): number {
      return 0;
    },
  };
}
