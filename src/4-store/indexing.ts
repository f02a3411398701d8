import { InformerError, describeThrown } from '../0-model/errors.ts';
import { PersistentMap } from './persistentMap.ts';
import { described } from '../util/optionNames.ts';

/** An index function: the values an object is indexed under (multi-valued, like client-go's IndexFunc). */
export type IndexFunc<T> = (object: T) => readonly string[];

/** Named index functions. */
export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

/** Index value → the keys indexed under it (a set: every value is `true`). */
export type Index = PersistentMap<PersistentMap<true>>;

/**
 * Every index's values for one object, in the store's indexer order (see
 * `Store.prepare`): the write that stores the object reuses them instead of
 * calling the index functions again.
 */
export type IndexValues = readonly (readonly string[])[];

export const NAMESPACE = 'namespace';

const NO_VALUES: readonly string[] = Object.freeze([]);
const CLUSTER: readonly string[] = Object.freeze(['']);
/** kube-apiserver's longest namespace name (a DNS label): a longer one is never a real namespace's, and not cached. */
const MAX_NAMESPACE_LENGTH = 63;
/** Process-wide and never emptied: at most 100,000 names of at most 63 characters (~17 MiB at worst, measured). */
const namespaceValues = new Map<string, readonly string[]>();

/**
 * The `namespace` index every informer has (client-go's MetaNamespaceIndexFunc):
 * cluster-scoped objects are under `""`. Returns one shared frozen array per
 * namespace, so indexing allocates nothing. A name longer than a namespace can be
 * (a broken or hostile server's) gets an array of its own, freed with its object:
 * cached, 200 objects with 1 MiB namespaces held 200 MiB for good.
 */
export function namespaceIndex(object: { readonly metadata: { readonly namespace?: string | undefined } }): readonly string[] {
  const namespace = object.metadata.namespace;
  if (!namespace) return CLUSTER;
  if (namespace.length > MAX_NAMESPACE_LENGTH) return Object.freeze([namespace]);
  const values = namespaceValues.get(namespace);
  if (values) return values;
  if (namespaceValues.size >= 100_000) return Object.freeze([namespace]);
  // A copy of its own: a name sliced from a larger string (a page's text) would keep all of that alive in the cache.
  const own = JSON.parse(JSON.stringify(namespace)) as string;
  const shared = Object.freeze([own]);
  namespaceValues.set(own, shared);
  return shared;
}

/**
 * Indexers are an object of functions, else a `TypeError` naming the index (`where` starts the message): a JavaScript
 * caller's `{ byNode: undefined }` (a conditional left undefined) made every write an `IndexerError`, and an informer
 * synced an empty cache reporting one per object for ever (audit42).
 */
export function checkIndexers(where: string, indexers: unknown): void {
  if (indexers === undefined) return;
  if (typeof indexers !== 'object' || indexers === null || Array.isArray(indexers))
    throw new TypeError(
      `${where}: \`indexers\` must be an object of index functions, e.g. { byNode: (pod) => [pod.spec.nodeName] }, got ${described(indexers)}`,
    );
  for (const name of Object.keys(indexers)) {
    const indexFunc = (indexers as Record<string, unknown>)[name];
    if (typeof indexFunc !== 'function')
      throw new TypeError(
        `${where}: index ${JSON.stringify(name)} must be a function (object) => string[], got ${indexFunc === undefined ? 'undefined' : described(indexFunc)}`,
      );
  }
}

/** Thrown when a read names an index the store was not built with. */
export class UnknownIndexError extends Error {
  readonly index: string;
  constructor(index: string, known: readonly string[]) {
    super(
      `unknown index ${JSON.stringify(index)}; this store has ${known.length ? known.map((k) => JSON.stringify(k)).join(', ') : 'no indexes'}`,
    );
    this.name = 'UnknownIndexError';
    this.index = index;
  }
}

function indexerError(name: string, key: string, object: unknown, error: unknown): InformerError {
  const metadata = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata;
  const resourceVersion = typeof metadata?.resourceVersion === 'string' ? metadata.resourceVersion : undefined;
  return new InformerError('IndexerError', `index ${JSON.stringify(name)} threw for ${key}: ${describeThrown(error)}`, {
    key,
    resourceVersion,
    cause: error,
  });
}

/** Thrown inside a write when an index function throws; caught by the write, which then changes nothing. */
export class IndexerFault {
  readonly error: InformerError;
  constructor(error: InformerError) {
    this.error = error;
  }
}

/** Every index's values for `object` (to be stored at `key`), in indexer order; throws an IndexerFault when an index function throws. */
export function indexValues<T>(indexers: ReadonlyMap<string, IndexFunc<T>>, key: string, object: T): IndexValues {
  const values: (readonly string[])[] = [];
  for (const [name, indexFunc] of indexers) {
    try {
      const found: unknown = indexFunc(object);
      if (!isStrings(found)) throw new TypeError('returned something other than an array of strings');
      values.push(found);
    } catch (error) {
      throw new IndexerFault(indexerError(name, key, object, error));
    }
  }
  return values;
}

/**
 * Moves `key` between index values where its object's values changed, starting
 * from `indices` (a copy being written, or undefined) over `current` (the
 * store's own); copies the indices map only then. `after` holds the values
 * already computed for `object` (see `IndexValues`), if any. Throws an IndexerFault
 * (before changing anything) when an index function throws for `object`. When
 * one throws for `old` (it did not when `old` was stored: a function that is
 * not pure), `key` is looked for in the whole index instead.
 */
export function reindexed<T>(
  indexers: ReadonlyMap<string, IndexFunc<T>>,
  current: ReadonlyMap<string, Index>,
  indices: Map<string, Index> | undefined,
  key: string,
  old: T | undefined,
  object: T | undefined,
  after?: IndexValues,
): Map<string, Index> | undefined {
  if (indexers.size === 0) return indices;
  const afterAll = object === undefined ? undefined : (after ?? indexValues(indexers, key, object));
  let i = 0;
  for (const [name, indexFunc] of indexers) {
    const afterValues = afterAll === undefined ? NO_VALUES : afterAll[i]!;
    i++;
    let before: readonly string[] | undefined = NO_VALUES;
    if (old !== undefined) {
      try {
        const found: unknown = indexFunc(old);
        before = isStrings(found) ? found : undefined;
      } catch {
        before = undefined;
      }
    }
    if (before !== undefined && sameValues(before, afterValues)) continue;
    indices ??= new Map(current);
    const index = indices.get(name)!;
    indices.set(name, reindex(index, key, before ?? valuesHolding(index, key), afterValues));
  }
  return indices;
}

/** An array of strings: what an index function must return (checked wherever one is called). */
export function isStrings(value: unknown): value is readonly string[] {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}

/** Every value of `index` that holds `key` (a whole-index scan: only for an index function that threw on an object it once took). */
function valuesHolding(index: Index, key: string): string[] {
  const out: string[] = [];
  for (const [value, keys] of index) if (keys.has(key)) out.push(value);
  return out;
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Past this many values, "is it among the others?" is asked of a Set, not of the array: `includes` in a loop made an
 * update of an object with 10,000 values take 10⁸ comparisons (1.4 s; audit42). Below it, a scan is cheaper than a Set.
 */
const SCAN_AT_MOST = 16;

/** A Set of `values` when they are too many to scan, else undefined (scan them). */
function lookupOf(values: readonly string[]): ReadonlySet<string> | undefined {
  return values.length > SCAN_AT_MOST ? new Set(values) : undefined;
}

function reindex(index: Index, key: string, before: readonly string[], after: readonly string[]): Index {
  const builder = index.edit();
  const afterSet = lookupOf(after);
  const beforeSet = lookupOf(before);
  for (const value of before) {
    if (afterSet ? afterSet.has(value) : after.includes(value)) continue;
    const keys = builder.get(value);
    if (!keys) continue;
    const left = keys.delete(key);
    if (left.size === 0) builder.delete(value);
    else builder.set(value, left);
  }
  for (const value of after) {
    if (beforeSet ? beforeSet.has(value) : before.includes(value)) continue;
    builder.set(value, (builder.get(value) ?? PersistentMap.empty<true>()).set(key, true));
  }
  return builder.done();
}
