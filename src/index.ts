/**
 * rx-informer: Kubernetes informers as RxJS streams.
 *
 * The pipeline, top to bottom (each stage is a folder of src/):
 *   1-transport  HTTP list and watch through a KubeConfig → ListWatch (the only I/O)
 *   2-source     listAndWatch: list, watch, relist, backoff → SourceEvent stream
 *   3-deltas     resync, deltaFifo → per-key Deltas; processDeltas for async consumers
 *   4-store      reduceDeltas over a persistent indexed Store → state, events
 *   5-informer   informer, factory, operators for consumers
 *
 * Rooms beside the pipeline: workqueue (client-go's work queue and rate
 * limiters), controller (controller(), predicates), metrics, leaderelection.
 */

// 0 · the model
export { InformerError, isExpired, type ErrorReason, type ErrorPhase, type InformerErrorDetails, type KubeStatus } from './0-model/errors.ts';
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

// 1 · transport
export { httpListWatch, parseRetryAfter, parseWatchLine, type HttpTransportOptions } from './1-transport/httpTransport.ts';
export { hasUnparsedMembers } from './1-transport/lazyJson.ts';
export { LineSplitter, type LineBytesSink, type LineSink } from './1-transport/lineSplitter.ts';
export type { ListOptions, ListPage, ListWatch, RawWatchEvent, WatchFrame, WatchOptions } from './1-transport/listWatch.ts';
export { collectionPath, type ListWatchTarget } from './1-transport/paths.ts';

// 2 · source
export { Backoff, type BackoffOptions } from './2-source/backoff.ts';
export { decoder, type Decoder } from './2-source/decode.ts';
export { listAndWatch, type ListAndWatchOptions } from './2-source/listAndWatch.ts';
export type { SourceEvent, WatchEventType } from './2-source/sourceEvent.ts';

// 3 · deltas
export { deltaFifo, type DeltaFifoOptions } from './3-deltas/deltaFifo.ts';
export { DeltaQueue } from './3-deltas/deltaQueue.ts';
export {
  isTombstone,
  type BatchCause,
  type Delta,
  type DeltaBatch,
  type Deltas,
  type DeltaType,
  type DeletedFinalStateUnknown,
  type FifoOutput,
} from './3-deltas/deltas.ts';
export { processDeltas } from './3-deltas/processDeltas.ts';
export { resync } from './3-deltas/resync.ts';

// 4 · store
export { EventQueue } from './5-informer/eventQueue.ts';
export type { AddedEvent, DeletedEvent, InformerEvent, InformerEventType, UpdatedEvent } from './4-store/informerEvent.ts';
export { initialState, reduceDeltas, type InformerState } from './4-store/reduceDeltas.ts';
export { Store, UnknownIndexError, namespaceIndex, type IndexFunc, type Indexers, type StoreBatch } from './4-store/store.ts';

// 5 · informer
export { cacheSynced$, informerFactory, informerName, waitForCacheSync, type FactoryOptions, type InformerFactory, type Syncable } from './5-informer/factory.ts';
export { informer, informerFromSource, type Informer, type InformerOptions } from './5-informer/informer.ts';
export { handleEvents, type EventHandler, type HandlerResult } from './5-informer/handleEvents.ts';
export { ofType } from './5-informer/ofType.ts';
export { skipResync } from './5-informer/skipResync.ts';
export { stripManagedFields } from './5-informer/transforms.ts';

// 6 · controller
export * from './controller/predicates/index.ts';
export * from './workqueue/index.ts';
export * from './controller/index.ts';
export * from './metrics/index.ts';

// discovery
export {
  AmbiguousResourceError,
  ResourceNameError,
  UnknownResourceError,
  assembleDiscovery,
  compareVersions,
  discover,
  isWatchable,
  parseGroupVersions,
  parseResourceList,
  resolveResource,
  toResource,
  watchableResources,
  type DiscoveredResource,
  type Discovery,
  type DiscoveryFailure,
  type DiscoveryOptions,
  type GroupVersion,
  type ResourceNameReason,
} from './1-transport/discovery.ts';

// metadata-only informers
export {
  PARTIAL_OBJECT_METADATA,
  PartialObjectMetadata,
  isMetadataOnly,
  metadataOnly,
  toPartialObjectMetadata,
  typeMetaOf,
} from './0-model/metadata.ts';
export { METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT } from './1-transport/httpTransport.ts';

// Several replicas (the whole room: rx-informer/leaderelection)
export { leaderElection, sharding, httpLeaseClients, LeaseError, leaderElectionFamilies, shardFamilies } from './leaderelection/index.ts';
export type { ElectionStatus, LeaderElection, LeaderElectionOptions, LeaseClient, LeaseClients, Sharding, ShardingOptions, ShardStatus } from './leaderelection/index.ts';

// dynamic informers
export {
  dynamicInformerFactory,
  type DynamicEvent,
  type DynamicInformerFactory,
  type DynamicInformerFactoryOptions,
  type DynamicWatchOptions,
  type EndReason,
  type Selection,
} from './dynamic/dynamicInformers.ts';
