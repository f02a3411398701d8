/**
 * rx-informer: Kubernetes informers as RxJS streams.
 *
 * The root entry holds what an informer's user needs on day one: `informer()`
 * and the factory, the events and the cache, the resources and the model, the
 * operators for consumers, and the error. It is kept small on purpose (a test
 * in spec/repo lists every name); the rest stands on its own behind subpath
 * entries named for their concern:
 *
 *   rx-informer/discovery       discover, resolveResource, dynamicInformerFactory
 *   rx-informer/diff            field-level changes: diff, fieldChanges, selectFields
 *   rx-informer/controller      controller(), reconcile results, owner keys, predicates
 *   rx-informer/workqueue       client-go's work queue and rate limiters
 *   rx-informer/metrics         informer metrics, health and readiness, the Prometheus adapter
 *   rx-informer/leaderelection  leader election and sharding on Leases, shardedInformer
 *   rx-informer/pipeline        the stages one by one, their options, the model's details
 *   rx-informer/testing         the marble kit and fakes (fakeInformer, fakeListWatch)
 *
 * The API-server emulator tests run on is a package of its own: rx-informer-emulator.
 */

// Informers and their factory.
export { informer, type Informer, type InformerOptions } from './5-informer/informer.ts';
export { cacheSynced$, informerFactory, waitForCacheSync, type FactoryOptions, type InformerFactory } from './5-informer/factory.ts';
import { shardedInformer as sharded, type ShardedInformer as Sharded } from './5-informer/shardedInformer.ts';
/**
 * @deprecated Import it from `rx-informer/leaderelection`, beside `sharding()`, the handle it takes (one import for
 * the whole feature); this alias leaves the root entry in a later minor version.
 */
export const shardedInformer: typeof sharded = sharded;
/** @deprecated Import it from `rx-informer/leaderelection`, beside `sharding()`. */
export type ShardedInformer<T> = Sharded<T>;

// Their events and their cache.
export type { AddedEvent, DeletedEvent, InformerEvent, InformerEventType, UpdatedEvent } from './4-store/informerEvent.ts';
export { Store, UnknownIndexError, type IndexFunc, type Indexers } from './4-store/store.ts';

// Errors.
export { InformerError, type ErrorReason } from './0-model/errors.ts';

// The model and the resources.
export { KubeObject, ObjectMeta, kubeObject, keyOf } from './0-model/objects.ts';
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
  customResource,
  type ObjectOf,
  type Resource,
} from './0-model/resources.ts';
export { PartialObjectMetadata, metadataOnly } from './0-model/metadata.ts';

// Operators for consumers.
export { ofType } from './5-informer/ofType.ts';
export { skipResync } from './5-informer/skipResync.ts';
export { handleEvents, type EventHandler } from './5-informer/handleEvents.ts';
export { stripManagedFields } from './5-informer/transforms.ts';
