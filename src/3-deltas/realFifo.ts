import { Observable, type OperatorFunction } from 'rxjs';
import { keyOf as metaNamespaceKey } from '../0-model/objects.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';
import type { DeltaFifoOptions, KnownObjects } from './deltaFifo.ts';
import type { FifoOutput } from './deltas.ts';
import { handOn, initialRealFifo, realFifoStep } from './realFifoStep.ts';
import { Fifo } from '../util/fifo.ts';
import { forward } from '../util/forward.ts';

/** The same options as {@link deltaFifo}'s: the key function, and what the consumer holds. */
export type RealFifoOptions<T> = DeltaFifoOptions<T>;

/**
 * Turns source events into deltas in the order the server sent them, with client-go's RealFIFO
 * semantics (the informers' queue since Kubernetes 1.33, `InOrderInformers`), instead of
 * {@link deltaFifo}'s per-key queue:
 *
 * - every event is one delta of its own: nothing is merged per key, two Deleted in a row stay two
 *   (a delete of a key the consumer does not hold is handed on; the informer's reducer drops it);
 * - `replace` (a list or relist) is one batch: first a Deleted with a {@link DeletedFinalStateUnknown}
 *   tombstone for every known key the list no longer has (deletions missed while the watch was
 *   down; `rejectedKeys` count as listed), then Replaced for every listed object, in list order. A
 *   listed object whose uid differs from the known one's (its name deleted and created again
 *   meanwhile) comes as one entry of two deltas at its place: the old object's tombstone, then Replaced.
 *   A `FillReplace` hands on no Replaced for an object the consumer holds unchanged;
 *   As client-go's PopBatch, a batch never holds a key twice: a list naming a key twice is handed
 *   on in consecutive batches, split before the repeat;
 * - `resync` → Sync for every known object, one batch;
 * - a `MissedDeletion` (`deleted` with `finalStateUnknown: true`: a deletion a list noticed) → Deleted
 *   carrying a {@link DeletedFinalStateUnknown} tombstone of its object;
 * - `deletedKey` (a DELETED whose object failed validation) → Deleted carrying the known object
 *   (dropped when nothing is known for the key);
 * - `bookmark`, `watch` and `error` pass through untouched.
 *
 * The first `replace` batch (even an empty one) ends the initial list; its deltas, and any before
 * it, carry `isInInitialList: true`. A source that emits while a batch is being handed on (re-entrant)
 * is queued in order and handled once the batch has been consumed, so each step sees the
 * consumer's cache as it stands. (The rules are a pure step, `realFifoStep` in realFifoStep.ts;
 * this operator is its shell.)
 *
 * ```
 * source:  --a--m--m--R(b)------x--
 *          a: added a, m: modified a, R: relist that lists only b, x: deleted b
 * realFifo()
 * output:  --A--U--U--[Da,Rb]---D--
 *          [Da,Rb]: one batch: the tombstone of a first, then Replaced b
 * ```
 */
export function realFifo<T extends { readonly metadata: { readonly name: string; readonly namespace?: string | undefined } }>(
  options: RealFifoOptions<T> = {},
): OperatorFunction<SourceEvent<T>, FifoOutput<T>> {
  const keyOf = options.keyOf ?? metaNamespaceKey;
  return (source) =>
    new Observable<FifoOutput<T>>((subscriber) => {
      /** What it handed on, when the consumer gives no knownObjects. */
      const own = options.knownObjects ? undefined : new Map<string, T>();
      const known: () => KnownObjects<T> = options.knownObjects ?? (() => own!);
      let state = initialRealFifo;
      let handing = false;
      /** Source events that arrived while a batch was being handed on. */
      const backlog = new Fifo<SourceEvent<T>>();

      const handle = (event: SourceEvent<T>): void => {
        const step = realFifoStep(state, { event, known: known() }, keyOf);
        state = step.state;
        for (const output of step.outputs) {
          if (own && output.type === 'deltas') handOn(own, output);
          subscriber.next(output);
        }
      };

      return source.subscribe(
        forward(subscriber, (event) => {
          if (handing) {
            backlog.push(event);
            return;
          }
          handing = true;
          try {
            handle(event);
            while (backlog.length > 0 && !subscriber.closed) handle(backlog.shift());
          } finally {
            handing = false;
          }
        }),
      );
    });
}
