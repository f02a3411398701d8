import { joinKey } from '../0-model/keys.ts';
import type { KubeObject } from '../0-model/objects.ts';
import type { Resource } from '../0-model/resources.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';

/** The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → ``). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * The key of an object's controller owner of the given kind (the owner
 * reference with `controller: true`), or nothing. Owners live in the owned
 * object's namespace (or are cluster-scoped).
 */
export function controllerOwnerKey(object: KubeObject, owner: Pick<Resource, 'group' | 'kind' | 'namespaced'>): string | undefined {
  for (const ref of object.metadata.ownerReferences ?? []) {
    if (ref.controller !== true || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== owner.group) continue;
    return joinKey(owner.namespaced ? (object.metadata.namespace ?? '') : '', ref.name);
  }
  return undefined;
}

/**
 * The owner keys an event of an owned object should wake: on an update both
 * the old and the new controller owner (ownership can move), as
 * controller-runtime's EnqueueRequestForOwner with OnlyControllerOwner.
 */
export function ownerKeysOf(event: InformerEvent<KubeObject>, owner: Pick<Resource, 'group' | 'kind' | 'namespaced'>): string[] {
  const keys = new Set<string>();
  const now = controllerOwnerKey(event.object, owner);
  if (now) keys.add(now);
  if (event.type === 'updated') {
    const before = controllerOwnerKey(event.oldObject, owner);
    if (before) keys.add(before);
  }
  return [...keys];
}
