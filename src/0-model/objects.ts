import type { V1ObjectMeta } from '@kubernetes/client-node';
import { z } from 'zod';

/**
 * Turns a `@kubernetes/client-node` model type into what actually arrives on
 * the wire: the generated models declare timestamps as `Date`, but JSON
 * carries strings, and rx-informer never rewrites objects. (client-node's own
 * informer mixes both, see kubernetes-client/javascript#655.)
 */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

/** An owner reference, as far as the informer and controllers rely on it. */
export const OwnerReference = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});
export type OwnerReference = z.infer<typeof OwnerReference>;

/**
 * The metadata every cached object must have. This is what the store, its
 * indexers, predicates and controllers read; it is always validated.
 * Unknown fields (managedFields, finalizers, …) pass through untouched.
 * `null` for an empty map or list (`"labels": null`) is accepted as
 * Kubernetes' own decoders accept it (a nil map), and kept as sent.
 */
export const ObjectMeta = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.string().nullable().optional(),
  deletionTimestamp: z.string().nullable().optional(),
  labels: z.record(z.string(), z.string()).nullable().optional(),
  annotations: z.record(z.string(), z.string()).nullable().optional(),
  ownerReferences: z.array(OwnerReference).nullable().optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

/** The shape every Kubernetes object shares: validated metadata, anything else passes through. */
export const KubeObject = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
});
export type KubeObject = z.infer<typeof KubeObject>;

/**
 * A schema for a custom resource: validated metadata plus the fields you
 * describe; top-level fields you do not describe pass through. Inside your
 * own shapes zod's rules apply: `z.object` drops undeclared fields,
 * `z.looseObject` keeps them (use it to cache objects as the server sent them).
 *
 * ```ts
 * const MyApple = kubeObject({ spec: z.looseObject({ color: z.string(), quantity: z.number().int().min(1) }) });
 * type MyApple = z.infer<typeof MyApple>;
 * ```
 */
export function kubeObject<const Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  return KubeObject.extend(shape);
}

/**
 * A built-in object's metadata: ours where we validate (name required, labels
 * nullable, …), client-node's `V1ObjectMeta` as JSON for the rest, so
 * `finalizers`, `generateName` and `managedFields` are typed, not `unknown`.
 */
export type TypedMeta = ObjectMeta & Omit<Wire<V1ObjectMeta>, keyof typeof ObjectMeta.shape>;

/**
 * A built-in object typed by its client-node model: metadata is ours (validated,
 * required; the model's other metadata fields typed as JSON), everything else
 * is the model's shape as JSON.
 */
export type Typed<Model> = Omit<Wire<Model>, 'metadata'> & { metadata: TypedMeta };

export { keyOf, splitKey } from './keys.ts';
