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

/** True when `value` is a valid `KubeObject` (see `src/0-model/objects.ts`). */
export function isKubeObject(value: unknown): boolean {
  if (!isRecord(value) || hasOwn.call(value, '__proto__')) return false;
  if (!optionalString(value.apiVersion) || !optionalString(value.kind)) return false;
  const m = value.metadata;
  if (!isRecord(m) || hasOwn.call(m, '__proto__')) return false;
  if (typeof m.name !== 'string' || m.name.length === 0) return false;
  if (!optionalString(m.namespace) || !optionalString(m.uid) || !optionalString(m.resourceVersion)) return false;
  if (m.generation !== undefined && (typeof m.generation !== 'number' || Number.isNaN(m.generation))) return false;
  if (!optionalNullableString(m.creationTimestamp) || !optionalNullableString(m.deletionTimestamp)) return false;
  return stringRecord(m.labels) && stringRecord(m.annotations) && ownerReferences(m.ownerReferences);
}
