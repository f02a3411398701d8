/**
 * Content negotiation of GET responses, as far as kube-apiserver's JSON goes:
 * `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json`
 * (what client-go's metadata client sends, 10a, 10d, 10e) picks the metadata-only
 * shape; `application/vnd.kubernetes.protobuf` picks protobuf for the kinds the emulator encodes
 * (protobuf/bodies.ts); clauses it cannot serve (protobuf of other kinds, YAML, `as=Table`, …) are
 * skipped; when none is left, 406 NotAcceptable like 10c.
 */
import { PROTOBUF_MEDIA_TYPE } from './protobuf/bodies.ts';
import { ApiError, failure } from './status.ts';

/** What a GET answers with: full objects or PartialObjectMetadata in JSON, or full objects in protobuf. */
export type Shape = 'full' | 'metadata' | 'protobuf';

/** What is being read: one object (or a watch, whose events are objects), or a list. */
export type Target = 'object' | 'list';

/** 10c, word for word. */
export const NOT_ACCEPTABLE_MESSAGE =
  'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';

export function notAcceptable(): ApiError {
  return new ApiError(failure(406, NOT_ACCEPTABLE_MESSAGE, 'NotAcceptable'));
}

/**
 * The shape to answer `accept` with, or a 406. `partial: false` plays a server
 * without PartialObjectMetadata (before 1.15): `as=` clauses are skipped.
 */
export function negotiate(accept: string | undefined, target: Target, partial = true, protobuf = false): Shape | ApiError {
  if (accept === undefined || accept.trim() === '') return 'full';
  for (const clause of accept.split(',')) {
    const [type = '', ...rawParams] = clause.split(';').map((p) => p.trim());
    const mediaType = type.toLowerCase();
    const params = new Map<string, string>();
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
    }
    const as = params.get('as');
    // Protobuf for the kinds the emulator encodes (issue #36), full objects only; else skipped, as YAML is.
    if (mediaType === PROTOBUF_MEDIA_TYPE && protobuf && as === undefined) return 'protobuf';
    if (mediaType !== 'application/json' && mediaType !== 'application/*' && mediaType !== '*/*') continue;
    if (as === undefined) return 'full';
    if (!partial || params.get('g') !== 'meta.k8s.io' || (params.get('v') !== 'v1' && params.get('v') !== 'v1beta1')) continue;
    if (as === (target === 'list' ? 'PartialObjectMetadataList' : 'PartialObjectMetadata')) return 'metadata';
  }
  return notAcceptable();
}

/**
 * Whether an error answers in protobuf: its Accept's first clause asks protobuf, and the kind is one the emulator
 * encodes or nothing else in Accept could be served (10f: a 404 of a ConfigMap; 10g: the 406 of a custom resource
 * asked protobuf only, both protobuf Status bodies).
 */
export function errorsInProtobuf(accept: string | undefined, protobuf: boolean): boolean {
  if (accept === undefined) return false;
  const types = accept.split(',').map((clause) => (clause.split(';')[0] ?? '').trim().toLowerCase());
  if (types[0] !== PROTOBUF_MEDIA_TYPE) return false;
  return protobuf || !types.some((t) => t === 'application/json' || t === 'application/*' || t === '*/*');
}
