import { joinKey, nameInNamespace, namespaceEnd, namespaceOfObjectKey } from '../0-model/keys.ts';
import { InformerError } from '../0-model/errors.ts';
import { described } from '../util/optionNames.ts';
import { hashString, PersistentMap, type MapBuilder, type Replaced } from './persistentMap.ts';
import {
  IndexerFault,
  checkIndexers,
  isStrings,
  NAMESPACE,
  UnknownIndexError,
  indexValues,
  namespaceIndex,
  reindexed,
  type IndexValues,
  type Index,
  type IndexFunc,
  type Indexers,
} from './indexing.ts';

export { namespaceIndex, UnknownIndexError, type IndexFunc, type Indexers } from './indexing.ts';
export type { Replaced } from './persistentMap.ts';

type Names<T> = PersistentMap<T>;

const NO_VALUES: readonly never[] = Object.freeze([]);

/** Writes collected into one new snapshot (see `Store.batch`). */
export interface StoreBatch<T> {
  /** `values`, when given, are what `Store.prepare` returned for `object`. */
  write(key: string, old: T | undefined, object: T | undefined, values?: IndexValues): void;
  done(): Store<T>;
}

/**
 * The name `key` is filed under in `namespace` (from `namespaceOfObjectKey`): the object's own
 * `metadata.name` string when it is that name (it always is for the informer's keys), else the rest
 * of the key. No slice of the key is made: it would be garbage at once for a lookup, and, stored,
 * would keep the whole `namespace/name` string alive beside the object (~88 bytes an entry,
 * measured by a heap-snapshot diff).
 */
function nameToFile(namespace: string, key: string, object: unknown): string {
  const own = (object as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  if (typeof own !== 'string') return nameInNamespace(namespace, key);
  const matches = namespace === '' ? own === key : own.length === key.length - namespace.length - 1 && key.endsWith(own);
  return matches ? own : nameInNamespace(namespace, key);
}

/**
 * Why `object` cannot be filed at `key` where the store's layout serves the built-in `namespace` index: a namespaced
 * object whose key does not start with its namespace and "/" (a custom `keyOf`: a uid, a kind prefix) would be filed,
 * and indexed, under the key's text instead (client-go's MetaNamespaceIndexFunc reads the object). Undefined when it
 * fits (always, for the default key). Refused rather than indexed apart: the layout is the index and the way `get`
 * finds a key (docs/api.md).
 */
function misfiled(key: string, object: unknown): InformerError | undefined {
  const metadata = (object as { metadata?: { namespace?: unknown; resourceVersion?: unknown } } | null)?.metadata;
  const own = metadata?.namespace;
  if (typeof own !== 'string' || own === '') return undefined;
  if (key.length > own.length && key.charCodeAt(own.length) === 0x2f && key.startsWith(own)) return undefined;
  const resourceVersion = typeof metadata?.resourceVersion === 'string' ? metadata.resourceVersion : undefined;
  const message =
    `index "namespace" cannot file ${key}: its object is in namespace ${JSON.stringify(own)}, and the key of a namespaced ` +
    `object must start with ${JSON.stringify(`${own}/`)} (the store files objects by namespace: a custom keyOf must keep ` +
    'that prefix, or the store needs an index of its own named "namespace")';
  return new InformerError('IndexerError', message, { key, resourceVersion });
}

/**
 * The tag the store keeps beside an object: a hash of its `metadata.resourceVersion` (undefined when it has none).
 * The reducer tells an update from a resync by comparing resourceVersions; with the old object's tag read from the
 * trie node the write has just walked, an update whose hashes differ (nearly every one) never reads the old object,
 * whose memory (the object, its metadata, the string) the processor's caches no longer hold in a big cache.
 */
export function versionTag(object: unknown): number | undefined {
  const rv = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof rv === 'string' ? hashString(rv) : undefined;
}

/**
 * {@link IndexFunc} as a method's type, so bivariant in `T`: a private field of type `(object: T) => …` would make
 * `Store<T>` (and `Informer<T>`, through `store$`) invariant, and an `Informer<MyApple>` no `Informer<KubeObject>`.
 * Not sound in every use, as TypeScript's method parameters never are: through a widened view (a `Store<MyApple>` held
 * as a `Store<KubeObject>`) a caller's `byIndexOf` or `update` can hand an index function another type's object; the
 * function's throw is then reported as any indexer's (an `IndexerFault`), never a wrong entry. The informer's own
 * writes only ever hand it objects of its own `T`.
 */
type StoredIndexFunc<T> = { index(object: T): readonly string[] }['index'];

/**
 * An immutable snapshot of an informer's cache, with secondary indexes.
 *
 * Snapshots are persistent data structures (hash array mapped tries, see
 * `PersistentMap`): applying a delta copies only the O(log₃₂ n) path to the
 * changed entry and shares everything else with the previous snapshot. So a
 * snapshot a subscriber holds never changes under it, and the cost of an event
 * does not grow with the size of the store: there is no whole-map copy.
 *
 * Objects are kept by namespace, then name, which makes the built-in
 * `namespace` index the store's own layout: it costs no second structure and
 * no second write.
 */
export class Store<T> {
  private readonly spaces: PersistentMap<Names<T>>;
  private readonly count: number;
  /** Index functions other than the built-in namespace index (a Map: any name works, "__proto__" included). */
  private readonly indexers: ReadonlyMap<string, StoredIndexFunc<T>>;
  private readonly indices: ReadonlyMap<string, Index>;
  /** Whether `namespace` is the built-in index (served from the layout) rather than a custom one. */
  private readonly layoutIndex: boolean;

  /**
   * The last key read, and what it found: a watch event reads its key twice
   * from the same snapshot (the DeltaFIFO's knownObjects, then the reducer)
   * before writing it. Each read of a big store is a walk through memory the
   * processor's cache no longer holds; the second is free this way. Never
   * observable: a snapshot's contents do not change.
   */
  private lastKey: string | undefined = undefined;
  private lastFound: T | undefined = undefined;

  private constructor(
    spaces: PersistentMap<Names<T>>,
    count: number,
    indexers: ReadonlyMap<string, StoredIndexFunc<T>>,
    indices: ReadonlyMap<string, Index>,
    layoutIndex: boolean,
  ) {
    this.spaces = spaces;
    this.count = count;
    this.indexers = indexers;
    this.indices = indices;
    this.layoutIndex = layoutIndex;
  }

  /** An empty store with the given indexers (plus `namespace`, unless replaced). */
  static empty<T extends { readonly metadata: { readonly namespace?: string | undefined } }>(indexers: Indexers<T> = {}): Store<T> {
    checkIndexers('Store.empty', indexers);
    const functions = new Map<string, IndexFunc<T>>();
    const indices = new Map<string, Index>();
    for (const name of Object.keys(indexers)) {
      functions.set(name, indexers[name]!);
      indices.set(name, PersistentMap.empty());
    }
    return new Store<T>(PersistentMap.empty(), 0, functions, indices, !functions.has(NAMESPACE));
  }

  get size(): number {
    return this.count;
  }

  get(key: string): T | undefined {
    if (key === this.lastKey) return this.lastFound;
    // The namespace (before the first "/") and the name, read in place: no slice of the key is made.
    const slash = namespaceEnd(key);
    let found = slash < 0 ? this.spaces.get('')?.get(key) : this.spaces.getIn(key, 0, slash)?.getIn(key, slash + 1, key.length);
    // A cluster-scoped name holding a "/" is filed under "" whole.
    if (found === undefined && slash >= 0) found = this.spaces.get('')?.get(key);
    this.lastKey = key;
    this.lastFound = found;
    return found;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** All objects (in no particular order). */
  list(): T[] {
    const out: T[] = [];
    this.spaces.forEach((names) => names.forEach((object) => out.push(object)));
    return out;
  }

  /** All keys (in no particular order). */
  keys(): string[] {
    const out: string[] = [];
    for (const [namespace, names] of this.spaces) for (const name of names.keys()) out.push(joinKey(namespace, name));
    return out;
  }

  *entries(): IterableIterator<[string, T]> {
    for (const [namespace, names] of this.spaces) for (const [name, object] of names) yield [joinKey(namespace, name), object];
  }

  /** The names of this store's indexes. */
  indexNames(): string[] {
    return this.layoutIndex ? [NAMESPACE, ...this.indexers.keys()] : [...this.indexers.keys()];
  }

  /** Objects whose index `name` includes `value`. */
  byIndex(name: string, value: string): T[] {
    if (this.layoutIndex && name === NAMESPACE) return [...(this.spaces.get(value)?.values() ?? [])];
    const keys = this.index(name).get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys.keys()) {
      const object = this.get(key);
      if (object !== undefined) out.push(object);
    }
    return out;
  }

  /** Keys of the objects whose index `name` includes `value`, sorted. */
  indexKeys(name: string, value: string): string[] {
    if (this.layoutIndex && name === NAMESPACE) return [...(this.spaces.get(value)?.keys() ?? [])].map((n) => joinKey(value, n)).sort();
    return [...(this.index(name).get(value)?.keys() ?? [])].sort();
  }

  /** Every value index `name` currently holds, sorted. */
  indexValues(name: string): string[] {
    if (this.layoutIndex && name === NAMESPACE) return [...this.spaces.keys()].sort();
    return [...this.index(name).keys()].sort();
  }

  /**
   * Objects that share an index value with `object` under index `name` (client-go's Index). An index function that
   * returns anything but an array of strings is a `TypeError`, as a write's `IndexerError`: a string was looked up
   * character by character.
   */
  byIndexOf(name: string, object: T): T[] {
    const values: unknown =
      this.layoutIndex && name === NAMESPACE
        ? namespaceIndex(object as { metadata: { namespace?: string } })
        : this.indexFunc(name)(object);
    if (!isStrings(values))
      throw new TypeError(
        `byIndexOf: index ${JSON.stringify(name)} returned something other than an array of strings: ${described(values)}`,
      );
    const seen = new Set<T>();
    const out: T[] = [];
    for (const value of values) {
      for (const found of this.byIndex(name, value)) {
        if (seen.has(found)) continue;
        seen.add(found);
        out.push(found);
      }
    }
    return out;
  }

  /**
   * Runs every index function on `object` (to be stored at `key`): an
   * `IndexerError` when one throws (the object cannot be stored), else
   * undefined.
   */
  check(key: string, object: T): InformerError | undefined {
    const values = this.prepare(key, object);
    return values instanceof InformerError ? values : undefined;
  }

  /**
   * {@link check}, keeping what it computed: an `IndexerError` when an index
   * function throws, else `object`'s index values, to hand to the `write` (or
   * batch write) that stores it, which then calls no index function on it again.
   */
  prepare(key: string, object: T): IndexValues | InformerError {
    const fault = this.layoutIndex ? misfiled(key, object) : undefined;
    if (fault) return fault;
    if (this.indexers.size === 0) return NO_VALUES;
    try {
      return indexValues(this.indexers, key, object);
    } catch (fault) {
      if (fault instanceof IndexerFault) return fault.error;
      throw fault;
    }
  }

  /**
   * Applies a batch of writes and returns the new snapshot; this one is left
   * as it was. `undefined` deletes the key.
   */
  update(writes: Iterable<readonly [key: string, object: T | undefined]>, errors?: InformerError[]): Store<T> {
    // A key written twice in one batch: its second write starts from its first.
    const latest = new Map<string, T | undefined>();
    const batch = this.batch(errors);
    for (const [key, object] of writes) {
      const old = latest.has(key) ? latest.get(key) : this.get(key);
      latest.set(key, object);
      batch.write(key, old, object);
    }
    return batch.done();
  }

  /**
   * Many changes at once (a relist), with no array of them to build: `write`
   * each (`old` being the key's object as of the writes before it), then
   * `done()` for the new snapshot. Each namespace's map is written in place
   * through a builder; this store is left as it was.
   *
   * A write whose new object an index function throws for changes nothing
   * (the key keeps its old object) and adds an `IndexerError` to `errors`.
   */
  batch(errors?: InformerError[]): StoreBatch<T> {
    const builders = new Map<string, MapBuilder<T>>();
    let count = this.count;
    let indices: Map<string, Index> | undefined;
    return {
      write: (key, old, object, values) => {
        if (object === undefined && old === undefined) return;
        const fault = object !== undefined && this.layoutIndex ? misfiled(key, object) : undefined;
        if (fault) return void errors?.push(fault);
        try {
          indices = this.reindexed(indices, key, old, object, values);
        } catch (fault) {
          if (!(fault instanceof IndexerFault)) throw fault;
          errors?.push(fault.error);
          return;
        }
        count += (old === undefined ? 1 : 0) - (object === undefined ? 1 : 0);
        const builderOf = (namespace: string): MapBuilder<T> => {
          let builder = builders.get(namespace);
          if (!builder) builders.set(namespace, (builder = (this.spaces.get(namespace) ?? PersistentMap.empty<T>()).edit()));
          return builder;
        };
        const namespace = namespaceOfObjectKey(key, object ?? old);
        // The key's old object filed elsewhere (its namespace changed under one key): moved, not left beside it.
        const was = object !== undefined && old !== undefined ? namespaceOfObjectKey(key, old) : namespace;
        if (was !== namespace) builderOf(was).delete(nameToFile(was, key, old));
        const builder = builderOf(namespace);
        const name = nameToFile(namespace, key, object ?? old);
        if (object === undefined) builder.delete(name);
        else builder.set(name, object, versionTag(object));
      },
      done: () => {
        let spaces = this.spaces;
        for (const [namespace, builder] of builders) {
          const names = builder.done();
          if (names === spaces.get(namespace)) continue;
          spaces = names.size === 0 ? spaces.delete(namespace) : spaces.set(namespace, names);
        }
        if (spaces === this.spaces && indices === undefined) return this;
        return new Store<T>(spaces, count, this.indexers, indices ?? this.indices, this.layoutIndex);
      },
    };
  }

  /**
   * One change (a watch event), as {@link update} with one change, without
   * building a batch: `old` must be the key's current object. If an index
   * function throws for `object`, nothing changes and an `IndexerError` goes to
   * `errors`. `values`, when given, are what {@link prepare} returned for
   * `object` (the caller's word: they are not checked against it).
   */
  write(key: string, old: T | undefined, object: T | undefined, errors?: InformerError[], values?: IndexValues): Store<T> {
    if (object === undefined && old === undefined) return this;
    const fault = object !== undefined && this.layoutIndex ? misfiled(key, object) : undefined;
    if (fault) {
      errors?.push(fault);
      return this;
    }
    let indices: Map<string, Index> | undefined;
    try {
      indices = this.reindexed(undefined, key, old, object, values);
    } catch (fault) {
      if (!(fault instanceof IndexerFault)) throw fault;
      errors?.push(fault.error);
      return this;
    }
    const namespace = namespaceOfObjectKey(key, object ?? old);
    const name = nameToFile(namespace, key, object ?? old);
    // The key's old object filed elsewhere (its namespace changed under one key): moved, not left beside it.
    const was = object !== undefined && old !== undefined ? namespaceOfObjectKey(key, old) : namespace;
    const from = was === namespace ? this.spaces : without(this.spaces, was, nameToFile(was, key, old));
    const before = from.get(namespace) ?? PersistentMap.empty<T>();
    const after = object === undefined ? before.delete(name) : before.set(name, object, versionTag(object));
    if (after === before && indices === undefined && from === this.spaces) return this;
    const spaces = after === before ? from : after.size === 0 ? from.delete(namespace) : from.set(namespace, after);
    const count = this.count + (old === undefined ? 1 : 0) - (object === undefined ? 1 : 0);
    return new Store<T>(spaces, count, this.indexers, indices ?? this.indices, this.layoutIndex);
  }

  /**
   * {@link write} of `object` at `key` from whatever the key holds, which it leaves in
   * `replaced.previous` (undefined: nothing): the key's object is found on the write's own way
   * down the trie, where {@link get} then {@link write} walk it twice (and the first walk, through
   * memory the processor's caches no longer hold at large sizes, is the costly one). With index
   * functions other than the built-in namespace index (they need the old object first), and for a
   * cluster-scoped key holding a "/" (which {@link get} may read elsewhere), it is `get` then `write`.
   * `replaced.previousTag` is the old object's {@link versionTag} as the store kept it (undefined: not known, e.g.
   * on that path). `tag`, when given, is `versionTag(object)` (the caller's word).
   * Private: the reducer's fast path, through {@link putInStore} (`replaced` is an out-parameter, no API).
   */
  private put(
    key: string,
    object: T,
    replaced: Replaced<T>,
    errors?: InformerError[],
    values?: IndexValues,
    tag: number | undefined = versionTag(object),
  ): Store<T> {
    const namespace = namespaceOfObjectKey(key, object);
    // A namespaced object whose key a cluster-scoped version held (filed under "" whole) is moved by `write`.
    const cluster = namespace === '' ? undefined : this.spaces.get('');
    if (this.indexers.size > 0 || (namespace === '' && namespaceEnd(key) >= 0) || cluster?.has(key) === true) {
      const old = this.get(key);
      const after = old === object ? this : this.write(key, old, object, errors, values);
      replaced.previous = old;
      replaced.previousTag = undefined;
      return after;
    }
    const before = this.spaces.get(namespace) ?? PersistentMap.empty<T>();
    const after = before.put(nameToFile(namespace, key, object), object, replaced, tag);
    if (after === before) return this;
    const count = this.count + (replaced.previous === undefined ? 1 : 0);
    return new Store<T>(this.spaces.set(namespace, after), count, this.indexers, this.indices, this.layoutIndex);
  }

  /** The indices after `key` goes from `old` to `object` (see `reindexed` in indexing.ts); `values` from another store are ignored. */
  private reindexed(
    indices: Map<string, Index> | undefined,
    key: string,
    old: T | undefined,
    object: T | undefined,
    values: IndexValues | undefined,
  ): Map<string, Index> | undefined {
    const known = values !== undefined && values.length === this.indexers.size ? values : undefined;
    return reindexed(this.indexers, this.indices, indices, key, old, object, known);
  }

  private indexFunc(name: string): StoredIndexFunc<T> {
    const indexFunc = this.indexers.get(name);
    if (!indexFunc) throw new UnknownIndexError(name, this.indexNames());
    return indexFunc;
  }

  private index(name: string): Index {
    const index = this.indices.get(name);
    if (!index) throw new UnknownIndexError(name, this.indexNames());
    return index;
  }
}

/** `spaces` without `name` in `namespace` (the namespace dropped when it empties). */
function without<T>(spaces: PersistentMap<Names<T>>, namespace: string, name: string): PersistentMap<Names<T>> {
  const names = spaces.get(namespace);
  const left = names?.delete(name);
  if (names === undefined || left === names) return spaces;
  return left!.size === 0 ? spaces.delete(namespace) : spaces.set(namespace, left!);
}

/**
 * `store.put(key, object, replaced, errors, values, tag)`: a write that finds the key's old object on its own way down
 * (left in `replaced.previous`, its {@link versionTag} in `replaced.previousTag` when the store knows it). Not API
 * (`Store` keeps it private; neither `rx-informer` nor `rx-informer/pipeline` exports this): the reducer's watch
 * update, its property tests and the store's micro-benchmark use it.
 */
export function putInStore<T>(
  store: Store<T>,
  key: string,
  object: T,
  replaced: Replaced<T>,
  errors?: InformerError[],
  values?: IndexValues,
  tag?: number,
): Store<T> {
  return store['put'](key, object, replaced, errors, values, tag); // tag undefined: put's default, versionTag(object)
}
