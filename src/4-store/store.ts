import { joinKey, nameInNamespace, nameOfKey, namespaceOfKey, namespaceOfObjectKey } from '../0-model/keys.ts';
import { InformerError } from '../0-model/errors.ts';
import { PersistentMap, type MapBuilder } from './persistentMap.ts';
import {
  IndexerFault,
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

type Names<T> = PersistentMap<T>;

const NO_VALUES: readonly never[] = Object.freeze([]);

/** Writes collected into one new snapshot (see `Store.batch`). */
export interface StoreBatch<T> {
  /** `values`, when given, are what `Store.prepare` returned for `object`. */
  write(key: string, old: T | undefined, object: T | undefined, values?: IndexValues): void;
  done(): Store<T>;
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

/**
 * A head takes in place as many writes (entries) between two seals as the store holds objects, and at least this
 * many: a snapshot held and not read keeps at most that many later versions of objects, about what a snapshot
 * of path-copied maps keeps of its own (its objects replaced since). With 4,096 at 1,000 cached, a snapshot held
 * somewhere for a while kept four times that, and an event cost 10 µs more (in process, `bench/inprocess.ts`).
 */
export const GENERATION = 1024;

/**
 * The one mutable part of a lineage of snapshots: the latest contents, written
 * in place by per-namespace builders on trie nodes only this generation
 * created, since no published snapshot reaches them. `seal()` ends the
 * generation: the contents become a persistent map that later writes copy
 * from (each node once). A snapshot left behind by a write keeps, instead of
 * its own map, what that write replaced (`back`); it is rebuilt from the
 * next sealed snapshot on its first read.
 */
class Head<T> {
  /** The contents as of the last seal (authoritative for namespaces with no builder). */
  spaces: PersistentMap<Names<T>>;
  readonly builders = new Map<string, MapBuilder<T>>();
  /** Namespaces written since the last seal. */
  readonly dirty = new Set<string>();
  /** The snapshot whose contents the head holds. */
  current: Store<T>;
  /** Entries written since the last seal. */
  writes = 0;

  constructor(spaces: PersistentMap<Names<T>>, current: Store<T>) {
    this.spaces = spaces;
    this.current = current;
  }

  get(namespace: string, name: string): T | undefined {
    const builder = this.builders.get(namespace);
    return builder !== undefined ? builder.get(name) : this.spaces.get(namespace)?.get(name);
  }

  /** Writes `name` in `namespace` in place; returns what it held. */
  put(namespace: string, name: string, object: T | undefined): T | undefined {
    let builder = this.builders.get(namespace);
    if (builder === undefined) this.builders.set(namespace, (builder = (this.spaces.get(namespace) ?? PersistentMap.empty<T>()).edit()));
    if (!builder.pending) this.dirty.add(namespace);
    return builder.put(object === undefined ? name : storedName(name, object), object);
  }
}

/**
 * An immutable snapshot of an informer's cache, with secondary indexes.
 *
 * Snapshots are persistent: a write never changes a snapshot anyone may hold,
 * and costs O(log₃₂ n), never a whole-map copy. The latest snapshot of a
 * lineage reads the live contents, which writes change in place on trie nodes
 * no sealed snapshot reaches (a transient, see `PersistentMap`'s builder); the
 * snapshot a write leaves behind keeps what the write replaced, and is rebuilt
 * as a persistent map (`PersistentMap`, a hash array mapped trie sharing
 * everything else) on its first read. Reading anything but `get`/`has` of the
 * latest snapshot seals the generation, as do as many writes as the store holds
 * objects (at least {@link GENERATION}). So the usual watch event (read the
 * latest, write it) copies no trie path: each trie node is copied about once per
 * generation instead of once per write below it.
 *
 * Objects are kept by namespace, then name, which makes the built-in
 * `namespace` index the store's own layout: it costs no second structure and
 * no second write.
 */
export class Store<T> {
  /** The contents as a persistent map, once sealed or rebuilt; undefined while live or left behind. */
  private spaces: PersistentMap<Names<T>> | undefined;
  /** The head of this snapshot's lineage (undefined until its first write). */
  private head: Head<T> | undefined;
  /**
   * Left behind by a write, and not read since: what the write replaced
   * (namespace, name, previous object, …), and the snapshot it made.
   */
  private back: readonly (string | T | undefined)[] | undefined = undefined;
  private next: Store<T> | undefined = undefined;
  private readonly count: number;
  /** Index functions other than the built-in namespace index (a Map: any name works, "__proto__" included). */
  private readonly indexers: ReadonlyMap<string, IndexFunc<T>>;
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
    spaces: PersistentMap<Names<T>> | undefined,
    head: Head<T> | undefined,
    count: number,
    indexers: ReadonlyMap<string, IndexFunc<T>>,
    indices: ReadonlyMap<string, Index>,
    layoutIndex: boolean,
  ) {
    this.spaces = spaces;
    this.head = head;
    this.count = count;
    this.indexers = indexers;
    this.indices = indices;
    this.layoutIndex = layoutIndex;
  }

  /** An empty store with the given indexers (plus `namespace`, unless replaced). */
  static empty<T extends { readonly metadata: { readonly namespace?: string | undefined } }>(indexers: Indexers<T> = {}): Store<T> {
    const functions = new Map<string, IndexFunc<T>>();
    const indices = new Map<string, Index>();
    for (const name of Object.keys(indexers)) {
      functions.set(name, indexers[name]!);
      indices.set(name, PersistentMap.empty());
    }
    return new Store<T>(PersistentMap.empty(), undefined, 0, functions, indices, !functions.has(NAMESPACE));
  }

  get size(): number {
    return this.count;
  }

  get(key: string): T | undefined {
    if (key === this.lastKey) return this.lastFound;
    const head = this.head;
    let found: T | undefined;
    if (this.spaces === undefined && head !== undefined && head.current === this) {
      // The latest snapshot: the live contents.
      found = head.get(namespaceOfKey(key), nameOfKey(key));
      if (found === undefined && key.includes('/')) found = head.get('', key);
    } else {
      const spaces = this.contents();
      found = spaces.get(namespaceOfKey(key))?.get(nameOfKey(key));
      // A cluster-scoped name holding a "/" is filed under "" whole.
      if (found === undefined && key.includes('/')) found = spaces.get('')?.get(key);
    }
    this.lastKey = key;
    this.lastFound = found;
    return found;
  }

  /**
   * This snapshot's contents as a persistent map: sealing the generation when
   * this is the latest snapshot, rebuilding it when a write left it behind
   * (from the nearest later snapshot that has a map, undoing the writes between).
   */
  private contents(): PersistentMap<Names<T>> {
    if (this.spaces !== undefined) return this.spaces;
    const head = this.head!;
    if (head.current === this) return Store.seal(head);
    Store.seal(head);
    const way: (readonly (string | T | undefined)[])[] = [];
    let at: Store<T> = this;
    while (at.spaces === undefined) {
      way.push(at.back!);
      at = at.next!;
    }
    const builders = new Map<string, MapBuilder<T>>();
    const spaces = at.spaces;
    for (let u = way.length - 1; u >= 0; u--) {
      const entries = way[u]!;
      for (let e = entries.length - 3; e >= 0; e -= 3) {
        const namespace = entries[e] as string;
        const name = entries[e + 1] as string;
        const object = entries[e + 2] as T | undefined;
        let builder = builders.get(namespace);
        if (!builder) builders.set(namespace, (builder = (spaces.get(namespace) ?? PersistentMap.empty<T>()).edit()));
        if (object === undefined) builder.delete(name);
        else builder.set(storedName(name, object), object);
      }
    }
    this.spaces = withNames(spaces, builders);
    this.back = undefined;
    this.next = undefined;
    return this.spaces;
  }

  /** `next` follows `from`, the latest snapshot of `head`, after writes that replaced `entries`. */
  private static advance<T>(head: Head<T>, from: Store<T>, next: Store<T>, entries: readonly (string | T | undefined)[]): void {
    // A snapshot with a map needs no way back.
    if (from.spaces === undefined) {
      from.back = entries;
      from.next = next;
    }
    head.current = next;
    head.writes += entries.length / 3;
    // A generation as long as the store is big: each trie node is copied about once per generation.
    if (head.writes >= GENERATION && head.writes >= next.count) Store.seal(head);
  }

  /** Ends `head`'s generation: its latest snapshot gets the contents as a persistent map, which later writes copy from. */
  private static seal<T>(head: Head<T>): PersistentMap<Names<T>> {
    let spaces = head.spaces;
    if (head.dirty.size > 0) {
      const builders = new Map<string, MapBuilder<T>>();
      for (const namespace of head.dirty) builders.set(namespace, head.builders.get(namespace)!);
      spaces = withNames(spaces, builders);
      head.dirty.clear();
    }
    head.writes = 0;
    head.spaces = spaces;
    head.current.spaces = spaces;
    return spaces;
  }

  /** The head to write this snapshot's successor in: its lineage's, when it is the latest, else a new lineage from it. */
  private writableHead(): Head<T> {
    if (this.head !== undefined && this.head.current === this) return this.head;
    this.head = new Head<T>(this.contents(), this);
    return this.head;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** All objects (in no particular order). */
  list(): T[] {
    const out: T[] = [];
    this.contents().forEach((names) => names.forEach((object) => out.push(object)));
    return out;
  }

  /** All keys (in no particular order). */
  keys(): string[] {
    const out: string[] = [];
    for (const [namespace, names] of this.contents()) for (const name of names.keys()) out.push(joinKey(namespace, name));
    return out;
  }

  *entries(): IterableIterator<[string, T]> {
    for (const [namespace, names] of this.contents()) for (const [name, object] of names) yield [joinKey(namespace, name), object];
  }

  /** The names of this store's indexes. */
  indexNames(): string[] {
    return this.layoutIndex ? [NAMESPACE, ...this.indexers.keys()] : [...this.indexers.keys()];
  }

  /** Objects whose index `name` includes `value`. */
  byIndex(name: string, value: string): T[] {
    if (this.layoutIndex && name === NAMESPACE) return [...(this.contents().get(value)?.values() ?? [])];
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
    if (this.layoutIndex && name === NAMESPACE) return [...(this.contents().get(value)?.keys() ?? [])].map((n) => joinKey(value, n)).sort();
    return [...(this.index(name).get(value)?.keys() ?? [])].sort();
  }

  /** Every value index `name` currently holds, sorted. */
  indexValues(name: string): string[] {
    if (this.layoutIndex && name === NAMESPACE) return [...this.contents().keys()].sort();
    return [...this.index(name).keys()].sort();
  }

  /** Objects that share an index value with `object` under index `name` (client-go's Index). */
  byIndexOf(name: string, object: T): T[] {
    const values =
      this.layoutIndex && name === NAMESPACE
        ? namespaceIndex(object as { metadata: { namespace?: string } })
        : this.indexFunc(name)(object);
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
    /** Namespace, name and object of each write, applied at `done()`: until then this snapshot reads as it was. */
    const writes: (string | T | undefined)[] = [];
    let count = this.count;
    let indices: Map<string, Index> | undefined;
    return {
      write: (key, old, object, values) => {
        if (object === undefined && old === undefined) return;
        try {
          indices = this.reindexed(indices, key, old, object, values);
        } catch (fault) {
          if (!(fault instanceof IndexerFault)) throw fault;
          errors?.push(fault.error);
          return;
        }
        count += (old === undefined ? 1 : 0) - (object === undefined ? 1 : 0);
        const namespace = namespaceOfObjectKey(key, object ?? old);
        writes.push(namespace, nameInNamespace(namespace, key), object);
      },
      done: () => (writes.length === 0 && indices === undefined ? this : this.successor(writes, count, indices)),
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
    let indices: Map<string, Index> | undefined;
    try {
      indices = this.reindexed(undefined, key, old, object, values);
    } catch (fault) {
      if (!(fault instanceof IndexerFault)) throw fault;
      errors?.push(fault.error);
      return this;
    }
    const namespace = namespaceOfObjectKey(key, object ?? old);
    const count = this.count + (old === undefined ? 1 : 0) - (object === undefined ? 1 : 0);
    return this.successor([namespace, nameInNamespace(namespace, key), object], count, indices);
  }

  /**
   * The snapshot after `writes` (namespace, name, object; `undefined` deletes),
   * written in place in the head; this one keeps what they replaced. This one
   * itself when they change nothing.
   */
  private successor(writes: (string | T | undefined)[], count: number, indices: Map<string, Index> | undefined): Store<T> {
    const head = this.writableHead();
    let changed = false;
    for (let w = 0; w < writes.length; w += 3) {
      const object = writes[w + 2] as T | undefined;
      const previous = head.put(writes[w] as string, writes[w + 1] as string, object);
      if (previous !== object) changed = true;
      // Reused as the way back: what each write replaced.
      writes[w + 2] = previous;
    }
    if (!changed && indices === undefined) return this;
    const next = new Store<T>(undefined, head, count, this.indexers, indices ?? this.indices, this.layoutIndex);
    Store.advance(head, this, next, writes);
    return next;
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

  private indexFunc(name: string): IndexFunc<T> {
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

/** `spaces` with each builder's namespace as written (removed when left empty). */
function withNames<T>(spaces: PersistentMap<Names<T>>, builders: ReadonlyMap<string, MapBuilder<T>>): PersistentMap<Names<T>> {
  for (const [namespace, builder] of builders) {
    const names = builder.done();
    if (names === spaces.get(namespace)) continue;
    spaces = names.size === 0 ? spaces.delete(namespace) : spaces.set(namespace, names);
  }
  return spaces;
}
