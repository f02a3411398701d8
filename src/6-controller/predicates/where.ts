import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
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
 */
export function where<T extends KubeObject>(predicate: Predicate<T>): MonoTypeOperatorFunction<InformerEvent<T>> {
  return (source) =>
    new Observable((subscriber) =>
      source.subscribe({
        next: (event) => {
          if (predicate(event)) subscriber.next(event);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
}
