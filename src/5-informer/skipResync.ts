import { filter, type MonoTypeOperatorFunction } from 'rxjs';
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
 *
 * ## Example
 * ```ts
 * pods.events$.pipe(ofType('updated'), skipResync()).subscribe((e) => console.log(e.oldObject, e.object));
 * ```
 *
 * Generic over the event type, so a stream narrowed by `ofType` stays narrowed.
 *
 * @return The same events, less the resyncs.
 */
export function skipResync<E extends InformerEvent<unknown>>(): MonoTypeOperatorFunction<E> {
  return filter((event) => event.type !== 'updated' || !event.resync);
}
