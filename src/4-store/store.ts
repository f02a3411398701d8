import { Map as PMap, Set as PSet } from 'immutable';

/** An index function: the values an object is indexed under (multi-valued, like client-go's IndexFunc). */
export type IndexFunc<T> = (object: T) => readonly string[];

/** Named index functions. */
export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

const NO_VALUES: readonly string[] = Object.freeze([]);
const namespaceValues = new Map<string, readonly string[]>();

/**
 * The `namespace` index every informer has (client-go's MetaNamespaceIndexFunc).
 * Returns one shared frozen array per namespace, so indexing allocates nothing.
 */
export function namespaceIndex(object: { readonly metadata: { readonly namespace?: string | undefined } }): readonly string[] {
  const namespace = object.metadata.namespace;
  if (!namespace) return NO_VALUES;
  let values = namespaceValues.get(namespace);
  if (!values) {
    values = Object.freeze([namespace]);
    if (namespaceValues.size < 100_000) namespaceValues.set(namespace, values);
  }
  return values;
}

/** Thrown when a read names an index the store was not built with. */
export class UnknownIndexError extends Error {
  readonly index: string;
  constructor(index: string, known: readonly string[]) {
    super(`unknown index ${JSON.stringify(index)}; this store has ${known.length ? known.map((k) => JSON.stringify(k)).join(', ') : 'no indexes'}`);
    this.name = 'UnknownIndexError';
    this.index = index;
  }
}

type Index = PMap<string, PSet<string>>;

const EMPTY_SET: PSet<string> = PSet<string>();

/**
 * An immutable snapshot of an informer's cache, with secondary indexes.
 *
 * Snapshots are persistent data structures (hash array mapped tries from
 * `immutable`): applying a delta copies only the O(log₃₂ n) path to the
 * changed entry and shares everything else with the previous snapshot. So a
 * snapshot a subscriber holds never changes under it, and the cost of an event
 * does not grow with the size of the store: there is no whole-map copy.
 */
export class Store<T> {
  private readonly items: PMap<string, T>;
  private readonly indexers: Indexers<T>;
  private readonly indices: Readonly<Record<string, Index>>;

  private constructor(items: PMap<string, T>, indexers: Indexers<T>, indices: Readonly<Record<string, Index>>) {
    this.items = items;
    this.indexers = indexers;
    this.indices = indices;
  }

  /** An empty store with the given indexers (plus `namespace`, unless replaced). */
  static empty<T extends { readonly metadata: { readonly namespace?: string | undefined } }>(indexers: Indexers<T> = {}): Store<T> {
    const all: Indexers<T> = { namespace: namespaceIndex, ...indexers };
    const indices: Record<string, Index> = {};
    for (const name of Object.keys(all)) indices[name] = PMap();
    return new Store<T>(PMap(), all, indices);
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  /** All objects (in no particular order). */
  list(): T[] {
    return [...this.items.values()];
  }

  /** All keys (in no particular order). */
  keys(): string[] {
    return [...this.items.keys()];
  }

  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  /** The names of this store's indexes. */
  indexNames(): string[] {
    return Object.keys(this.indexers);
  }

  /** Objects whose index `name` includes `value`. */
  byIndex(name: string, value: string): T[] {
    const keys = this.index(name).get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const object = this.items.get(key);
      if (object !== undefined) out.push(object);
    }
    return out;
  }

  /** Keys of the objects whose index `name` includes `value`, sorted. */
  indexKeys(name: string, value: string): string[] {
    return [...(this.index(name).get(value) ?? EMPTY_SET)].sort();
  }

  /** Every value index `name` currently holds, sorted. */
  indexValues(name: string): string[] {
    return [...this.index(name).keys()].sort();
  }

  /** Objects that share an index value with `object` under index `name` (client-go's Index). */
  byIndexOf(name: string, object: T): T[] {
    const indexFunc = this.indexFunc(name);
    const seen = new Set<string>();
    const out: T[] = [];
    for (const value of indexFunc(object)) {
      for (const key of this.index(name).get(value) ?? EMPTY_SET) {
        if (seen.has(key)) continue;
        seen.add(key);
        const found = this.items.get(key);
        if (found !== undefined) out.push(found);
      }
    }
    return out;
  }

  /**
   * Applies a batch of writes and returns the new snapshot; this one is left
   * as it was. `undefined` deletes the key.
   */
  update(writes: Iterable<readonly [key: string, object: T | undefined]>): Store<T> {
    // A key written twice in one batch: its second write starts from its first.
    const latest = new Map<string, T | undefined>();
    const changes: (readonly [string, T | undefined, T | undefined])[] = [];
    for (const [key, object] of writes) {
      const old = latest.has(key) ? latest.get(key) : this.items.get(key);
      latest.set(key, object);
      changes.push([key, old, object]);
    }
    return this.apply(changes);
  }

  /**
   * `update` for a caller that already read each key's current object (the
   * informer's reducer does), so no key is looked up twice. Each change's
   * `old` must be the key's object as of the changes before it.
   */
  apply(changes: readonly (readonly [key: string, old: T | undefined, object: T | undefined])[]): Store<T> {
    let items = this.items;
    let indices: Record<string, Index> | undefined;
    // One write (a watch event) is a plain persistent set; a batch uses a transient.
    if (changes.length === 1) {
      const [key, old, object] = changes[0]!;
      if (object === undefined && old === undefined) return this;
      items = object === undefined ? items.delete(key) : items.set(key, object);
      indices = this.reindexed(indices, key, old, object);
    } else {
      items = items.withMutations((mutable) => {
        for (const [key, old, object] of changes) {
          if (object === undefined) {
            if (old === undefined) continue;
            mutable.delete(key);
          } else mutable.set(key, object);
          indices = this.reindexed(indices, key, old, object);
        }
      });
    }
    return new Store<T>(items, this.indexers, indices ?? this.indices);
  }

  /** Moves `key` between index values where its object's values changed; copies the indices record only then. */
  private reindexed(indices: Record<string, Index> | undefined, key: string, old: T | undefined, object: T | undefined): Record<string, Index> | undefined {
    for (const name in this.indexers) {
      const indexFunc = this.indexers[name]!;
      const before = old === undefined ? NO_VALUES : indexFunc(old);
      const after = object === undefined ? NO_VALUES : indexFunc(object);
      if (sameValues(before, after)) continue;
      indices ??= { ...this.indices };
      indices[name] = reindex(indices[name]!, key, before, after);
    }
    return indices;
  }

  private indexFunc(name: string): IndexFunc<T> {
    const indexFunc = this.indexers[name];
    if (!indexFunc) throw new UnknownIndexError(name, Object.keys(this.indexers));
    return indexFunc;
  }

  private index(name: string): Index {
    const index = this.indices[name];
    if (!index) throw new UnknownIndexError(name, Object.keys(this.indexers));
    return index;
  }
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function reindex(index: Index, key: string, before: readonly string[], after: readonly string[]): Index {
  return index.withMutations((mutable) => {
    for (const value of before) {
      if (after.includes(value)) continue;
      const keys = mutable.get(value);
      if (!keys) continue;
      const left = keys.delete(key);
      if (left.size === 0) mutable.delete(value);
      else mutable.set(value, left);
    }
    for (const value of after) {
      if (before.includes(value)) continue;
      mutable.set(value, (mutable.get(value) ?? EMPTY_SET).add(key));
    }
  });
}
