/**
 * A hand-written check that accepts exactly what the `KubeObject` zod schema
 * accepts, without building a copy of the object (zod's parse returns a new
 * object). Used on the hot path for built-in and unstructured resources: when
 * it says yes the object is cached as parsed; when it says no, zod runs to
 * produce the issues. A property test keeps the two in agreement.
 *
 * It also rejects an own `__proto__` key at the top level, in metadata, or in its labels or annotations, which
 * JSON.parse creates as plain data but which would surprise code that copies
 * objects with assignment; zod drops such keys silently, we report them.
 */

import { isRecord } from '../util/isRecord.ts';

const hasOwn = Object.prototype.hasOwnProperty;

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

function optionalNullableString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

/** A map of strings; `null` is an empty map, as Kubernetes decodes it. */
function stringRecord(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (!isRecord(value) || hasOwn.call(value, '__proto__')) return false;
  for (const key in value) if (typeof value[key] !== 'string') return false;
  return true;
}

function ownerReferences(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (!Array.isArray(value)) return false;
  for (const ref of value) {
    if (!isRecord(ref)) return false;
    if (typeof ref.apiVersion !== 'string' || typeof ref.kind !== 'string' || typeof ref.name !== 'string' || typeof ref.uid !== 'string')
      return false;
    if (ref.controller !== undefined && typeof ref.controller !== 'boolean') return false;
    if (ref.blockOwnerDeletion !== undefined && typeof ref.blockOwnerDeletion !== 'boolean') return false;
  }
  return true;
}

/**
 * Members of metadata whose check a decoder may vouch for (bits of what a {@link Vouch} answers): a map of strings with
 * no own `__proto__` key (labels, annotations), a list of owner references each with its four strings.
 */
export const VOUCHED_LABELS = 1;
export const VOUCHED_ANNOTATIONS = 2;
export const VOUCHED_OWNER_REFERENCES = 4;

/**
 * Which of metadata's members (the `VOUCHED_*` bits) are known to pass their check as `metadata` is now, without reading
 * them: the protobuf transport's lazy objects, whose shape its walk and schema guarantee (1-transport/protobuf/lazy.ts's
 * `vouchedMembers`). Asked of the same metadata object the check reads; 0 for anything it did not build.
 */
export type Vouch = (metadata: Record<string, unknown>) => number;

/**
 * True when `value` is a valid `KubeObject` (see `src/0-model/objects.ts`). With `vouch`, the members of metadata it
 * vouches for are not read (a lazy member read here would be decoded for nothing); every other check is made.
 */
export function isKubeObject(value: unknown, vouch?: Vouch): boolean {
  if (!isRecord(value) || hasOwn.call(value, '__proto__')) return false;
  if (!optionalString(value.apiVersion) || !optionalString(value.kind)) return false;
  const m = value.metadata;
  if (!isRecord(m) || hasOwn.call(m, '__proto__')) return false;
  if (typeof m.name !== 'string' || m.name.length === 0) return false;
  if (!optionalString(m.namespace) || !optionalString(m.uid) || !optionalString(m.resourceVersion)) return false;
  if (m.generation !== undefined && (typeof m.generation !== 'number' || Number.isNaN(m.generation))) return false;
  if (!optionalNullableString(m.creationTimestamp) || !optionalNullableString(m.deletionTimestamp)) return false;
  const known = vouch === undefined ? 0 : vouch(m);
  return (
    ((known & VOUCHED_LABELS) !== 0 || stringRecord(m.labels)) &&
    ((known & VOUCHED_ANNOTATIONS) !== 0 || stringRecord(m.annotations)) &&
    ((known & VOUCHED_OWNER_REFERENCES) !== 0 || ownerReferences(m.ownerReferences))
  );
}
