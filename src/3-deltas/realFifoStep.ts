import type { SourceEvent } from '../2-source/sourceEvent.ts';
import type { KnownObjects } from './deltaFifo.ts';
import {
  isFill,
  isMissedDeletion,
  isUnchanged,
  recreatedDelta,
  type BatchCause,
  type Delta,
  type DeltaBatch,
  type Deltas,
  type FifoOutput,
} from './deltas.ts';

/**
 * The rules of {@link realFifo}, in the reflector's shape: a state, an input (a source event and
 * what the consumer holds), and one pure {@link realFifoStep} returning the next state and the
 * outputs to hand on, as data. The rules are listed once, in realFifo's JSDoc; each is a row of
 * spec/3-deltas/realFifoStep.spec.ts. The shell (realFifo.ts) subscribes, hands the outputs on,
 * keeps its own knownObjects when the consumer gives none ({@link handOn}) and queues a re-entrant
 * source's events.
 */
export interface RealFifoState {
  /** Whether the first `replace` has been handed on (the initial list is over). */
  readonly synced: boolean;
}

export const initialRealFifo: RealFifoState = { synced: false };

export interface RealFifoInput<T> {
  readonly event: SourceEvent<T>;
  /** What the consumer holds as of the last batch handed on (realFifo's own map when it gives none). */
  readonly known: KnownObjects<T>;
}

export interface RealFifoStep<T> {
  readonly state: RealFifoState;
  /** What to hand on, in order. */
  readonly outputs: readonly FifoOutput<T>[];
}

/**
 * One key's deltas in a step, before they are cut into batches: the key, then its deltas
 * (one, or a recreated key's two).
 */
type Entry<T> = readonly [string, ...Delta<T>[]];

const NOTHING: readonly never[] = [];

/** One source event: the next state and the outputs, in order. */
export function realFifoStep<T>(state: RealFifoState, input: RealFifoInput<T>, keyOf: (object: T) => string): RealFifoStep<T> {
  const { event, known } = input;
  switch (event.type) {
    case 'added':
      return single(state, event.resourceVersion, keyOf(event.object), { type: 'Added', object: event.object });
    case 'modified':
      return single(state, event.resourceVersion, keyOf(event.object), { type: 'Updated', object: event.object });
    case 'deleted': {
      const key = keyOf(event.object);
      const object = isMissedDeletion(event) ? { finalStateUnknown: true as const, key, object: event.object } : event.object;
      return single(state, event.resourceVersion, key, { type: 'Deleted', object });
    }
    case 'deletedKey': {
      const object = known.get(event.key);
      if (object === undefined) return { state, outputs: NOTHING };
      return single(state, event.resourceVersion, event.key, { type: 'Deleted', object });
    }
    case 'replace':
      return {
        state: state.synced ? state : { synced: true },
        outputs: batches(state, 'replace', event.resourceVersion, replaced(event, known, keyOf)),
      };
    case 'resync': {
      const entries: Entry<T>[] = [];
      for (const [key, object] of known.entries()) entries.push([key, { type: 'Sync', object }]);
      return { state, outputs: batches(state, 'resync', undefined, entries) };
    }
    case 'bookmark':
    case 'watch':
    case 'error':
      return { state, outputs: [event] };
  }
}

/** A watch event's one delta, as a one-key batch. */
function single<T>(state: RealFifoState, resourceVersion: string, key: string, delta: Delta<T>): RealFifoStep<T> {
  const items: Deltas<T>[] = [{ key, deltas: [delta], isInInitialList: !state.synced }];
  return { state, outputs: [{ type: 'deltas', cause: 'event', items, resourceVersion }] };
}

/** A list's entries: the tombstones of the known keys it lacks, then its objects in list order (see the rules). */
function replaced<T>(
  event: Extract<SourceEvent<T>, { type: 'replace' }>,
  known: KnownObjects<T>,
  keyOf: (object: T) => string,
): Entry<T>[] {
  const entries: Entry<T>[] = [];
  const listed = new Set<string>(event.rejectedKeys ?? []);
  for (const item of event.items) listed.add(keyOf(item));
  // Nothing known (the first list): nothing can be missing from it.
  if (known.size !== 0) {
    for (const [key, object] of known.entries()) {
      if (!listed.has(key)) entries.push([key, { type: 'Deleted', object: { finalStateUnknown: true, key, object } }]);
    }
  }
  const fill = isFill(event);
  for (const item of event.items) {
    const key = keyOf(item);
    const previous = known.get(key);
    // A list filling shards that joined: what it finds unchanged is no news.
    if (fill && isUnchanged(previous, item)) continue;
    const replace: Delta<T> = { type: 'Replaced', object: item };
    // Another object under the key (another uid): the deletion missed, then the new object, as one entry.
    const missed = recreatedDelta(key, previous, item);
    entries.push(missed === undefined ? [key, replace] : [key, missed, replace]);
  }
  return entries;
}

/**
 * A step's entries as batches, split before a key a batch already holds; an empty one only as the
 * end of the initial list.
 */
function batches<T>(
  state: RealFifoState,
  cause: BatchCause,
  resourceVersion: string | undefined,
  entries: readonly Entry<T>[],
): DeltaBatch<T>[] {
  const isInInitialList = !state.synced;
  const out: DeltaBatch<T>[] = [];
  const batch = (items: Deltas<T>[]): DeltaBatch<T> =>
    resourceVersion === undefined ? { type: 'deltas', cause, items } : { type: 'deltas', cause, items, resourceVersion };
  let items: Deltas<T>[] = [];
  let keys = new Set<string>();
  for (const [key, ...deltas] of entries) {
    if (keys.has(key)) {
      out.push(batch(items));
      items = [];
      keys = new Set<string>();
    }
    keys.add(key);
    items.push({ key, deltas, isInInitialList });
  }
  // An empty batch matters only as the end of the initial list.
  if (items.length > 0 || (cause === 'replace' && isInInitialList)) out.push(batch(items));
  return out;
}

/**
 * Keeps realFifo's own knownObjects (when the consumer gives none) as a consumer would: what a
 * batch hands on, each key's last delta (a Deleted forgets it, any other holds its object).
 */
export function handOn<T>(own: Map<string, T>, batch: DeltaBatch<T>): void {
  for (const { key, deltas } of batch.items) {
    const last = deltas[deltas.length - 1]!;
    if (last.type === 'Deleted') own.delete(key);
    else own.set(key, last.object as T);
  }
}
