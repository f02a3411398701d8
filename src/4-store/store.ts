import { PersistentMap, type MapBuilder } from './persistentMap.ts';

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

/** Index value → the keys indexed under it (a set: every value is `true`). */
type Index = PersistentMap<PersistentMap<true>>;
type Names<T> = PersistentMap<T>;
type Change<T> = readonly [key: string, old: T | undefined, object: T | undefined];

/** Writes collected into one new snapshot (see `Store.batch`). */
export interface StoreBatch<T> {
  write(key: string, old: T | undefined, object: T | undefined): void;
  done(): Store<T>;
}

const NAMESPACE = 'namespace';

/** Where a key lives: its namespace ('' when cluster-scoped) and name. */
function namespaceOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

function nameOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(slash + 1);
}

/**
 * The name to file `object` under: the object's own `metadata.name` string
 * when it is the key's name (it always is for the informer's keys). A slice
 * of the key would keep the whole `namespace/name` string alive beside the
 * object: ~88 bytes an entry for nothing (measured by a heap-snapshot diff).
 */
function storedName(name: string, object: unknown): string {
  const own = (object as { metadata?: { name?: unknown } }).metadata?.name;
  return own === name ? own : name;
}

function keyFor(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

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
  /** Index functions other than the built-in namespace index. */
  private readonly indexers: Indexers<T>;
  private readonly indices: Readonly<Record<string, Index>>;
  /** Whether `namespace` is the built-in index (served from the layout) rather than a custom one. */
  private readonly layoutIndex: boolean;

  private constructor(spaces: PersistentMap<Names<T>>, count: number, indexers: Indexers<T>, indices: Readonly<Record<string, Index>>, layoutIndex: boolean) {
    this.spaces = spaces;
    this.count = count;
    this.indexers = indexers;
    this.indices = indices;
    this.layoutIndex = layoutIndex;
  }

  /** An empty store with the given indexers (plus `namespace`, unless replaced). */
  static empty<T extends { readonly metadata: { readonly namespace?: string | undefined } }>(indexers: Indexers<T> = {}): Store<T> {
    const indices: Record<string, Index> = {};
    for (const name of Object.keys(indexers)) indices[name] = PersistentMap.empty();
    return new Store<T>(PersistentMap.empty(), 0, { ...indexers }, indices, !(NAMESPACE in indexers));
  }

  get size(): number {
    return this.count;
  }

  get(key: string): T | undefined {
    return this.spaces.get(namespaceOf(key))?.get(nameOf(key));
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
    for (const [namespace, names] of this.spaces) for (const name of names.keys()) out.push(keyFor(namespace, name));
    return out;
  }

  *entries(): IterableIterator<[string, T]> {
    for (const [namespace, names] of this.spaces) for (const [name, object] of names) yield [keyFor(namespace, name), object];
  }

  /** The names of this store's indexes. */
  indexNames(): string[] {
    return this.layoutIndex ? [NAMESPACE, ...Object.keys(this.indexers)] : Object.keys(this.indexers);
  }

  /** Objects whose index `name` includes `value`. */
  byIndex(name: string, value: string): T[] {
    if (this.layoutIndex && name === NAMESPACE) return value ? [...(this.spaces.get(value)?.values() ?? [])] : [];
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
    if (this.layoutIndex && name === NAMESPACE) return value ? [...(this.spaces.get(value)?.keys() ?? [])].map((n) => keyFor(value, n)).sort() : [];
    return [...(this.index(name).get(value)?.keys() ?? [])].sort();
  }

  /** Every value index `name` currently holds, sorted. */
  indexValues(name: string): string[] {
    if (this.layoutIndex && name === NAMESPACE) return [...this.spaces.keys()].filter((namespace) => namespace !== '').sort();
    return [...this.index(name).keys()].sort();
  }

  /** Objects that share an index value with `object` under index `name` (client-go's Index). */
  byIndexOf(name: string, object: T): T[] {
    const values = this.layoutIndex && name === NAMESPACE ? namespaceIndex(object as { metadata: { namespace?: string } }) : this.indexFunc(name)(object);
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
   * Applies a batch of writes and returns the new snapshot; this one is left
   * as it was. `undefined` deletes the key.
   */
  update(writes: Iterable<readonly [key: string, object: T | undefined]>): Store<T> {
    // A key written twice in one batch: its second write starts from its first.
    const latest = new Map<string, T | undefined>();
    const changes: Change<T>[] = [];
    for (const [key, object] of writes) {
      const old = latest.has(key) ? latest.get(key) : this.get(key);
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
  apply(changes: readonly Change<T>[]): Store<T> {
    if (changes.length === 1) return this.write(...changes[0]!);
    const batch = this.batch();
    for (const [key, old, object] of changes) batch.write(key, old, object);
    return batch.done();
  }

  /**
   * Many changes at once (a relist), with no array of them to build: `write`
   * each (`old` being the key's object as of the writes before it), then
   * `done()` for the new snapshot. Each namespace's map is written in place
   * through a builder; this store is left as it was.
   */
  batch(): StoreBatch<T> {
    const builders = new Map<string, MapBuilder<T>>();
    let count = this.count;
    let indices: Record<string, Index> | undefined;
    return {
      write: (key, old, object) => {
        if (object === undefined && old === undefined) return;
        count += (old === undefined ? 1 : 0) - (object === undefined ? 1 : 0);
        indices = this.reindexed(indices, key, old, object);
        const namespace = namespaceOf(key);
        let builder = builders.get(namespace);
        if (!builder) builders.set(namespace, (builder = (this.spaces.get(namespace) ?? PersistentMap.empty<T>()).edit()));
        const name = nameOf(key);
        if (object === undefined) builder.delete(name);
        else builder.set(storedName(name, object), object);
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
   * One change (a watch event), as `apply` with one change, without building
   * a batch: `old` must be the key's current object.
   */
  write(key: string, old: T | undefined, object: T | undefined): Store<T> {
    if (object === undefined && old === undefined) return this;
    const namespace = namespaceOf(key);
    const name = nameOf(key);
    const before = this.spaces.get(namespace) ?? PersistentMap.empty<T>();
    const after = object === undefined ? before.delete(name) : before.set(storedName(name, object), object);
    const indices = this.reindexed(undefined, key, old, object);
    if (after === before && indices === undefined) return this;
    const spaces = after === before ? this.spaces : after.size === 0 ? this.spaces.delete(namespace) : this.spaces.set(namespace, after);
    const count = this.count + (old === undefined ? 1 : 0) - (object === undefined ? 1 : 0);
    return new Store<T>(spaces, count, this.indexers, indices ?? this.indices, this.layoutIndex);
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
    if (!indexFunc) throw new UnknownIndexError(name, this.indexNames());
    return indexFunc;
  }

  private index(name: string): Index {
    const index = this.indices[name];
    if (!index) throw new UnknownIndexError(name, this.indexNames());
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
  const builder = index.edit();
  for (const value of before) {
    if (after.includes(value)) continue;
    const keys = builder.get(value);
    if (!keys) continue;
    const left = keys.delete(key);
    if (left.size === 0) builder.delete(value);
    else builder.set(value, left);
  }
  for (const value of after) {
    if (before.includes(value)) continue;
    builder.set(value, (builder.get(value) ?? PersistentMap.empty<true>()).set(key, true));
  }
  return builder.done();
}
