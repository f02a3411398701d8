/**
 * rx-informer/discovery: what the API server serves, resource names resolved as kubectl does, and informers
 * for resources known by name only (`dynamicInformerFactory`).
 */
export {
  AmbiguousResourceError,
  GroupDiscoveryFailedError,
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
  type DiscoveryLimits,
  type DiscoveryOptions,
  type ResourceNameReason,
} from './discovery.ts';
export {
  DiscoveryError,
  dynamicInformerFactory,
  type DynamicEvent,
  type DynamicInformerFactory,
  type DynamicInformerFactoryOptions,
  type DynamicWatchOptions,
  type EndReason,
  type Selection,
} from './dynamicInformers.ts';
