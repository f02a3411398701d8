import { asyncScheduler, concatMap, type Observable } from 'rxjs';
import { InformerError, type ErrorReason, type InformerErrorDetails } from '../0-model/errors.ts';
import { apiVersionOf, builtinResourceOfKind, customResource, type Resource } from '../0-model/resources.ts';
import type { KubeObject, OwnerReference } from '../0-model/objects.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';
import { informerFromSource, type Informer, type InformerOptions } from '../5-informer/informer.ts';
import { checkedSourceEvent, decodedSourceEvents, fakeDecoder } from './fakeSource.ts';

/**
 * An informer driven by a marble Observable of source events instead of a
 * server: what reaches it is what a list/watch would have delivered.
 *
 * ```ts
 * const cm = (rv: string) => kubeObj<ConfigMap>('settings', { resourceVersion: rv, data: { level: rv } });
 * new TestScheduler((actual, expected) => assert.deepEqual(actual, expected)).run(({ cold }) => {
 *   const configMaps = fakeInformer(ConfigMap, cold('l--m--d', {
 *     l: listed('1', cm('1')),
 *     m: modified(cm('2')),
 *     d: deleted(cm('2')),
 *   }));
 * });
 * ```
 *
 * `delivery: 'in-order'` swaps in client-go's RealFIFO as on a real informer (docs/semantics.md,
 * "Delivery modes"), so a controller built on in-order delivery is tested with the order it will see.
 * The README's "Testing a controller" has a whole example, checked in `npm test`.
 *
 * Each object is decoded as a real informer decodes it (the same decoder): one that fails the resource's schema,
 * or of another kind (a Deployment given to `fakeInformer(ConfigMap, …)`), is reported on `errors$`
 * (`ValidationFailed`) and not cached; a rejected DELETED still deletes its key. An object without `apiVersion`
 * and `kind` (`kubeObj('x')`) is taken as the resource's, as a list item is, and cached as it is. A marble value
 * that is not a source event (a letter missing from the values map, an object instead of `added(object)`) fails
 * the test with a `Config` InformerError naming the value and the helpers that make source events.
 *
 * For a cluster-scoped resource (`namespaced: false`: `Node`, `Namespace`, …) the objects lose their
 * `metadata.namespace` on the way in, as the API server sends them, so `kubeObj('n1')` (namespace `default`
 * by default) is keyed `n1`, as a real informer keys it.
 */
export function fakeInformer<T extends KubeObject = KubeObject>(
  resource: Resource<T>,
  events$: Observable<SourceEvent<T>>,
  options: Pick<InformerOptions<T>, 'indexers' | 'resyncPeriod' | 'scheduler' | 'delivery'> = {},
): Informer<T> {
  const decode = fakeDecoder(resource);
  const scheduler = options.scheduler ?? asyncScheduler;
  const decoded$ = events$.pipe(
    concatMap((value: unknown) => {
      const event = checkedSourceEvent<T>(resource, value, scheduler.now());
      return decodedSourceEvents(decode, resource.namespaced ? event : clusterScoped(event));
    }),
  );
  return informerFromSource(resource, decoded$, options);
}

/** A source event of a cluster-scoped resource: its objects without a namespace. */
function clusterScoped<T extends KubeObject>(event: SourceEvent<T>): SourceEvent<T> {
  if (event.type === 'replace') return { ...event, items: event.items.map(withoutNamespace) };
  if (event.type === 'added' || event.type === 'modified' || event.type === 'deleted')
    return { ...event, object: withoutNamespace(event.object) };
  return event;
}

function withoutNamespace<T extends KubeObject>(object: T): T {
  if (object?.metadata?.namespace === undefined) return object;
  const metadata = { ...object.metadata };
  delete metadata.namespace;
  return { ...object, metadata };
}

/** An unstructured resource for tests (namespaced `widgets` in `example.com/v1`, unless told otherwise). */
export function fakeResource(description: Partial<Pick<Resource, 'group' | 'version' | 'plural' | 'kind' | 'namespaced'>> = {}): Resource {
  return customResource({
    group: description.group ?? 'example.com',
    version: description.version ?? 'v1',
    plural: description.plural ?? 'widgets',
    kind: description.kind ?? 'Widget',
    namespaced: description.namespaced ?? true,
  });
}

/**
 * A test object's controller owner: `{ resource, name }` (`{ resource: ReplicaSet, name: 'web' }`, or a custom
 * resource's descriptor), or `{ kind, name, apiVersion? }`, where `apiVersion` may be left out for a built-in kind
 * the library exports (`ReplicaSet` is `apps/v1`, `Pod` is `v1`): `controller({ owns })` matches the owner's group,
 * so a guessed one would map the object to no owner, silently.
 */
export type OwnerParts =
  | { readonly resource: Pick<Resource, 'group' | 'version' | 'kind'>; readonly name: string }
  | { readonly kind: string; readonly name: string; readonly apiVersion?: string };

/** Any part of a value: every field optional, at every depth (a test's spec names only what it needs). */
export type PartOf<V> = V extends readonly (infer E)[]
  ? readonly PartOf<E>[]
  : V extends object
    ? { readonly [K in keyof V]?: PartOf<V[K]> }
    : V;

/** The type of `T`'s field `K`, in part; `unknown` where `T` does not declare it. */
export type FieldOf<T, K extends string> = T extends { readonly [P in K]?: infer V } ? (unknown extends V ? unknown : PartOf<V>) : unknown;

/**
 * What to put in a test object. `spec`, `status` and `data` are typed from the object's type `T`, in part (any field
 * may be left out, none may have the wrong type): `kubeObj<Deployment>('web', { spec: { replicas: 'three' } })` does
 * not compile.
 */
export interface ObjectParts<T = KubeObject> {
  readonly namespace?: string;
  readonly resourceVersion?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  /** Controller owner (uid and `controller: true` are filled in): see {@link OwnerParts}. */
  readonly owner?: OwnerParts;
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly spec?: FieldOf<T, 'spec'>;
  readonly status?: FieldOf<T, 'status'>;
  readonly data?: FieldOf<T, 'data'>;
  readonly [field: string]: unknown;
}

const META_FIELDS = new Set(['namespace', 'resourceVersion', 'uid', 'generation', 'labels', 'annotations', 'owner', 'apiVersion', 'kind']);

/**
 * Makes an object for a test. Defaults: namespace `default` (dropped by `fakeInformer` of a
 * cluster-scoped resource), resourceVersion `1`, uid `uid-<name>`, generation 1; `owner`'s
 * `apiVersion` is its resource's (`owner: { resource: ReplicaSet, name: 'web' }`) or the built-in
 * kind's (`owner: { kind: 'ReplicaSet', name: 'web' }` is `apps/v1`); any other kind needs it given
 * (`owner: { apiVersion: 'example.com/v1', kind: 'Widget', name }`), or kubeObj throws a TypeError,
 * since `controller({ owns })` matches the owner's group; other parts (spec, status, data, …) are
 * copied as they are.
 *
 * `kubeObj(resource, name, parts?)` makes an object of that resource, typed by it: its `apiVersion` and `kind`
 * (unless given), and, for a cluster-scoped one (`Node`, `Namespace`, a CRD with scope Cluster), no namespace,
 * even one given (as the API server stores it, and as a real informer caches it): `kubeObj(Node, 'n1')` is the
 * node `n1` a `fakeInformer(Node, …)` caches, equal to it.
 */
export function kubeObj<T extends KubeObject = KubeObject>(name: string, parts?: ObjectParts<T>): T;
export function kubeObj<T extends KubeObject>(resource: Resource<T>, name: string, parts?: ObjectParts<T>): T;
export function kubeObj(first: string | Resource, second?: string | ObjectParts, third?: ObjectParts): KubeObject {
  if (typeof first === 'string') return testObject(first, typeof second === 'object' ? second : {});
  const parts = third ?? {};
  const partial = first.metadataOnly === true;
  const object = testObject(typeof second === 'string' ? second : '', {
    ...parts,
    apiVersion: parts.apiVersion ?? (partial ? 'meta.k8s.io/v1' : apiVersionOf(first)),
    kind: parts.kind ?? (partial ? 'PartialObjectMetadata' : first.kind),
  });
  return first.namespaced ? object : withoutNamespace(object);
}

function testObject(name: string, parts: ObjectParts): KubeObject {
  const ownerReferences: OwnerReference[] | undefined = parts.owner ? [ownerReference(parts.owner)] : undefined;
  const rest = Object.fromEntries(Object.entries(parts).filter(([field]) => !META_FIELDS.has(field)));
  return {
    ...(parts.apiVersion ? { apiVersion: parts.apiVersion } : {}),
    ...(parts.kind ? { kind: parts.kind } : {}),
    metadata: {
      name,
      namespace: parts.namespace ?? 'default',
      uid: parts.uid ?? `uid-${name}`,
      resourceVersion: parts.resourceVersion ?? '1',
      generation: parts.generation ?? 1,
      ...(parts.labels ? { labels: parts.labels } : {}),
      ...(parts.annotations ? { annotations: parts.annotations } : {}),
      ...(ownerReferences ? { ownerReferences } : {}),
    },
    ...rest,
  } as unknown as KubeObject;
}

/** The owner reference `owner` stands for; a TypeError for a kind whose `apiVersion` the kit cannot know. */
function ownerReference(owner: OwnerParts): OwnerReference {
  const [apiVersion, kind] =
    'resource' in owner
      ? [apiVersionOf(owner.resource), owner.resource.kind]
      : [owner.apiVersion ?? builtinApiVersion(owner.kind), owner.kind];
  return { apiVersion, kind, name: owner.name, uid: `uid-${owner.name}`, controller: true };
}

function builtinApiVersion(kind: string): string {
  const resource = builtinResourceOfKind(kind);
  if (resource === undefined)
    throw new TypeError(
      `kubeObj: owner kind ${JSON.stringify(kind)} is not a built-in kind the library knows, so its apiVersion is unknown: ` +
        `give it (owner: { apiVersion: 'example.com/v1', kind: ${JSON.stringify(kind)}, name }) or give the owner's resource ` +
        `(owner: { resource, name }); controller({ owns }) matches the owner's group`,
    );
  return apiVersionOf(resource);
}

function rv(object: KubeObject): string {
  return object.metadata.resourceVersion ?? '';
}

/** A list result (also a relist): these objects, at this resourceVersion. */
export function listed<T extends KubeObject>(resourceVersion: string, ...items: T[]): SourceEvent<T> {
  return { type: 'replace', items, resourceVersion };
}

export function added<T extends KubeObject>(object: T): SourceEvent<T> {
  return { type: 'added', object, resourceVersion: rv(object) };
}

export function modified<T extends KubeObject>(object: T): SourceEvent<T> {
  return { type: 'modified', object, resourceVersion: rv(object) };
}

export function deleted<T extends KubeObject>(object: T): SourceEvent<T> {
  return { type: 'deleted', object, resourceVersion: rv(object) };
}

/**
 * The server's resourceVersion moved on. Typed `SourceEvent<never>` (it carries
 * no object), so it sits in the same marble value map as any resource's events.
 */
export function bookmark(resourceVersion: string): SourceEvent<never> {
  return { type: 'bookmark', resourceVersion };
}

/**
 * A fault, as the source would report it on `errors$`: `failure('Expired',
 * 'too old resource version: 5 (9)')`. The message defaults to the reason.
 * Typed `SourceEvent<never>` (it carries no object), so it sits in the same
 * marble value map as any resource's events.
 */
export function failure(reason: ErrorReason, message: string = reason, details: InformerErrorDetails = {}): SourceEvent<never> {
  return { type: 'error', error: new InformerError(reason, message, details) };
}
