import { Observable, identity, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import { isObjectFault } from '../0-model/errors.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';
import { forward } from '../util/forward.ts';
import { scheduleAfter } from '../util/scheduleAfter.ts';

/**
 * Inserts a `resync` tick into the source stream every `periodMs` while the
 * watch is established; `deltaFifo` turns each tick into Sync deltas for
 * every known object that has nothing queued.
 *
 * Not quite client-go: its reflector's resync timer starts when a list has
 * succeeded and runs until that ListAndWatch returns (reflector.go,
 * `watchWithResync`), through every re-watch and the backoff waits before
 * them (a refused connection, a 429); only a relist stops it. Here any failed
 * list or watch pauses it, until the next watch request or sign of a live
 * watch. Why: a resync re-delivers the cache as if it were current, and
 * handlers act on it (a controller reconciles every object, often writing to
 * the API server); while the list or watch is failing nothing confirms the
 * cache, and the server that is refusing or failing requests is the one the
 * reconciles would load (docs/semantics.md, "Different, and why"). A period of 0 (or less), NaN
 * or `Infinity` disables it. Any other period is kept, however long (a
 * period past Node's 2^31−1 ms timer limit is a chain of timers,
 * `scheduleAfter`) or short (client-go raises one under 1 s to 1 s; see
 * docs/semantics.md).
 *
 * - A `replace` (a list) arms it: the first tick comes `periodMs` later.
 * - An `error` that is a transport or server fault (the list or watch failed)
 *   disarms it. An object fault (ValidationFailed, TransformError,
 *   IndexerError, UnknownEventType, HandlerError) does not: the watch goes on.
 * - The next watch being opened, or sign of a live watch (added, modified,
 *   deleted, deletedKey, bookmark), or list re-arms it, with a full period
 *   (client-go starts a new timer with every ListAndWatch; a quiet type sends
 *   no event to re-arm it with). A watch that fails again disarms it again.
 *
 * ```
 * source:  --R-a-------e---------b----
 *          R: a replace, e: a network error, b: a bookmark
 * resync(4)
 * output:  --R-a-r---r-e---------b---r
 *          r: { type: 'resync' }; none between e and b (or the next watch opened)
 * ```
 */
export function resync<T>(periodMs: number, scheduler: SchedulerLike = monotonicScheduler): MonoTypeOperatorFunction<SourceEvent<T>> {
  if (!(periodMs > 0) || periodMs === Infinity) return identity;
  return (source) =>
    new Observable<SourceEvent<T>>((subscriber) => {
      let timer: Subscription | undefined;
      /** Whether a list has happened: until then, events cannot arm the timer. */
      let listed = false;
      const disarm = () => {
        timer?.unsubscribe();
        timer = undefined;
      };
      const arm = () => {
        if (timer) return;
        // Re-armed before the emit, so that a disarm (or unsubscribe) during it cancels the next tick.
        const tick = (): void => {
          timer = scheduleAfter(scheduler, tick, periodMs);
          subscriber.next({ type: 'resync' });
        };
        timer = scheduleAfter(scheduler, tick, periodMs);
      };
      const subscription = source.subscribe(
        forward(subscriber, (event) => {
          subscriber.next(event);
          // The subscriber may have left during that emit (first(), take(1)): arm nothing then.
          if (subscriber.closed) return;
          switch (event.type) {
            case 'replace':
              listed = true;
              return arm();
            case 'added':
            case 'modified':
            case 'deleted':
            case 'deletedKey':
            case 'bookmark':
            case 'watch':
              return listed ? arm() : undefined;
            case 'error':
              return isObjectFault(event.error) ? undefined : disarm();
            case 'resync':
              return;
          }
        }),
      );
      return () => {
        disarm();
        subscription.unsubscribe();
      };
    });
}
