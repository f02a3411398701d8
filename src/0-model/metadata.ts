import { z } from 'zod';
import { KubeObject, ObjectMeta } from './objects.ts';
import { apiVersionOf, type Resource } from './resources.ts';

/** The apiVersion and kind of every metadata-only object. */
export const PARTIAL_OBJECT_METADATA = { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata' } as const;

/**
 * An object's metadata and nothing else, as kube-apiserver answers
 * `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`
 * (client-go's metadatainformer, controller-runtime's OnlyMetadata): owner
 * references, labels, annotations, finalizers, deletion timestamp, … but no
 * spec, status or data.
 */
export const PartialObjectMetadata = z.object({
  apiVersion: z.literal(PARTIAL_OBJECT_METADATA.apiVersion),
  kind: z.literal(PARTIAL_OBJECT_METADATA.kind),
  metadata: ObjectMeta,
});
export type PartialObjectMetadata = z.infer<typeof PartialObjectMetadata>;

/**
 * The same resource, asked for metadata only: lists and watches send
 * `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json`
 * (…`as=PartialObjectMetadata`… for watches) and the informer caches
 * {@link PartialObjectMetadata}s, with the same events, store, indexers and
 * controllers. A server that cannot answer so (406, or full objects) is
 * read as plain JSON and cut down to metadata on arrival.
 *
 * ```ts
 * const pods = informer(kc, metadataOnly(Pod));   // Informer<PartialObjectMetadata>
 * ```
 */
export function metadataOnly(
  resource: Pick<Resource, 'group' | 'version' | 'plural' | 'kind' | 'namespaced'>,
): Resource<PartialObjectMetadata> {
  const { group, version, plural, kind, namespaced } = resource;
  // KubeObject is the copy-free metadata check every built-in uses; the objects carry nothing else.
  return Object.freeze({
    group,
    version,
    plural,
    kind,
    namespaced,
    schema: KubeObject as unknown as z.ZodType<PartialObjectMetadata>,
    metadataOnly: true,
  });
}

/** True for a resource made by {@link metadataOnly}. */
export function isMetadataOnly(resource: Pick<Resource, 'metadataOnly'>): boolean {
  return resource.metadataOnly === true;
}

/** The apiVersion and kind the objects of a resource carry: the resource's own, or PartialObjectMetadata's. */
export function typeMetaOf(resource: Pick<Resource, 'group' | 'version' | 'kind' | 'metadataOnly'>): {
  readonly apiVersion: string;
  readonly kind: string;
} {
  return resource.metadataOnly === true ? PARTIAL_OBJECT_METADATA : { apiVersion: apiVersionOf(resource), kind: resource.kind };
}

/** Cuts a full object down to its PartialObjectMetadata (for servers that answered with full objects). */
export function toPartialObjectMetadata(object: unknown): unknown {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return object;
  const o = object as { kind?: unknown; metadata?: unknown };
  if (o.kind === PARTIAL_OBJECT_METADATA.kind && (object as { apiVersion?: unknown }).apiVersion === PARTIAL_OBJECT_METADATA.apiVersion)
    return object;
  return { apiVersion: PARTIAL_OBJECT_METADATA.apiVersion, kind: PARTIAL_OBJECT_METADATA.kind, metadata: o.metadata };
}
