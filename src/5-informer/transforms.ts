import type { KubeObject } from '../0-model/objects.ts';

/**
 * A transform that drops `metadata.managedFields` (often half of an object's
 * metadata) before caching. Returns a shallow copy; the input is not changed.
 */
export function stripManagedFields<T extends KubeObject>(object: T): T {
  if (!('managedFields' in object.metadata)) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata as KubeObject['metadata'] & { managedFields?: unknown };
  return { ...object, metadata } as T;
}
