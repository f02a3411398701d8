/**
 * When the dynamic factory discovers again (docs/dynamic-and-metadata.md, "Discovery follows CRDs"): after a CRD is
 * created or deleted, or an informer met a 404 (a poke), `debounceMs` after the last of them; after a CRD update only
 * when it can change what discovery serves, at most one such update every `updateIntervalMs`; and however often
 * changes come, at most `debounceMaxMs` after the first one waiting. client-go discovers again only when told to
 * (discovery/cached/memory/memcache.go, `Invalidate`); a CRD watch tells us when it is worth it.
 */
import { filter, map, merge, share, throttleTime, type Observable, type SchedulerLike } from 'rxjs';
import type { PartialObjectMetadata } from '../0-model/metadata.ts';
import type { InformerEvent, UpdatedEvent } from '../4-store/informerEvent.ts';
import { debounceWithin } from '../util/debounceWithin.ts';

/** Quiet time after a CRD is created or deleted, or a poke, before discovery starts (ms). */
export const DISCOVERY_DEBOUNCE_MS = 250;
/** At most one discovery caused by CRD updates this often (ms). */
export const CRD_UPDATE_INTERVAL_MS = 5_000;
/**
 * While the CRD watch has no list (a tenant not allowed to list CRDs gets 403 for good), nothing says a CRD came or
 * went: discovery runs again this long after each round (ms). kube-controller-manager's garbage collector and
 * resource quota controller refresh their discovery (and RESTMapper) on the same period (`garbageCollector.Sync(ctx,
 * discoveryClient, 30*time.Second)`, cmd/kube-controller-manager/app/core.go): one round per 30 s at most is their
 * cost, and a CRD installed meanwhile starts within 30 s and a round.
 */
export const CRD_BLIND_REDISCOVERY_MS = 30_000;

export interface DiscoveryTiming {
  /** Default {@link DISCOVERY_DEBOUNCE_MS}. */
  readonly debounceMs?: number | undefined;
  /** Default 4 × `debounceMs` (1 s). */
  readonly debounceMaxMs?: number | undefined;
  /** Default {@link CRD_UPDATE_INTERVAL_MS}. */
  readonly updateIntervalMs?: number | undefined;
}

/**
 * Whether an update of a CRD can change what discovery serves, as a metadata-only watch can tell. Discovery reads the
 * CRD's group, served versions, scope and subresources (its spec) and its accepted names and `Established` condition
 * (its status: apiextensions-apiserver's customresource_discovery_controller.go). A spec change moves
 * `metadata.generation`; annotations, labels, finalizers, managed fields and status do not. Status is not in the
 * metadata, so an update that keeps the generation counts only for a CRD discovery does not serve yet (`served`, by
 * the CRD's name `<plural>.<group>`): one being established after its create. A server that keeps no generation: every update counts.
 */
export function crdUpdateMatters(event: UpdatedEvent<PartialObjectMetadata>, served: (crdName: string) => boolean): boolean {
  if (event.resync) return false; // the same resourceVersion: nothing changed
  const before = event.oldObject.metadata.generation;
  const after = event.object.metadata.generation;
  if (before === undefined || after === undefined || before !== after) return true;
  return !served(event.object.metadata.name ?? '');
}

/** When to discover again, from the CRD watch's events after its initial list and the pokes (see the file's comment). */
export function discoveryTriggers(
  crdEvents$: Observable<InformerEvent<PartialObjectMetadata>>,
  pokes$: Observable<void>,
  served: (crdName: string) => boolean,
  timing: DiscoveryTiming,
  scheduler: SchedulerLike,
): Observable<void> {
  const debounceMs = timing.debounceMs ?? DISCOVERY_DEBOUNCE_MS;
  const events$ = crdEvents$.pipe(share());
  const turnover$ = events$.pipe(filter((e) => e.type !== 'updated'));
  const updates$ = events$.pipe(
    filter((e) => e.type === 'updated' && crdUpdateMatters(e, served)),
    throttleTime(timing.updateIntervalMs ?? CRD_UPDATE_INTERVAL_MS, scheduler, { leading: true, trailing: true }),
  );
  return merge(turnover$, updates$, pokes$).pipe(
    map((): void => undefined),
    debounceWithin(debounceMs, timing.debounceMaxMs ?? 4 * debounceMs, scheduler),
  );
}
