/**
 * `debounceWithin(dueMs, maxMs, scheduler)`: rxjs's `debounceTime` with a longest wait. A debounce fires only after a
 * quiet spell, so values that come more often than `dueMs` hold it back for as long as they come; here the last value
 * is emitted `dueMs` after it came or `maxMs` after the first value it waited with, whichever is sooner.
 *
 * ```
 * source:                   a-b-c-d-e-f-g-h-i-j-k|   (a value every 2 frames)
 * debounceTime(3):          ---------------------(k|)  (never quiet for 3 frames: only at the end)
 * debounceWithin(3, 7):     -------d-------h-----(k|)  (at most 7 frames after the first value it waits with)
 * ```
 */
import { Observable, asyncScheduler, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';

/**
 * @param dueMs quiet time after a value before it is emitted
 * @param maxMs longest time a value waits from the first one of its spell (at least `dueMs`)
 * @return the source's values, debounced; at completion the one waiting is emitted at once, as `debounceTime` does
 */
export function debounceWithin<T>(dueMs: number, maxMs: number, scheduler: SchedulerLike = asyncScheduler): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let waiting: { readonly value: T; readonly since: number } | undefined;
      let timer: Subscription | undefined;
      const emit = () => {
        timer?.unsubscribe();
        timer = undefined;
        const taken = waiting;
        waiting = undefined;
        if (taken) subscriber.next(taken.value);
      };
      const subscription = source.subscribe({
        next: (value) => {
          const now = scheduler.now();
          const since = waiting?.since ?? now;
          waiting = { value, since };
          timer?.unsubscribe();
          timer = scheduler.schedule(emit, Math.max(0, Math.min(dueMs, since + Math.max(maxMs, dueMs) - now)));
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          emit();
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        timer?.unsubscribe();
      };
    });
}
