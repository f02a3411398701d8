import { InformerError } from '../0-model/errors.ts';
import { isTombstone, type Delta, type DeltaBatch, type Deltas, type FifoOutput } from '../3-deltas/deltas.ts';
import type { InformerEvent } from './informerEvent.ts';
import type { IndexValues } from './indexing.ts';
import { putInStore, versionTag, type Replaced, type Store } from './store.ts';

/** Everything an informer knows after a step: the cache, and what the step changed. */
export interface InformerState<T> {
  readonly store: Store<T>;
  /** True once the initial list has been delivered. */
  readonly synced: boolean;
  /** The last resourceVersion seen (list, event or bookmark). */
  readonly resourceVersion: string;
  /** The events this step produced, in order. */
  readonly events: readonly InformerEvent<T>[];
  /** The faults this step reported. */
  readonly errors: readonly InformerError[];
  /** What the step was: the start, a watch event, a (re)list, a resync tick, a bookmark, a fault, or a watch being opened. */
  readonly step: 'start' | 'event' | 'replace' | 'resync' | 'bookmark' | 'error' | 'watch';
}

const NONE: readonly never[] = Object.freeze([]);

export function initialState<T>(store: Store<T>): InformerState<T> {
  return { store, synced: false, resourceVersion: '', events: NONE, errors: NONE, step: 'start' };
}

function resourceVersionOf(object: unknown): string | undefined {
  const metadata = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
  return typeof metadata?.resourceVersion === 'string' ? metadata.resourceVersion : undefined;
}

/**
 * The `scan` reducer of an informer: applies one `deltaFifo` output to the
 * cache and says what happened, as client-go's sharedIndexInformer does in
 * HandleDeltas: Added/Updated/Replaced/Sync become `updated` when the key is
 * cached and `added` when not; Deleted becomes `deleted` (nothing, for a key
 * not cached). A Sync, or any update that leaves the resourceVersion as it was,
 * is an `updated` with `resync: true` (client-go's isSync).
 *
 * An object an index function throws for is not stored: the key keeps its
 * cached object, no event is produced, and the step reports an `IndexerError`.
 *
 * The work is proportional to the number of deltas in the step, never to the
 * size of the cache.
 */
export function reduceDeltas<T>(state: InformerState<T>, output: FifoOutput<T>): InformerState<T> {
  switch (output.type) {
    case 'error':
      return { ...state, events: NONE, errors: [output.error], step: 'error' };
    case 'bookmark':
      return { ...state, resourceVersion: output.resourceVersion, events: NONE, errors: NONE, step: 'bookmark' };
    case 'watch':
      return { ...state, events: NONE, errors: NONE, step: 'watch' };
    case 'deltas': {
      const items = output.items;
      // One key with one delta (a watch event): no batch, no events array to grow, nothing kept between calls.
      if (items.length === 1 && items[0]!.deltas.length === 1) return reduceOne(state, output, items[0]!, items[0]!.deltas[0]!);
      const events: InformerEvent<T>[] = [];
      const errors: InformerError[] = [];
      let store = state.store;
      // The index values of the object replay leaves a key with (see Store.prepare).
      const kept: Kept = { values: undefined };
      if (items.length === 1) {
        // One key: no batch to build.
        const { key } = items[0]!;
        const before = store.get(key);
        const after = replay(store, before, items[0]!, events, errors, kept);
        if (after !== before) store = store.write(key, before, after, errors, kept.values);
      } else {
        const batch = store.batch(errors);
        // An empty cache (the first list) has nothing under any key: no lookup of each (the batch's reads are of `store`).
        const empty = store.size === 0;
        // Indexed loops here and in replay: a first list's batch runs once, much of it before the optimizing compiler
        // takes the loop, and an unoptimized `for…of` makes an iterator result an entry.
        for (let i = 0; i < items.length; i++) {
          const entry = items[i]!;
          const before = empty ? undefined : store.get(entry.key);
          const after = replay(store, before, entry, events, errors, kept);
          if (after !== before) batch.write(entry.key, before, after, kept.values);
        }
        store = batch.done();
      }
      return stepped(state, output, store, events, errors);
    }
  }
}

/** The state after a batch of deltas. */
function stepped<T>(
  state: InformerState<T>,
  output: DeltaBatch<T>,
  store: Store<T>,
  events: readonly InformerEvent<T>[],
  errors: readonly InformerError[],
): InformerState<T> {
  return {
    store,
    synced: state.synced || output.cause === 'replace',
    resourceVersion: output.resourceVersion ?? state.resourceVersion,
    events,
    errors: errors.length === 0 ? NONE : errors,
    step: output.cause,
  };
}

/** {@link replay} and the write of one key's one delta: the same rules, with arrays of one made once. */
function reduceOne<T>(state: InformerState<T>, output: DeltaBatch<T>, entry: Deltas<T>, delta: Delta<T>): InformerState<T> {
  const { key, isInInitialList } = entry;
  const store = state.store;
  if (delta.type === 'Deleted') {
    const before = store.get(key);
    // Nothing cached (its versions were all rejected): there is nothing to delete or tell.
    if (before === undefined) return stepped(state, output, store, NONE, NONE);
    const after = store.write(key, before, undefined, writeErrors);
    return stepped(state, output, after, [deletedEvent(delta, before, isInInitialList)], takeWriteErrors());
  }
  const object = delta.object as T;
  const values = store.prepare(key, object);
  if (values instanceof InformerError) return stepped(state, output, store, NONE, [values]);
  // The write finds the cached object on its way (one walk of the trie, not a get and then a write's walk), and
  // the tag the store kept beside it: resourceVersions whose hashes differ differ, and the cached object (cold
  // memory in a big cache) is not read for them.
  const tag = versionTag(object);
  const after = putInStore(store, key, object, replaced as Replaced<T>, writeErrors, values, tag);
  const before = replaced.previous as T | undefined;
  const moved = replaced.previousTag !== undefined && tag !== undefined && replaced.previousTag !== tag;
  replaced.previous = undefined;
  replaced.previousTag = undefined;
  const event =
    moved && before !== undefined
      ? updatedEvent(delta, before, object, isInInitialList)
      : changeEvent(delta, before, object, isInInitialList);
  return stepped(state, output, after, [event], takeWriteErrors());
}

/**
 * Where a one-key write leaves its `IndexerError`s (an index function that threw for the object it replaces),
 * taken right after the call by {@link takeWriteErrors}: one array for every reducer, not an empty one an event.
 * A write pushes at most one error, after its index functions have run, so a reducer run from inside an index
 * function takes only its own.
 */
const writeErrors: InformerError[] = [];

/** The errors the last write left in {@link writeErrors}, as an array of their own (NONE when none); empties it. */
function takeWriteErrors(): readonly InformerError[] {
  if (writeErrors.length === 0) return NONE;
  const taken = writeErrors.slice();
  writeErrors.length = 0;
  return taken;
}

/**
 * Where `putInStore` leaves the object its write replaced, read (and cleared) right after the call: one
 * object for every reducer, not one an event (`put` writes it last, after any index function has run).
 */
const replaced: Replaced<unknown> = { previous: undefined, previousTag: undefined };

/** The event of a Deleted delta for a key holding `current`. */
function deletedEvent<T>(delta: Delta<T>, current: T, isInInitialList: boolean): InformerEvent<T> {
  const tombstone = isTombstone(delta.object);
  const object = isTombstone(delta.object) ? delta.object.object : delta.object;
  return { type: 'deleted', object: tombstone ? current : object, finalStateUnknown: tombstone, isInInitialList };
}

/** {@link changeEvent} for a `current` whose resourceVersion is known to differ from `object`'s: a resync only as a Sync. */
function updatedEvent<T>(delta: Delta<T>, current: T, object: T, isInInitialList: boolean): InformerEvent<T> {
  return { type: 'updated', oldObject: current, object, isInInitialList, resync: delta.type === 'Sync' };
}

/** The event of any other delta bringing `object` to a key holding `current` (undefined: none). */
function changeEvent<T>(delta: Delta<T>, current: T | undefined, object: T, isInInitialList: boolean): InformerEvent<T> {
  if (current === undefined) return { type: 'added', object, isInInitialList };
  const rv = resourceVersionOf(current);
  // client-go's isSync: any update that did not move the resourceVersion (objects without one never match).
  const resync = delta.type === 'Sync' || (rv !== undefined && rv === resourceVersionOf(object));
  return { type: 'updated', oldObject: current, object, isInInitialList, resync };
}

/** Where {@link replay} leaves the index values of the object it returns (undefined: none computed). */
interface Kept {
  values: IndexValues | undefined;
}

/**
 * Turns one key's deltas into events, from the key's cached object `before`;
 * returns its object after them, and leaves that object's index values in
 * `kept` for the write that stores it. An object the store's index functions
 * throw for is skipped (reported in `errors`): the key keeps what it had.
 */
function replay<T>(
  store: Store<T>,
  before: T | undefined,
  { key, deltas, isInInitialList }: Deltas<T>,
  events: InformerEvent<T>[],
  errors: InformerError[],
  kept: Kept,
): T | undefined {
  let current = before;
  kept.values = undefined;
  for (let i = 0; i < deltas.length; i++) {
    const delta = deltas[i]!;
    if (delta.type === 'Deleted') {
      // Nothing cached (its versions were all rejected): there is nothing to delete or tell.
      if (current === undefined) continue;
      events.push(deletedEvent(delta, current, isInInitialList));
      current = undefined;
      kept.values = undefined;
      continue;
    }
    const object = delta.object as T;
    const values = store.prepare(key, object);
    if (values instanceof InformerError) {
      errors.push(values);
      continue;
    }
    events.push(changeEvent(delta, current, object, isInInitialList));
    current = object;
    kept.values = values;
  }
  return current;
}
