import type { KubeObject } from '../../0-model/objects.ts';
import { updatePredicate, type Predicate } from './predicate.ts';

/** Equal maps; `null` and a missing map are the empty map. */
function sameRecord(
  a: Readonly<Record<string, string>> | null | undefined,
  b: Readonly<Record<string, string>> | null | undefined,
): boolean {
  const ak = Object.keys(a ?? {});
  const bk = Object.keys(b ?? {});
  if (ak.length !== bk.length) return false;
  return ak.every((k) => a?.[k] === b?.[k]);
}

/**
 * Updates pass only when `metadata.generation` changed (the spec changed);
 * status-only updates and resyncs do not. Objects without a generation pass.
 */
export function generationChanged<T extends KubeObject>(): Predicate<T> {
  return updatePredicate<T>((o, n) => o.metadata.generation === undefined || o.metadata.generation !== n.metadata.generation);
}

/** Updates pass only when `metadata.resourceVersion` changed (drops resyncs). */
export function resourceVersionChanged<T extends KubeObject>(): Predicate<T> {
  return updatePredicate<T>((o, n) => o.metadata.resourceVersion !== n.metadata.resourceVersion);
}

/** Updates pass only when the labels changed. */
export function labelsChanged<T extends KubeObject>(): Predicate<T> {
  return updatePredicate<T>((o, n) => !sameRecord(o.metadata.labels, n.metadata.labels));
}

/** Updates pass only when the annotations changed. */
export function annotationsChanged<T extends KubeObject>(): Predicate<T> {
  return updatePredicate<T>((o, n) => !sameRecord(o.metadata.annotations, n.metadata.annotations));
}
