import { filter, type OperatorFunction } from 'rxjs';
import type { InformerEvent, InformerEventType } from '../4-store/informerEvent.ts';

/**
 * Keeps the events of the given types, narrowing the event type.
 *
 * ```
 * events:  --a--u--d--u--
 * ofType('updated')
 * output:  -----u-----u--
 * ```
 *
 * ## Example
 * ```ts
 * pods.events$.pipe(ofType('updated')).subscribe((e) => console.log(e.oldObject, e.object));
 * ```
 *
 * Generic over the incoming event type `E`, so it narrows whatever it is given
 * (an already narrowed stream stays narrowed, and the object type survives).
 *
 * @param types The event types to keep.
 * @return The events of those types, typed as such.
 */
export function ofType<E extends InformerEvent<unknown>, K extends E['type'] & InformerEventType>(
  ...types: readonly K[]
): OperatorFunction<E, Extract<E, { readonly type: K }>> {
  const wanted = new Set<InformerEventType>(types);
  return filter((event): event is Extract<E, { readonly type: K }> => wanted.has(event.type));
}
