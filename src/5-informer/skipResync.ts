import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { InformerEvent } from '../4-store/informerEvent.ts';

/**
 * Drops `updated` events that changed nothing (resync ticks, and relists that
 * found the same resourceVersion).
 *
 * ```
 * events:  --a--s--u--s--
 *          s: updated with resync: true
 * skipResync()
 * output:  --a-----u-----
 * ```
 */
export function skipResync<T>(): MonoTypeOperatorFunction<InformerEvent<T>> {
  return (source) =>
    new Observable((subscriber) =>
      source.subscribe({
        next: (event) => {
          if (event.type !== 'updated' || !event.resync) subscriber.next(event);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
}
