import { Observable, type OperatorFunction } from 'rxjs';
import type { InformerEvent, InformerEventType } from '../4-store/informerEvent.ts';

/**
 * Keeps the events of the given types, narrowing the event type.
 *
 * ```
 * events:  --a--u--d--u--
 * ofType('updated')
 * output:  -----u-----u--
 * ```
 */
export function ofType<T, K extends InformerEventType>(...types: readonly K[]): OperatorFunction<InformerEvent<T>, Extract<InformerEvent<T>, { type: K }>> {
  const wanted = new Set<string>(types);
  return (source) =>
    new Observable((subscriber) =>
      source.subscribe({
        next: (event) => {
          if (wanted.has(event.type)) subscriber.next(event as Extract<InformerEvent<T>, { type: K }>);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
}
