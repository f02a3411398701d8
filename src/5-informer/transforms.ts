import { withMetadata } from '../1-transport/lazyJson.ts';
import type { KubeObject } from '../0-model/objects.ts';

/**
 * A transform that drops `metadata.managedFields` (often half of an object's
 * metadata) before caching. Returns a shallow copy; the input is not changed.
 */
export function stripManagedFields<T extends KubeObject>(object: T): T {
  if (!('managedFields' in object.metadata)) return object;
  // Copied key by key so that managedFields is not read (a lazily decoded one is never parsed).
  const source = object.metadata as Record<string, unknown>;
  const metadata: Record<string, unknown> = {};
  for (const key of Object.keys(source)) if (key !== 'managedFields') metadata[key] = source[key];
  return withMetadata(object, metadata as T['metadata']);
}
