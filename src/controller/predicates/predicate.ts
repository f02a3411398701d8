import type { KubeObject } from '../../0-model/objects.ts';
import type { InformerEvent } from '../../4-store/informerEvent.ts';

/** Decides whether an event should reach a controller. */
export type Predicate<T extends KubeObject = KubeObject> = (event: InformerEvent<T>) => boolean;

/**
 * An update whose object was deleted and recreated under the same name (the
 * uid changed; seen when a relist or a coalescing buffer merges the two).
 * Every change predicate lets these through, so a recreate is never lost
 * (kube-rs#1830).
 */
export function isRecreate<T extends KubeObject>(event: InformerEvent<T>): boolean {
  return event.type === 'updated' && event.oldObject.metadata.uid !== event.object.metadata.uid;
}

/**
 * Builds a predicate on updates from a comparison of old and new objects:
 * adds and deletes always pass (as in controller-runtime), recreates pass,
 * and an update passes only when `changed(old, new)` says so. Resync events
 * (nothing changed) therefore do not pass.
 */
export function updatePredicate<T extends KubeObject>(changed: (oldObject: T, object: T) => boolean): Predicate<T> {
  return (event) => event.type !== 'updated' || isRecreate(event) || changed(event.oldObject, event.object);
}

/** All must pass. */
export function and<T extends KubeObject>(...predicates: readonly Predicate<T>[]): Predicate<T> {
  return (event) => predicates.every((p) => p(event));
}

/** At least one must pass. */
export function or<T extends KubeObject>(...predicates: readonly Predicate<T>[]): Predicate<T> {
  return (event) => predicates.some((p) => p(event));
}

/** The opposite. */
export function not<T extends KubeObject>(predicate: Predicate<T>): Predicate<T> {
  return (event) => !predicate(event);
}
