import { Observable, type OperatorFunction } from 'rxjs';
import { keyOf as metaNamespaceKey } from '../0-model/objects.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';
import { DeltaQueue } from './deltaQueue.ts';
import type { FillReplace } from './deltas.ts';
import {
  isFill,
  isTombstone,
  isUnchanged,
  newestObject,
  recreatedDelta,
  type BatchCause,
  type Delta,
  type Deltas,
  type FifoOutput,
} from './deltas.ts';
import { forward } from '../util/forward.ts';

/** What the consumer has cached (client-go's knownObjects): the informer passes its store. */
export interface KnownObjects<T> {
  get(key: string): T | undefined;
  has(key: string): boolean;
  entries(): Iterable<[string, T]>;
  /** How many objects it holds; when given, a list into an empty cache skips the search for missed deletions. */
  readonly size?: number;
}

export interface DeltaFifoOptions<T> {
  /** The cache key of an object. Default `namespace/name` (or `name` when cluster-scoped). */
  readonly keyOf?: (object: T) => string;
  /**
   * What the consumer holds, as of the last batch handed on. Without it the
   * operator keeps its own map of the objects it handed on; an informer passes
   * its store instead, so objects are indexed once.
   */
  readonly knownObjects?: () => KnownObjects<T>;
}

/**
 * Turns source events into per-key deltas with client-go's DeltaFIFO semantics.
 *
 * - `added` → Added, `modified` → Updated, `deleted` → Deleted (ignored for a
 *   key that is neither known nor queued).
 * - `deletedKey` (a DELETED event whose object failed validation) → Deleted
 *   carrying the newest queued or the known object of the key (ignored likewise).
 * - `replace` → Replaced for every listed object, then Deleted carrying a
 *   {@link DeletedFinalStateUnknown} tombstone for every queued or known key the
 *   list no longer has (deletions missed while the watch was down). A listed object
 *   whose uid differs from the known or queued one's (its name deleted and created
 *   again meanwhile) gets such a tombstone of the old object just before its Replaced. A
 *   {@link FillReplace} (a sharded informer filling shards that joined) hands on no Replaced for
 *   an object the consumer holds unchanged (same resourceVersion). Its
 *   `rejectedKeys` (listed, but invalid) count as listed: no delta, no tombstone,
 *   whatever is known or queued for them stays.
 * - `resync` → Sync for every known object that has nothing queued.
 * - `bookmark`, `watch` and `error` pass through untouched.
 *
 * Each source step comes out as one batch; the first `replace` batch (even an
 * empty one) marks the end of the initial list, and its deltas carry
 * `isInInitialList: true`. Deltas for a key that arrive while a batch is being
 * handed on (a re-entrant source) coalesce into that key's entry, key order
 * being first arrival, and consecutive Deleted deltas collapse into one. For an
 * asynchronous consumer use `processDeltas`, which keeps the same per-key queue.
 *
 * ```
 * source:  --a----m----R(a,b)----x----
 *          a: added a, m: modified a, R: replace listing a and b, x: deleted b
 * deltaFifo()
 * output:  --A----U----[Ra,Rb]---D----
 *          A: Added a, U: Updated a, [Ra,Rb]: one batch of Replaced a and b, D: Deleted b
 * ```
 */
export function deltaFifo<T extends { readonly metadata: { readonly name: string; readonly namespace?: string | undefined } }>(
  options: DeltaFifoOptions<T> = {},
): OperatorFunction<SourceEvent<T>, FifoOutput<T>> {
  const keyOf = options.keyOf ?? metaNamespaceKey;
  return (source) =>
    new Observable<FifoOutput<T>>((subscriber) => {
      /** What the consumer has been handed: the DeltaFIFO's knownObjects. */
      const own = options.knownObjects ? undefined : new Map<string, T>();
      const known: () => KnownObjects<T> = options.knownObjects ?? (() => own!);
      const queue = new DeltaQueue<T>();
      let synced = false;
      let draining = false;
      let pending: { cause: BatchCause; resourceVersion: string | undefined } | undefined;

      const enqueue = (key: string, delta: Delta<T>) => queue.add(key, delta, !synced);

      /**
       * Keys handed on last as a tombstone, with the tombstone's object (only when the operator
       * keeps its own knownObjects: a consumer such as processDeltas may still have them queued).
       * Forgotten at the next list or the key's next delta, so it never outgrows one relist's
       * tombstones. (client-go would still take a delete for a tombstone queued across two relists;
       * a server never sends one: the watch starts after the list that missed the key.)
       */
      const tombstoned = own ? new Map<string, T>() : undefined;

      /** The key's object as the consumer will have it once the queue is handed on (undefined: none, or deleted). */
      const current = (key: string): T | undefined => {
        const queued = queue.peek(key);
        if (queued === undefined || queued.length === 0) return known().get(key);
        return queued[queued.length - 1]!.type === 'Deleted' ? undefined : newestObject(queued);
      };

      const replace = (items: readonly T[], rejectedKeys: readonly string[], fill: boolean) => {
        tombstoned?.clear();
        // Nothing known and nothing queued (the first list): nothing can be missing from it.
        if (queue.size === 0 && known().size === 0) {
          for (const item of items) enqueue(keyOf(item), { type: 'Replaced', object: item });
          return;
        }
        // Keys whose listed object failed validation exist on the server: never missing.
        const listed = new Set<string>(rejectedKeys);
        for (const item of items) {
          const key = keyOf(item);
          listed.add(key);
          const previous = current(key);
          // A list filling shards that joined: what it finds unchanged is no news.
          if (fill && isUnchanged(previous, item)) continue;
          // Another object under the key (another uid): the deletion missed first, then the new object.
          const missed = recreatedDelta(key, previous, item);
          if (missed !== undefined) enqueue(key, missed);
          enqueue(key, { type: 'Replaced', object: item });
        }
        for (const key of [...queue.keys()]) {
          if (listed.has(key)) continue;
          const last = newestObject(queue.peek(key) ?? []);
          if (last !== undefined) enqueue(key, { type: 'Deleted', object: { finalStateUnknown: true, key, object: last } });
        }
        for (const [key, object] of known().entries()) {
          if (!listed.has(key) && !queue.has(key)) enqueue(key, { type: 'Deleted', object: { finalStateUnknown: true, key, object } });
        }
      };

      /** Keeps the operator's own knownObjects (when the consumer gives none) up to date with what it hands on. */
      const handOn = (entry: Deltas<T>) => {
        if (!own) return;
        const last = entry.deltas[entry.deltas.length - 1];
        tombstoned!.delete(entry.key);
        if (last?.type === 'Deleted') {
          own.delete(entry.key);
          if (isTombstone(last.object)) tombstoned!.set(entry.key, last.object.object);
        } else {
          const object = newestObject(entry.deltas);
          if (object !== undefined) own.set(entry.key, object);
        }
      };

      const drain = () => {
        draining = true;
        try {
          while (pending) {
            const { cause, resourceVersion } = pending;
            pending = undefined;
            const items: Deltas<T>[] = [];
            for (let next = queue.pop(); next; next = queue.pop()) {
              items.push(next);
              handOn(next);
            }
            const firstReplace = cause === 'replace' && !synced;
            if (cause === 'replace') synced = true;
            if (items.length === 0 && !firstReplace) continue;
            subscriber.next(
              resourceVersion === undefined ? { type: 'deltas', cause, items } : { type: 'deltas', cause, items, resourceVersion },
            );
          }
        } finally {
          draining = false;
        }
      };

      const step = (cause: BatchCause, resourceVersion: string | undefined) => {
        // A re-entrant step joins the batch being drained; a replace always marks its own.
        if (!pending || cause === 'replace') pending = { cause, resourceVersion };
        if (!draining) drain();
      };

      /**
       * One watch event. With nothing queued and nothing being handed on (the
       * usual case), it goes out at once as a one-key batch, without a trip
       * through the queue; otherwise it is queued like any other step.
       */
      const watchEvent = (key: string, delta: Delta<T>, resourceVersion: string, afterTombstone = false) => {
        if (draining || queue.size > 0) {
          enqueue(key, delta);
          return step('event', resourceVersion);
        }
        const entry: Deltas<T> = afterTombstone
          ? { key, deltas: [delta], isInInitialList: !synced, afterTombstone: true }
          : { key, deltas: [delta], isInInitialList: !synced };
        handOn(entry);
        draining = true;
        try {
          subscriber.next({ type: 'deltas', cause: 'event', items: [entry], resourceVersion });
        } finally {
          draining = false;
        }
        // Steps that arrived while it was handed on (a re-entrant source).
        if (pending) drain();
      };

      /** A DELETED event; `object` undefined when it failed validation (the last state we have stands for it). */
      const deleted = (key: string, object: T | undefined, resourceVersion: string) => {
        const queued = queue.peek(key);
        const last = queued ? newestObject(queued) : known().get(key);
        if (last !== undefined) return watchEvent(key, { type: 'Deleted', object: object ?? last }, resourceVersion);
        const tombstone = tombstoned?.get(key);
        // (Re-entrant, while a batch is being handed on: dropped, as it would be once the tombstone is handled.)
        if (tombstone === undefined || draining) return;
        // Handed on as a tombstone: a consumer that still has it queued takes this delete instead.
        tombstoned!.delete(key);
        watchEvent(key, { type: 'Deleted', object: object ?? tombstone }, resourceVersion, true);
      };

      return source.subscribe(
        forward(subscriber, (event) => {
          switch (event.type) {
            case 'added':
              return watchEvent(keyOf(event.object), { type: 'Added', object: event.object }, event.resourceVersion);
            case 'modified':
              return watchEvent(keyOf(event.object), { type: 'Updated', object: event.object }, event.resourceVersion);
            case 'deleted':
              return deleted(keyOf(event.object), event.object, event.resourceVersion);
            case 'deletedKey':
              return deleted(event.key, undefined, event.resourceVersion);
            case 'replace':
              replace(event.items, event.rejectedKeys ?? [], isFill(event));
              return step('replace', event.resourceVersion);
            case 'resync':
              for (const [key, object] of known().entries()) if (!queue.has(key)) enqueue(key, { type: 'Sync', object });
              return step('resync', undefined);
            case 'bookmark':
            case 'watch':
            case 'error':
              return subscriber.next(event);
          }
        }),
      );
    });
}
