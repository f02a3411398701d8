/**
 * The controller's user functions run guarded: a throw is reported on `errors$` as a `HandlerError`, and a fallback
 * stands for the answer, so the controller goes on.
 */
import type { Subject } from 'rxjs';
import { InformerError, describeThrown } from '../0-model/errors.ts';
import { itemExponentialFailureRateLimiter } from '../workqueue/itemExponentialFailureRateLimiter.ts';
import type { RateLimiter } from '../workqueue/rateLimiter.ts';

/** Runs a user function; a throw is reported on `errors$` as a `HandlerError` and `fallback` stands for its answer. */
export type Guard = <R>(what: string, key: string | undefined, fallback: R, run: () => R) => R;

export function guardWith(name: string, errors$: Subject<InformerError>): Guard {
  return (what, key, fallback, run) => {
    try {
      return run();
    } catch (error) {
      errors$.next(
        new InformerError('HandlerError', `controller ${name}: ${what} threw${key ? ` for ${key}` : ''}: ${describeThrown(error)}`, {
          phase: 'handler',
          key,
          cause: error,
        }),
      );
      return fallback;
    }
  };
}

/**
 * The backoff a key gets when the user's rate limiter fails it: client-go's default per-item backoff (the
 * exponential half of `DefaultControllerRateLimiter`), 5 ms doubling with each such failure of the key, up to 1000 s.
 */
export const FALLBACK_BASE_DELAY_MS = 5;
export const FALLBACK_MAX_DELAY_MS = 1_000_000;

/**
 * A user's rate limiter, guarded: a `when` that throws (or returns no finite number: NaN, Infinity, a string) is
 * reported and the key waits {@link FALLBACK_BASE_DELAY_MS}'s backoff instead (never retried at once, never dropped,
 * never parked for good with no timer); a delay ≤ 0 is "now", which for the key in flight is the queue's next
 * scheduler action (delayingQueue.ts), as client-go's `AddAfter` takes a negative duration as 0; a `forget` that throws
 * is reported (the fallback's count is forgotten still); a `numRequeues` that throws is reported and the fallback's
 * count stands for it.
 */
export function guardedRateLimiter(limiter: RateLimiter<string>, guarded: Guard): RateLimiter<string> {
  const fallback = itemExponentialFailureRateLimiter<string>(FALLBACK_BASE_DELAY_MS, FALLBACK_MAX_DELAY_MS);
  return {
    when(key) {
      const delay = guarded('rateLimiter.when', key, undefined, () => {
        const ms: unknown = limiter.when(key);
        if (typeof ms !== 'number' || !Number.isFinite(ms))
          throw new TypeError(`returned ${typeof ms === 'number' ? String(ms) : typeof ms}, not a finite delay in ms`);
        return ms;
      });
      return delay ?? fallback.when(key);
    },
    forget(key) {
      fallback.forget(key);
      guarded('rateLimiter.forget', key, undefined, () => limiter.forget(key));
    },
    numRequeues(key) {
      return guarded('rateLimiter.numRequeues', key, undefined, () => limiter.numRequeues(key)) ?? fallback.numRequeues(key);
    },
  };
}
