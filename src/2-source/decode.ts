import type { z } from 'zod';
import { InformerError, type ErrorPhase } from '../0-model/errors.ts';
import { isKubeObject } from '../0-model/fastCheck.ts';
import { KubeObject } from '../0-model/objects.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The metadata.resourceVersion of a raw object, if it has one. */
export function rawResourceVersion(raw: unknown): string | undefined {
  if (!isRecord(raw) || !isRecord(raw.metadata)) return undefined;
  const rv = raw.metadata.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}

/** The cache key of a raw object, as far as it can be read (for error reports). */
export function rawKey(raw: unknown): string | undefined {
  if (!isRecord(raw) || !isRecord(raw.metadata)) return undefined;
  const { name, namespace } = raw.metadata;
  if (typeof name !== 'string') return undefined;
  return typeof namespace === 'string' && namespace ? `${namespace}/${name}` : name;
}

/** Turns one raw object into a cached object, or says why it cannot. */
export type Decoder<T> = (raw: unknown, phase: ErrorPhase) => T | InformerError;

/**
 * A decoder from a zod schema and an optional transform (run after validation,
 * before caching: e.g. dropping `metadata.managedFields`). With `typeMeta`,
 * objects that lack `apiVersion`/`kind` (list items) get them. An object the schema
 * rejects becomes a `ValidationFailed` error carrying its key, resourceVersion
 * and zod's issues with their paths.
 */
export function decoder<T extends KubeObject>(
  schema: z.ZodType<T>,
  transform?: (object: T) => T,
  typeMeta?: { readonly apiVersion: string; readonly kind: string },
): Decoder<T> {
  // The metadata-only schema of built-in and unstructured resources has a
  // copy-free check; any other schema is zod's to run.
  const fast = (schema as unknown) === KubeObject;
  const accept = (object: T, raw: unknown, phase: ErrorPhase): T | InformerError => {
    if (!transform) return object;
    try {
      return transform(object);
    } catch (error) {
      return new InformerError('ValidationFailed', `transform threw for ${rawKey(raw) ?? 'an object'}: ${(error as Error).message}`, {
        phase,
        key: rawKey(raw),
        cause: error,
      });
    }
  };
  return (raw, phase) => {
    // Items of a built-in list carry no apiVersion/kind while watch objects do;
    // fill them in so every cached object looks the same (client-node#655).
    // The object is freshly parsed and ours, so it is completed in place.
    if (typeMeta && isRecord(raw)) {
      if (raw.apiVersion === undefined) raw.apiVersion = typeMeta.apiVersion;
      if (raw.kind === undefined) raw.kind = typeMeta.kind;
    }
    if (fast) {
      if (isKubeObject(raw)) return accept(raw as T, raw, phase);
      if (hasProtoKey(raw)) {
        return new InformerError('ValidationFailed', `${rawKey(raw) ?? 'an object'} has a "__proto__" key; skipped`, {
          phase,
          key: rawKey(raw),
          resourceVersion: rawResourceVersion(raw),
        });
      }
    }
    const result = schema.safeParse(raw);
    if (!result.success) {
      const key = rawKey(raw);
      const resourceVersion = rawResourceVersion(raw);
      const where = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
      return new InformerError('ValidationFailed', `${key ?? 'an object'} failed validation: ${where}`, {
        phase,
        key,
        resourceVersion,
        issues: result.error.issues,
      });
    }
    return accept(result.data, raw, phase);
  };
}

function hasProtoKey(raw: unknown): boolean {
  const own = (value: unknown) => isRecord(value) && Object.prototype.hasOwnProperty.call(value, '__proto__');
  return own(raw) || (isRecord(raw) && own(raw.metadata));
}
