import { Observable, type OperatorFunction, type Subscriber } from 'rxjs';
import { keyOf as metaNamespaceKey } from '../0-model/objects.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';
import { DeltaQueue } from './deltaQueue.ts';
import type { FillReplace, MissedDeletion } from './deltas.ts';
import {
  isFill,
  isMissedDeletion,
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
 * - a {@link MissedDeletion} (`deleted` with `finalStateUnknown: true`) → Deleted carrying a
 *   {@link DeletedFinalStateUnknown} tombstone of its object (ignored likewise).
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
      const fifo = new DeltaFifo<T>(subscriber, keyOf, options.knownObjects);
      return source.subscribe(
        forward(subscriber, (event) => {
          switch (event.type) {
            case 'added':
              return fifo.watchEvent(keyOf(event.object), { type: 'Added', object: event.object }, event.resourceVersion);
            case 'modified':
              return fifo.watchEvent(keyOf(event.object), { type: 'Updated', object: event.object }, event.resourceVersion);
            case 'deleted':
              return fifo.deleted(keyOf(event.object), event.object, event.resourceVersion, isMissedDeletion(event));
            case 'deletedKey':
              return fifo.deleted(event.key, undefined, event.resourceVersion);
            case 'replace':
              fifo.replace(event.items, event.rejectedKeys ?? [], isFill(event));
              return fifo.step('replace', event.resourceVersion);
            case 'resync':
              fifo.resync();
              return fifo.step('resync', undefined);
            case 'bookmark':
            case 'watch':
            case 'error':
              return subscriber.next(event);
          }
        }),
      );
    });
}

/** An entry as the queue makes one (`DeltaQueue.add`): the same shape, so a batch built without the queue is the same. */
type QueueEntry<T> = { readonly key: string; readonly deltas: Delta<T>[]; isInInitialList: boolean };

/** One subscription's DeltaFIFO: the per-key queue, what the consumer holds, and the batch being handed on. */
class DeltaFifo<T> {
  private readonly subscriber: Subscriber<FifoOutput<T>>;
  private readonly keyOf: (object: T) => string;
  /** What the consumer has been handed, when it gives no knownObjects of its own. */
  private readonly own: Map<string, T> | undefined;
  private readonly known: () => KnownObjects<T>;
  private readonly queue = new DeltaQueue<T>();
  private synced = false;
  private draining = false;
  private pending: { cause: BatchCause; resourceVersion: string | undefined } | undefined;
  /** The batch of a list into an empty queue and cache, built without the queue (see listDirect), until its step takes it. */
  private listed: QueueEntry<T>[] | undefined;
  /**
   * Keys handed on last as a tombstone, with the tombstone's object (only when the operator
   * keeps its own knownObjects: a consumer such as processDeltas may still have them queued).
   * Forgotten at the next list or the key's next delta, so it never outgrows one relist's
   * tombstones. (client-go would still take a delete for a tombstone queued across two relists;
   * a server never sends one: the watch starts after the list that missed the key.)
   */
  private readonly tombstoned: Map<string, T> | undefined;

  constructor(subscriber: Subscriber<FifoOutput<T>>, keyOf: (object: T) => string, knownObjects: (() => KnownObjects<T>) | undefined) {
    this.subscriber = subscriber;
    this.keyOf = keyOf;
    this.own = knownObjects ? undefined : new Map<string, T>();
    const own = this.own;
    this.known = knownObjects ?? (() => own!);
    this.tombstoned = own ? new Map<string, T>() : undefined;
  }

  private enqueue(key: string, delta: Delta<T>): void {
    this.queue.add(key, delta, !this.synced);
  }

  /** The key's object as the consumer will have it once the queue is handed on (undefined: none, or deleted). */
  private current(key: string): T | undefined {
    const queued = this.queue.peek(key);
    if (queued === undefined || queued.length === 0) return this.known().get(key);
    return queued[queued.length - 1]!.type === 'Deleted' ? undefined : newestObject(queued);
  }

  /** A list: Replaced per listed object (see the operator's rules), then the tombstones of the keys it lacks. */
  replace(items: readonly T[], rejectedKeys: readonly string[], fill: boolean): void {
    this.tombstoned?.clear();
    // Nothing known and nothing queued (the first list): nothing can be missing from it.
    if (this.queue.size === 0 && this.known().size === 0) {
      if (!this.draining && this.pending === undefined) return this.listDirect(items);
      for (const item of items) this.enqueue(this.keyOf(item), { type: 'Replaced', object: item });
      return;
    }
    // Keys whose listed object failed validation exist on the server: never missing.
    const listed = new Set<string>(rejectedKeys);
    for (const item of items) {
      const key = this.keyOf(item);
      listed.add(key);
      const previous = this.current(key);
      // A list filling shards that joined: what it finds unchanged is no news.
      if (fill && isUnchanged(previous, item)) continue;
      // Another object under the key (another uid): the deletion missed first, then the new object.
      const missed = recreatedDelta(key, previous, item);
      if (missed !== undefined) this.enqueue(key, missed);
      this.enqueue(key, { type: 'Replaced', object: item });
    }
    for (const key of [...this.queue.keys()]) {
      if (listed.has(key)) continue;
      const last = newestObject(this.queue.peek(key) ?? []);
      if (last !== undefined) this.enqueue(key, { type: 'Deleted', object: { finalStateUnknown: true, key, object: last } });
    }
    for (const [key, object] of this.known().entries()) {
      if (!listed.has(key) && !this.queue.has(key))
        this.enqueue(key, { type: 'Deleted', object: { finalStateUnknown: true, key, object } });
    }
  }

  /**
   * A list into an empty queue and cache, with no batch being handed on (the first list, as a rule): its batch built
   * directly, each listed key once in list order with its one Replaced, as the queue would hand it on, but without
   * the queue's map and order (five hash operations an item, their entries kept until the batch is taken). Keys in
   * increasing order (an API server lists in key order) are told distinct by comparing each with the one before; once
   * one is not, a Set tells. At a key listed twice (which the queue coalesces into one entry) what was built so far
   * goes into the queue in the same order, and the rest as before: the batch is the same either way.
   */
  private listDirect(items: readonly T[]): void {
    const isInInitialList = !this.synced;
    const entries: QueueEntry<T>[] = [];
    let previous = '';
    let seen: Set<string> | undefined;
    for (let i = 0; i < items.length; i++) {
      const object = items[i]!;
      let key: string;
      try {
        key = this.keyOf(object);
      } catch (fault) {
        // As the queue would stand had it taken the items before this one.
        this.queueAll(entries);
        throw fault;
      }
      if (seen === undefined && i > 0 && !(key > previous)) seen = new Set(entries.map((entry) => entry.key));
      if (seen !== undefined) {
        if (seen.has(key)) {
          this.queueAll(entries);
          this.enqueue(key, { type: 'Replaced', object });
          for (let j = i + 1; j < items.length; j++) this.enqueue(this.keyOf(items[j]!), { type: 'Replaced', object: items[j]! });
          return;
        }
        seen.add(key);
      }
      previous = key;
      entries.push({ key, deltas: [{ type: 'Replaced', object }], isInInitialList });
    }
    this.listed = entries;
  }

  /** Entries built by {@link listDirect}, into the queue in their order. */
  private queueAll(entries: readonly QueueEntry<T>[]): void {
    for (const entry of entries) this.enqueue(entry.key, entry.deltas[0]!);
  }

  /** A resync tick: Sync for every known object with nothing queued. */
  resync(): void {
    for (const [key, object] of this.known().entries()) if (!this.queue.has(key)) this.enqueue(key, { type: 'Sync', object });
  }

  /** Keeps the operator's own knownObjects (when the consumer gives none) up to date with what it hands on. */
  private handOn(entry: Deltas<T>): void {
    if (!this.own) return;
    const last = entry.deltas[entry.deltas.length - 1];
    this.tombstoned!.delete(entry.key);
    if (last?.type === 'Deleted') {
      this.own.delete(entry.key);
      if (isTombstone(last.object)) this.tombstoned!.set(entry.key, last.object.object);
    } else {
      const object = newestObject(entry.deltas);
      if (object !== undefined) this.own.set(entry.key, object);
    }
  }

  private drain(): void {
    this.draining = true;
    try {
      while (this.pending) {
        const { cause, resourceVersion } = this.pending;
        this.pending = undefined;
        // A list's batch built by listDirect (the queue is empty then: nothing is queued between a replace and its step).
        const items: Deltas<T>[] = this.listed ?? [];
        this.listed = undefined;
        for (let i = 0; i < items.length; i++) this.handOn(items[i]!);
        for (let next = this.queue.pop(); next; next = this.queue.pop()) {
          items.push(next);
          this.handOn(next);
        }
        const firstReplace = cause === 'replace' && !this.synced;
        if (cause === 'replace') this.synced = true;
        if (items.length === 0 && !firstReplace) continue;
        this.subscriber.next(
          resourceVersion === undefined ? { type: 'deltas', cause, items } : { type: 'deltas', cause, items, resourceVersion },
        );
      }
    } finally {
      this.draining = false;
    }
  }

  /** Hands on what one source step queued, as one batch. */
  step(cause: BatchCause, resourceVersion: string | undefined): void {
    // A re-entrant step joins the batch being drained; a replace always marks its own.
    if (!this.pending || cause === 'replace') this.pending = { cause, resourceVersion };
    if (!this.draining) this.drain();
  }

  /**
   * One watch event. With nothing queued and nothing being handed on (the
   * usual case), it goes out at once as a one-key batch, without a trip
   * through the queue; otherwise it is queued like any other step.
   */
  watchEvent(key: string, delta: Delta<T>, resourceVersion: string, afterTombstone = false): void {
    if (this.draining || this.queue.size > 0) {
      this.enqueue(key, delta);
      return this.step('event', resourceVersion);
    }
    const entry: Deltas<T> = afterTombstone
      ? { key, deltas: [delta], isInInitialList: !this.synced, afterTombstone: true }
      : { key, deltas: [delta], isInInitialList: !this.synced };
    this.handOn(entry);
    this.draining = true;
    try {
      this.subscriber.next({ type: 'deltas', cause: 'event', items: [entry], resourceVersion });
    } finally {
      this.draining = false;
    }
    // Steps that arrived while it was handed on (a re-entrant source).
    if (this.pending) this.drain();
  }

  /**
   * A DELETED event; `object` undefined when it failed validation (the last state we have stands for it). `missed`:
   * a deletion a list noticed ({@link MissedDeletion}), handed on as a tombstone.
   */
  deleted(key: string, object: T | undefined, resourceVersion: string, missed = false): void {
    // An empty queue (a watch event, as a rule) has nothing for the key: no lookup of it.
    const queued = this.queue.size > 0 ? this.queue.peek(key) : undefined;
    const last = queued ? newestObject(queued) : this.known().get(key);
    if (last !== undefined) return this.watchEvent(key, deletionOf(key, object ?? last, missed), resourceVersion);
    const tombstone = this.tombstoned?.get(key);
    // (Re-entrant, while a batch is being handed on: dropped, as it would be once the tombstone is handled.)
    if (tombstone === undefined || this.draining) return;
    // Handed on as a tombstone: a consumer that still has it queued takes this delete instead.
    this.tombstoned!.delete(key);
    this.watchEvent(key, deletionOf(key, object ?? tombstone, missed), resourceVersion, true);
  }
}

/** A Deleted delta of `gone`; a tombstone of it when the deletion was missed (a list noticed it: `MissedDeletion`). */
function deletionOf<T>(key: string, gone: T, missed: boolean): Delta<T> {
  return { type: 'Deleted', object: missed ? { finalStateUnknown: true, key, object: gone } : gone };
}
