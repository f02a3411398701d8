import { isRecord } from '../util/isRecord.ts';

/**
 * Cache keys and the two fields read from raw (not yet validated) objects: the one
 * home of `namespace/name`. client-go's MetaNamespaceKeyFunc and SplitMetaNamespaceKey.
 */

/** The key of `name` in `namespace`: `namespace/name`, or `name` when cluster-scoped (namespace ""). */
export function joinKey(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * The cache key of an object: `namespace/name`, or `name` when cluster-scoped
 * (client-go's MetaNamespaceKeyFunc).
 */
export function keyOf(object: { readonly metadata: { readonly name: string; readonly namespace?: string | undefined } }): string {
  return joinKey(object.metadata.namespace ?? '', object.metadata.name);
}

/**
 * Where a cache key's namespace ends, judged from the key alone: the index of its first `/` (-1 when it has none:
 * cluster-scoped). The namespace and the name are the ranges before and after it, for a reader that does not
 * slice them (the store's lookups, `PersistentMap.getIn`).
 */
export function namespaceEnd(key: string): number {
  return key.indexOf('/');
}

/** The namespace of a cache key, judged from the key alone: what comes before its first `/` ('' when it has none). */
export function namespaceOfKey(key: string): string {
  const slash = namespaceEnd(key);
  return slash < 0 ? '' : key.slice(0, slash);
}

/** The name of a cache key, judged from the key alone: what comes after its first `/` (the whole key when it has none). */
export function nameOfKey(key: string): string {
  const slash = namespaceEnd(key);
  return slash < 0 ? key : key.slice(slash + 1);
}

/** Splits a cache key back into namespace (empty when cluster-scoped) and name. */
export function splitKey(key: string): { namespace: string; name: string } {
  return { namespace: namespaceOfKey(key), name: nameOfKey(key) };
}

/**
 * The namespace of `key` as its object says: the object's own `metadata.namespace` when the key starts with it and
 * a `/` ('' when the object is cluster-scoped, whose name may then hold a "/"), else, or for an object without
 * metadata, what the key says ({@link namespaceOfKey}).
 */
export function namespaceOfObjectKey(key: string, object: unknown): string {
  const metadata = (object as { metadata?: { namespace?: unknown } } | null)?.metadata;
  if (typeof metadata !== 'object' || metadata === null) return namespaceOfKey(key);
  const namespace = metadata.namespace;
  if (typeof namespace !== 'string' || namespace === '') return '';
  return key.length > namespace.length && key.startsWith(namespace) && key.charCodeAt(namespace.length) === 0x2f
    ? namespace
    : namespaceOfKey(key);
}

/** The name of `key` whose namespace is `namespace` (from {@link namespaceOfObjectKey}): the rest of the key after it. */
export function nameInNamespace(namespace: string, key: string): string {
  return namespace === '' ? key : key.slice(namespace.length + 1);
}

/** The cache key of a raw object, as far as it can be read (for error reports and rejected keys). */
export function rawKey(raw: unknown): string | undefined {
  if (!isRecord(raw) || !isRecord(raw.metadata)) return undefined;
  const { name, namespace } = raw.metadata;
  if (typeof name !== 'string') return undefined;
  return joinKey(typeof namespace === 'string' ? namespace : '', name);
}

/** The metadata.resourceVersion of a raw object, if it has one. */
export function rawResourceVersion(raw: unknown): string | undefined {
  if (!isRecord(raw) || !isRecord(raw.metadata)) return undefined;
  const rv = raw.metadata.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}
