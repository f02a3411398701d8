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

/** Splits a cache key back into namespace (empty when cluster-scoped) and name. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
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
