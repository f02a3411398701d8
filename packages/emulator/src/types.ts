/**
 * Shared types of the in-process Kubernetes API-server emulator.
 */

/** A plain JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A stored Kubernetes object: plain JSON with `metadata`. */
export interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata?: StoredObjectMeta;
  [key: string]: unknown;
}

export interface StoredObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: unknown[];
  finalizers?: string[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** Group, version and plural resource name, e.g. `{ group: '', version: 'v1', resource: 'pods' }`. */
export interface Gvr {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/**
 * Anything naming a resource: a {@link Gvr}, an object with `plural` instead of `resource`
 * (the shape of rx-informer's `Resource`), or a string: `pods`, `deployments.apps`,
 * `myapples.stable.example.com`, or a short name such as `cm`.
 */
export type GvrLike = Gvr | { readonly group: string; readonly version: string; readonly plural: string } | string;

/** A watch event's type as it travels on the wire (the pipeline's own `WatchEventType` is lower-case: `'added'` …). */
export type WireEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** The OpenAPI v3 subset enforced for custom resources. */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  enum?: readonly Json[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  format?: string;
  description?: string;
  default?: Json;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

/** What {@link ApiServer.registerCustomResource} takes. */
export interface CustomResourceDefinitionSpec {
  group: string;
  version: string;
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: readonly string[];
  categories?: readonly string[];
  namespaced?: boolean;
  /**
   * The `openAPIV3Schema` of the whole object (`{type:'object', properties:{spec:{…}}}`).
   * Unknown fields are pruned and violations are rejected with 422, like a structural CRD schema.
   * Omitted: anything goes (`x-kubernetes-preserve-unknown-fields`).
   */
  schema?: JsonSchema;
  /** Enables the `/status` subresource (then a main-resource PUT keeps the old status). */
  subresources?: { readonly status?: boolean };
}
