/**
 * A small controller with a real bug shape: it hands each pod a port from a pool (by uid) and takes it
 * back when the pod is deleted.
 *
 * When a pod is deleted and re-created under the same name while the watch is down, the relist finds the
 * same name with a new uid: the informer delivers `deleted` for the old pod with `finalStateUnknown: true`
 * (its last state is what the cache had: client-go's `DeletedFinalStateUnknown` tombstone), then `added` for
 * the new one. The buggy controller skips tombstones (the classic `pod, ok := obj.(*v1.Pod); if !ok { return }`
 * of a client-go handler): the deleted pod keeps its port for ever. `fixed` frees it whatever the final state.
 */
import type { InformerEvent, Pod } from '../../src/index.ts';

export interface PortAllocator {
  /** The port each pod uid holds. */
  readonly ports: ReadonlyMap<string, number>;
  handle(event: InformerEvent<Pod>): void;
}

export function portAllocator(options: { readonly fixed: boolean }): PortAllocator {
  const ports = new Map<string, number>();
  let next = 30_000;
  return {
    ports,
    handle(event) {
      const uid = event.object.metadata.uid ?? '';
      if (event.type === 'added' && !ports.has(uid)) ports.set(uid, next++);
      // The bug: a deletion noticed by a relist is a deletion all the same.
      if (event.type === 'deleted' && (options.fixed || !event.finalStateUnknown)) ports.delete(uid);
    },
  };
}
