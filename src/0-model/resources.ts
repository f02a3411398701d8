import { z } from 'zod';
import type {
  CoreV1Event,
  V1ConfigMap,
  V1Deployment,
  V1Lease,
  V1Namespace,
  V1Node,
  V1Pod,
  V1ReplicaSet,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import { KubeObject, type Typed } from './objects.ts';

/**
 * What an informer needs to know about a kind of object: where it lives in the
 * API (group, version, plural), whether it is namespaced, and the zod schema
 * every object is validated with before it is cached.
 */
export interface Resource<T extends KubeObject = KubeObject> {
  /** API group; `''` for the core group (`/api/v1`). */
  readonly group: string;
  readonly version: string;
  /** The plural resource name used in URLs, e.g. `pods`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Validates (and types) each object. */
  readonly schema: z.ZodType<T>;
  /**
   * Ask the server for metadata only (PartialObjectMetadata); set by
   * `metadataOnly(resource)`. The informer's objects are then
   * `{ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata }`.
   */
  readonly metadataOnly?: boolean;
}

/** `group/version`, or just `version` for the core group. */
export function apiVersionOf(resource: Pick<Resource, 'group' | 'version'>): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}

/** A short human name such as `pods` or `deployments.apps`. */
export function resourceName(resource: Pick<Resource, 'group' | 'plural'>): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}

export interface ResourceDescription<T extends KubeObject> {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** The schema objects are validated with; without one, only metadata is (unstructured). */
  readonly schema?: z.ZodType<T>;
}

/**
 * Describes any resource, typically a custom resource.
 *
 * ```ts
 * const MyApple = kubeObject({ spec: z.looseObject({ color: z.string() }) });
 * type MyApple = z.infer<typeof MyApple>;
 * const MyApples = customResource({ group: 'stable.example.com', version: 'v1', plural: 'myapples',
 *   kind: 'MyApple', namespaced: true, schema: MyApple });
 * ```
 * Without `schema` the objects are unstructured {@link KubeObject}s: only their metadata is validated, so the resource
 * is a `Resource<KubeObject>`, and a type argument needs a schema (`customResource<MyApple>({ … })` without one would
 * type unvalidated objects as `MyApple`: a compile error).
 */
export function customResource<T extends KubeObject>(description: ResourceDescription<T> & { readonly schema: z.ZodType<T> }): Resource<T>;
export function customResource(description: ResourceDescription<KubeObject> & { readonly schema?: undefined }): Resource<KubeObject>;
export function customResource<T extends KubeObject>(description: ResourceDescription<T>): Resource<T> {
  const { group, version, plural, kind, namespaced } = description;
  if (!plural || !version || !kind) {
    throw new TypeError(`a resource needs a version, a plural and a kind (got ${JSON.stringify({ group, version, plural, kind })})`);
  }
  const schema = description.schema ?? (KubeObject as unknown as z.ZodType<T>);
  return Object.freeze({ group, version, plural, kind, namespaced, schema });
}

/**
 * A built-in kind: metadata is validated; the rest of the object is typed by
 * the client-node model but not deep-validated on every event (that would cost
 * more than the JSON parse itself). Use `customResource` with your own schema
 * to validate more.
 */
function builtin<T extends KubeObject>(group: string, version: string, plural: string, kind: string, namespaced: boolean): Resource<T> {
  return customResource<T>({ group, version, plural, kind, namespaced, schema: KubeObject as unknown as z.ZodType<T> });
}

export type Pod = Typed<V1Pod>;
export const Pod = builtin<Pod>('', 'v1', 'pods', 'Pod', true);
export type ConfigMap = Typed<V1ConfigMap>;
export const ConfigMap = builtin<ConfigMap>('', 'v1', 'configmaps', 'ConfigMap', true);
export type Secret = Typed<V1Secret>;
export const Secret = builtin<Secret>('', 'v1', 'secrets', 'Secret', true);
export type Service = Typed<V1Service>;
export const Service = builtin<Service>('', 'v1', 'services', 'Service', true);
export type Namespace = Typed<V1Namespace>;
export const Namespace = builtin<Namespace>('', 'v1', 'namespaces', 'Namespace', false);
export type Node = Typed<V1Node>;
export const Node = builtin<Node>('', 'v1', 'nodes', 'Node', false);
export type Event = Typed<CoreV1Event>;
export const Event = builtin<Event>('', 'v1', 'events', 'Event', true);
export type Deployment = Typed<V1Deployment>;
export const Deployment = builtin<Deployment>('apps', 'v1', 'deployments', 'Deployment', true);
export type ReplicaSet = Typed<V1ReplicaSet>;
export const ReplicaSet = builtin<ReplicaSet>('apps', 'v1', 'replicasets', 'ReplicaSet', true);
export type Lease = Typed<V1Lease>;
export const Lease = builtin<Lease>('coordination.k8s.io', 'v1', 'leases', 'Lease', true);

/** The built-in resources above, by their {@link resourceName} (`pods`, `deployments.apps`), as a trace or a CLI names them. */
const BUILTIN_BY_NAME: ReadonlyMap<string, Resource> = new Map(
  [Pod, ConfigMap, Secret, Service, Namespace, Node, Event, Deployment, ReplicaSet, Lease].map((r) => [resourceName(r), r as Resource]),
);

/** The built-in resource named `name` (its {@link resourceName}), or undefined. */
export function builtinResource(name: string): Resource | undefined {
  return BUILTIN_BY_NAME.get(name);
}

/**
 * The built-in resource of this `kind` (`ReplicaSet` → `replicasets.apps`), or undefined: the test kit places an
 * owner reference's `apiVersion` by it, so the table above stays the one list of the kinds the project knows.
 */
export function builtinResourceOfKind(kind: string): Resource | undefined {
  for (const resource of BUILTIN_BY_NAME.values()) if (resource.kind === kind) return resource;
  return undefined;
}

/** The object type a resource descriptor caches. */
export type ObjectOf<R> = R extends Resource<infer T> ? T : never;
