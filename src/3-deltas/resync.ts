import { Observable, asyncScheduler, identity, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { SourceEvent } from '../2-source/sourceEvent.ts';

/**
 * Inserts a `resync` tick into the source stream every `periodMs`, counted
 * from the end of the first list; `deltaFifo` turns each tick into Sync
 * deltas for every known object that has nothing queued. A period of 0 (or
 * less) disables it.
 *
 * ```
 * source:  --R-a-------b------
 *          R: the first replace
 * resync(4)
 * output:  --R-a-r---r-b-r----
 *          r: { type: 'resync' }
 * ```
 */
export function resync<T>(periodMs: number, scheduler: SchedulerLike = asyncScheduler): MonoTypeOperatorFunction<SourceEvent<T>> {
  if (!(periodMs > 0)) return identity;
  return (source) =>
    new Observable<SourceEvent<T>>((subscriber) => {
      let timer: Subscription | undefined;
      const subscription = source.subscribe({
        next: (event) => {
          subscriber.next(event);
          if (!timer && event.type === 'replace') {
            timer = scheduler.schedule(function () {
              subscriber.next({ type: 'resync' });
              this.schedule(undefined, periodMs);
            }, periodMs);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => {
        timer?.unsubscribe();
        subscription.unsubscribe();
      };
    });
}
