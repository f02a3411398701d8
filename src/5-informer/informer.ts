import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../0-model/objects.ts';
import type { Resource } from '../0-model/resources.ts';
import { namespaceOfKey } from '../0-model/keys.ts';
import { filtered, isListWatch, type ListWatch } from '../1-transport/listWatch.ts';
import { informerFromSource, reflectorFor, toListWatch, type Informer, type InformerOptions } from './informerFromSource.ts';
import { checkInformerOptionNames, checkInformerOptions, checkListWatchSelectors, checkResource } from './checkOptions.ts';
import { keepObjectFaults } from './keepObjectFaults.ts';
import { namespacesInformer } from './namespacesInformer.ts';

export { informerFromSource, reflectorFor, toListWatch, type Informer, type InformerOptions } from './informerFromSource.ts';

/**
 * Builds an informer for a resource, from a KubeConfig (HTTP) or from any
 * ListWatch (tests, fakes, other transports).
 *
 * ```ts
 * const pods = informer(kc, Pod, { namespace: 'default', labelSelector: 'app=web' });
 * pods.events$.pipe(ofType('updated')).subscribe((e) => console.log(e.oldObject, e.object));
 * ```
 *
 * @throws TypeError when `resource` is no resource with a schema (make one with `customResource()`), or an option that
 *   decides what is read has the wrong type (`namespace` an array, `namespaces` a string, a selector not a string, …), or an
 *   option (or a member of `http`, `http.http2`, `backoff`) has a name it does not take (`namepsace`: the nearest is suggested).
 */
export function informer<T extends KubeObject>(
  source: KubeConfig | ListWatch,
  resource: Resource<T>,
  options: InformerOptions<T> = {},
): Informer<T> {
  checkResource('informer', resource);
  checkInformerOptions('informer', options);
  checkInformerOptionNames('informer', options);
  checkListWatchSelectors('informer', source, options);
  if (options.namespaces !== undefined && resource.namespaced) {
    const namespaces = [...new Set(options.namespaces)];
    if (namespaces.length !== 1) return namespacesInformer(source, resource, namespaces, options);
    return informer(source, resource, { ...options, namespace: namespaces[0], namespaces: undefined });
  }
  // An `http.keepObject` of the caller's: the skeletons of the objects it rejects are left out (list items) or become
  // bookmarks (watch events), as the sharded informer's own are, instead of being cached as `{ metadata }` objects;
  // what it throws is reported.
  const faults = options.http?.keepObject !== undefined && !isListWatch(source) ? keepObjectFaults(options.http.keepObject) : undefined;
  const read = toListWatch(
    source,
    { resource, namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector },
    faults ? { ...options.http, keepObject: faults.keep } : options.http,
    options.random,
  );
  // A ListWatch given instead of a KubeConfig is read whole (its requests name no namespace): `namespace` leaves the
  // other namespaces' objects out on the client, as `namespaces` does (objects without a key, an ERROR's Status, stay).
  const namespace = isListWatch(source) && resource.namespaced && options.namespace ? options.namespace : undefined;
  const kept = namespace === undefined ? read : filtered(read, (key) => key === undefined || namespaceOfKey(key) === namespace);
  const listWatch = faults ? faults.reporting(filtered(kept, () => true)) : kept;
  return informerFromSource(resource, reflectorFor(listWatch, resource, options), options);
}
