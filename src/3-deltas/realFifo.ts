import { Observable, type OperatorFunction } from 'rxjs';
import { keyOf as metaNamespaceKey } from '../0-model/objects.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';
import type { DeltaFifoOptions, KnownObjects } from './deltaFifo.ts';
import { isFill, isUnchanged, recreatedDelta, type BatchCause, type Delta, type Deltas, type FifoOutput } from './deltas.ts';
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
 * - `deletedKey` (a DELETED whose object failed validation) → Deleted carrying the known object
 *   (dropped when nothing is known for the key);
 * - `bookmark`, `watch` and `error` pass through untouched.
 *
 * The first `replace` batch (even an empty one) ends the initial list; its deltas, and any before
 * it, carry `isInInitialList: true`. A source that emits while a batch is being handed on (re-entrant)
 * is queued in order and handled once the batch has been consumed, so each step sees the
 * consumer's cache as it stands.
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
      const own = options.knownObjects ? undefined : new Map<string, T>();
      const known: () => KnownObjects<T> = options.knownObjects ?? (() => own!);
      let synced = false;
      let handing = false;
      /** Source events that arrived while a batch was being handed on. */
      const backlog = new Fifo<SourceEvent<T>>();

      /** Keeps the operator's own knownObjects (when the consumer gives none) in step with what it hands on. */
      const remember = (key: string, delta: Delta<T>) => {
        if (!own) return;
        if (delta.type === 'Deleted') own.delete(key);
        else own.set(key, delta.object as T);
      };

      /**
       * Hands on one batch of deltas (one each, or a recreated key's tombstone and Replaced together),
       * split before a key it already holds.
       */
      const emit = (cause: BatchCause, resourceVersion: string | undefined, deltas: readonly (readonly [string, ...Delta<T>[]])[]) => {
        const isInInitialList = !synced;
        if (cause === 'replace') synced = true;
        let items: Deltas<T>[] = [];
        let keys = new Set<string>();
        const flush = () => {
          subscriber.next(
            resourceVersion === undefined ? { type: 'deltas', cause, items } : { type: 'deltas', cause, items, resourceVersion },
          );
          items = [];
          keys = new Set<string>();
        };
        for (const [key, ...entry] of deltas) {
          if (keys.has(key)) flush();
          keys.add(key);
          items.push({ key, deltas: entry, isInInitialList });
          remember(key, entry[entry.length - 1]!);
        }
        // An empty batch matters only as the end of the initial list.
        if (items.length > 0 || (cause === 'replace' && isInInitialList)) flush();
      };

      const replace = (event: Extract<SourceEvent<T>, { type: 'replace' }>) => {
        const deltas: (readonly [string, ...Delta<T>[]])[] = [];
        const listed = new Set<string>(event.rejectedKeys ?? []);
        for (const item of event.items) listed.add(keyOf(item));
        // Nothing known (the first list): nothing can be missing from it.
        if (known().size !== 0) {
          for (const [key, object] of known().entries()) {
            if (!listed.has(key)) deltas.push([key, { type: 'Deleted', object: { finalStateUnknown: true, key, object } }]);
          }
        }
        const fill = isFill(event);
        for (const item of event.items) {
          const key = keyOf(item);
          const previous = known().get(key);
          // A list filling shards that joined: what it finds unchanged is no news.
          if (fill && isUnchanged(previous, item)) continue;
          const replaced: Delta<T> = { type: 'Replaced', object: item };
          // Another object under the key (another uid): the deletion missed, then the new object, as one entry.
          const missed = recreatedDelta(key, previous, item);
          deltas.push(missed === undefined ? [key, replaced] : [key, missed, replaced]);
        }
        emit('replace', event.resourceVersion, deltas);
      };

      const handle = (event: SourceEvent<T>) => {
        switch (event.type) {
          case 'added':
            return emit('event', event.resourceVersion, [[keyOf(event.object), { type: 'Added', object: event.object }]]);
          case 'modified':
            return emit('event', event.resourceVersion, [[keyOf(event.object), { type: 'Updated', object: event.object }]]);
          case 'deleted':
            return emit('event', event.resourceVersion, [[keyOf(event.object), { type: 'Deleted', object: event.object }]]);
          case 'deletedKey': {
            const object = known().get(event.key);
            if (object === undefined) return;
            return emit('event', event.resourceVersion, [[event.key, { type: 'Deleted', object }]]);
          }
          case 'replace':
            return replace(event);
          case 'resync': {
            const deltas: (readonly [string, Delta<T>])[] = [];
            for (const [key, object] of known().entries()) deltas.push([key, { type: 'Sync', object }]);
            return emit('resync', undefined, deltas);
          }
          case 'bookmark':
          case 'watch':
          case 'error':
            return subscriber.next(event);
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
