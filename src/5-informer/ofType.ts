import { filter, type OperatorFunction } from 'rxjs';
import type { InformerEvent, InformerEventType } from '../4-store/informerEvent.ts';
import { MIGRATING } from './handleEvents.ts';

const TYPES: readonly InformerEventType[] = ['added', 'updated', 'deleted'];

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
 * At least one type, each one of `'added'`, `'updated'`, `'deleted'`, else a `TypeError` when it is called (as `on()`
 * refuses client-node's words): `ofType()` kept nothing and `ofType('modified')` from JavaScript dropped every event.
 *
 * @param types The event types to keep.
 * @return The events of those types, typed as such.
 */
export function ofType<E extends InformerEvent<unknown>, K extends E['type'] & InformerEventType>(
  ...types: readonly [K, ...K[]]
): OperatorFunction<E, Extract<E, { readonly type: K }>> {
  const expected = `ofType: expected one or more of ${TYPES.map((t) => `'${t}'`).join(', ')}`;
  if (types.length === 0) throw new TypeError(`${expected}, got none (it would keep no event)`);
  const wrong = types.findIndex((t) => !TYPES.includes(t));
  if (wrong !== -1) {
    const given: unknown = types[wrong];
    throw new TypeError(`${expected}, got ${typeof given === 'string' ? JSON.stringify(given) : String(given)}; ${MIGRATING}`);
  }
  const wanted = new Set<InformerEventType>(types);
  return filter((event): event is Extract<E, { readonly type: K }> => wanted.has(event.type));
}
