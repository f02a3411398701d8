import { filter, type Observable } from 'rxjs';
import type { KubeObject } from '../../0-model/objects.ts';
import type { InformerEvent } from '../../4-store/informerEvent.ts';
import type { Predicate } from './predicate.ts';

/**
 * Keeps the events a predicate accepts.
 *
 * ```
 * events:  --a--u1--u2--d--     u1 changes spec (generation 1 → 2), u2 only status
 * where(generationChanged())
 * output:  --a--u1------d--
 * ```
 *
 * ## Example
 * ```ts
 * apples.events$.pipe(ofType('updated'), where(generationChanged())).subscribe((e) => console.log(e.oldObject));
 * ```
 *
 * The returned operator is itself generic: a predicate is usually built
 * without naming its object type (`generationChanged()` is a
 * `Predicate<KubeObject>`), and the stream keeps its own event type, narrowed
 * or not, rather than falling back to the predicate's.
 *
 * @param predicate Decides, per event, whether it passes.
 * @return The events the predicate accepts, typed as they came in.
 */
export function where<T extends KubeObject>(predicate: Predicate<T>): <E extends InformerEvent<T>>(source: Observable<E>) => Observable<E> {
  return (source) => source.pipe(filter((event) => predicate(event)));
}
