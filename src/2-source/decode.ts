import type { z } from 'zod';
import { InformerError, describeThrown, type ErrorPhase } from '../0-model/errors.ts';
import { isKubeObject } from '../0-model/isKubeObject.ts';
import { KubeObject } from '../0-model/objects.ts';
import { isRecord } from '../util/isRecord.ts';
import { vouchedMembers } from '../1-transport/protobuf/lazy.ts';
import { rawKey, rawResourceVersion } from '../0-model/keys.ts';

export { rawKey, rawResourceVersion };

/** The errors of objects of another kind than the decoder's: skipped altogether (see {@link isOtherKind}). */
const otherKind = new WeakSet<InformerError>();

/**
 * True for the error of an object whose apiVersion or kind is not the resource's. The
 * reflector skips such a watch event without recording its resourceVersion, counting it,
 * or deleting anything (client-go's watchHandler does the same).
 */
export function isOtherKind(error: InformerError): boolean {
  return otherKind.has(error);
}

/** Turns one raw object into a cached object, or says why it cannot. */
export type Decoder<T> = (raw: unknown, phase: ErrorPhase) => T | InformerError;

/** A zod-shaped issue of our own (wrong kind, "__proto__" key, a schema that threw), so every ValidationFailed carries issues. */
function issue(path: readonly PropertyKey[], message: string, input: unknown): z.core.$ZodIssue {
  return { code: 'custom', path: [...path], message, input } as z.core.$ZodIssue;
}

function rejected(raw: unknown, phase: ErrorPhase, why: string, issues: readonly z.core.$ZodIssue[], cause?: unknown): InformerError {
  const key = rawKey(raw);
  return new InformerError('ValidationFailed', `${key ?? 'an object'} ${why}`, {
    phase,
    key,
    resourceVersion: rawResourceVersion(raw),
    issues,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A decoder from a zod schema and an optional transform (run after validation,
 * before caching: e.g. dropping `metadata.managedFields`; an object it renames is
 * cached under its new key, as in client-go). With `typeMeta`,
 * objects that lack `apiVersion`/`kind` (list items) get them, and an object of
 * another kind is rejected. An object the schema rejects (or whose schema
 * throws) becomes a `ValidationFailed` error carrying its key, resourceVersion
 * and zod's issues with their paths; a transform that throws, a `TransformError`.
 * User code never throws out of a decoder.
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
      const transformed = transform(object);
      // The cache files an object under its key: the transformed object's (a rename moves it, as in
      // client-go's TestSharedInformerTransformer), so it must have one.
      if (rawKey(transformed) === undefined) throw new TypeError('it returned an object without metadata.name');
      return transformed;
    } catch (error) {
      const key = rawKey(raw);
      return new InformerError('TransformError', `transform threw for ${key ?? 'an object'}: ${describeThrown(error)}`, {
        phase,
        key,
        resourceVersion: rawResourceVersion(raw),
        cause: error,
      });
    }
  };
  return (raw, phase) => {
    const wrongKind = typeMeta ? completeTypeMeta(raw, phase, typeMeta) : undefined;
    if (wrongKind) return wrongKind;
    // isKubeObject accepts no own "__proto__" key where protoKeyPath looks (the object, its metadata, labels and
    // annotations), so an object it accepts needs no search for one: the search is for the objects it refuses.
    // Metadata's members the protobuf decode vouches for as they are now (unread lazy labels, annotations and owner
    // references whose bytes it looked at) are not read: any other object, a JSON one included, is checked whole.
    if (fast && isKubeObject(raw, vouchedMembers)) return accept(raw as T, raw, phase);
    const path = protoKeyPath(raw);
    if (path) {
      return rejected(raw, phase, 'has a "__proto__" key; skipped', [issue(path, 'a "__proto__" key', undefined)]);
    }
    let result: ReturnType<typeof schema.safeParse>;
    try {
      result = schema.safeParse(raw);
    } catch (error) {
      // A refinement (or a lazily decoded member read by one) threw: the object is invalid, not the informer.
      const message = describeThrown(error);
      const issues = [issue([], `the schema threw: ${message}`, undefined)];
      return rejected(raw, phase, `failed validation: the schema threw: ${message}`, issues, error);
    }
    if (!result.success) {
      const where = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      return rejected(raw, phase, `failed validation: ${where}`, result.error.issues);
    }
    return accept(result.data, raw, phase);
  };
}

/**
 * Items of a built-in list carry no apiVersion/kind while watch objects do; fills them in so
 * every cached object looks the same (client-node#655). The object is freshly parsed and ours,
 * so it is completed in place. An object of another type is an error (client-go's reflector
 * skips it; we report it too, and never cache it).
 */
function completeTypeMeta(
  raw: unknown,
  phase: ErrorPhase,
  typeMeta: { readonly apiVersion: string; readonly kind: string },
): InformerError | undefined {
  if (!isRecord(raw)) return undefined;
  if (raw.apiVersion === undefined) raw.apiVersion = typeMeta.apiVersion;
  if (raw.kind === undefined) raw.kind = typeMeta.kind;
  if (raw.apiVersion === typeMeta.apiVersion && raw.kind === typeMeta.kind) return undefined;
  const path = raw.apiVersion !== typeMeta.apiVersion ? 'apiVersion' : 'kind';
  const expected = `${typeMeta.apiVersion} ${typeMeta.kind}`;
  const got = `${String(raw.apiVersion)} ${String(raw.kind)}`;
  const error = rejected(raw, phase, `is ${article(got)} ${got}, not ${article(expected)} ${expected}; skipped`, [
    issue([path], `expected ${expected}, got ${got}`, raw[path]),
  ]);
  otherKind.add(error);
  return error;
}

/** "an" before a vowel ("an apps/v1 Deployment"), else "a" ("a v1 ConfigMap"). */
function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

function hasOwnProto(value: unknown): boolean {
  return isRecord(value) && Object.prototype.hasOwnProperty.call(value, '__proto__');
}

/** Where an own `__proto__` key sits: the object, its metadata, or metadata's labels or annotations. */
function protoKeyPath(raw: unknown): string[] | undefined {
  if (!isRecord(raw)) return undefined;
  if (hasOwnProto(raw)) return ['__proto__'];
  const m = raw.metadata;
  if (!isRecord(m)) return undefined;
  if (hasOwnProto(m)) return ['metadata', '__proto__'];
  for (const map of ['labels', 'annotations'] as const) if (hasOwnProto(m[map])) return ['metadata', map, '__proto__'];
  return undefined;
}
