/**
 * rx-informer: Kubernetes informers as RxJS streams.
 *
 * The root entry holds what an informer's user needs: resources and their
 * schemas, `informer()` and the factory, the events and the cache, the
 * operators for consumers, discovery, and the errors. The rest stands on its
 * own behind subpath entries:
 *
 *   rx-informer/controller      controller(), reconcile results, owner keys, predicates
 *   rx-informer/workqueue       client-go's work queue and rate limiters
 *   rx-informer/metrics         informer metrics and the Prometheus adapter
 *   rx-informer/leaderelection  leader election and sharding on Leases
 *   rx-informer/pipeline        the stages one by one (transport, listAndWatch, deltaFifo, …)
 *   rx-informer/testing         the marble kit and fakes (fakeInformer, fakeListWatch)
 *
 * The API-server emulator tests run on is a package of its own: rx-informer-emulator.
 *
 * The pipeline, top to bottom (each stage is a folder of src/):
 *   1-transport  HTTP list and watch through a KubeConfig → ListWatch (the only I/O)
 *   2-source     listAndWatch: list, watch, relist, backoff → SourceEvent stream
 *   3-deltas     resync, deltaFifo → per-key Deltas; processDeltas for async consumers
 *   4-store      reduceDeltas over a persistent indexed Store → state, events
 *   5-informer   informer, factory, operators for consumers
 */

// The model: errors, objects, resources.
export {
  InformerError,
  isExpired,
  type ErrorReason,
  type ErrorPhase,
  type InformerErrorDetails,
  type KubeStatus,
} from './0-model/errors.ts';
export { KubeObject, ObjectMeta, OwnerReference, kubeObject, keyOf, splitKey, type Typed, type Wire } from './0-model/objects.ts';
export {
  ConfigMap,
  Deployment,
  Event,
  Lease,
  Namespace,
  Node,
  Pod,
  ReplicaSet,
  Secret,
  Service,
  apiVersionOf,
  customResource,
  resourceName,
  type ObjectOf,
  type Resource,
  type ResourceDescription,
} from './0-model/resources.ts';
export { PartialObjectMetadata, isMetadataOnly, metadataOnly } from './0-model/metadata.ts';

// Options of the stages an informer is made of.
export type { Compression, HttpTransportOptions, HttpProtocol, Http2Options } from './1-transport/httpTransport.ts';
export { hasUnparsedMembers, isSkipped, type KeepObject } from './1-transport/lazyJson.ts';
export type { ListWatch } from './1-transport/listWatch.ts';
export type { BackoffOptions } from './2-source/backoff.ts';
export type { ListProgress } from './2-source/sourceEvent.ts';

// Informers, their events and their cache.
export {
  cacheSynced$,
  informerFactory,
  informerName,
  waitForCacheSync,
  type FactoryOptions,
  type InformerFactory,
  type Syncable,
} from './5-informer/factory.ts';
export { informer, type Informer, type InformerOptions } from './5-informer/informer.ts';
export {
  DEFAULT_STALE_AFTER_MS,
  HEALTH_INTERVAL_MS,
  informerHealth,
  isFailure,
  isStale,
  readiness,
  type InformerHealth,
  type StalenessOptions,
} from './5-informer/health.ts';
export { shardedInformer, type ShardSource, type ShardedInformer } from './5-informer/shardedInformer.ts';
export { DEFAULT_MAX_NAMESPACE_WATCHES } from './5-informer/namespacesInformer.ts';
export type { AddedEvent, DeletedEvent, InformerEvent, InformerEventType, UpdatedEvent } from './4-store/informerEvent.ts';
export type { InformerState } from './4-store/reduceDeltas.ts';
export { Store, UnknownIndexError, type IndexFunc, type Indexers } from './4-store/store.ts';
export { handleEvents, type EventHandler, type HandlerMetrics, type HandlerResult } from './5-informer/handleEvents.ts';
export { ofType } from './5-informer/ofType.ts';
export { skipResync } from './5-informer/skipResync.ts';
export { diff, DIFF_NOISE, type DiffEvent, type DiffOptions } from './5-informer/diff.ts';
export {
  FieldSelector,
  MAX_DEPTH,
  TOO_DEEP,
  fieldChanges,
  jsonEqual,
  limitDepth,
  parseFieldPath,
  selectFields,
  type Change,
  type FieldChangesOptions,
} from './5-informer/fieldChanges.ts';
export { stripManagedFields } from './5-informer/transforms.ts';

// Discovery and informers for resources known by name only.
export {
  AmbiguousResourceError,
  ResourceNameError,
  UnknownResourceError,
  discover,
  isWatchable,
  resolveResource,
  toResource,
  watchableResources,
  type DiscoveredResource,
  type Discovery,
  type DiscoveryFailure,
  type DiscoveryOptions,
  type GroupVersion,
  type ResourceNameReason,
} from './discovery/discovery.ts';
export {
  DiscoveryError,
  dynamicInformerFactory,
  type DynamicEvent,
  type DynamicInformerFactory,
  type DynamicInformerFactoryOptions,
  type DynamicWatchOptions,
  type EndReason,
  type Selection,
} from './discovery/dynamicInformers.ts';
