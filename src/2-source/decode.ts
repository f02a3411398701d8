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

/**
 * Turns one raw object into a cached object, or says why it cannot (an error of `phase`). `whole`: the object is one
 * of a whole state's, a list page's item or a streaming list's initial event (whose errors still say `'watch'`), for
 * which the informer's wrapper may hand back the cached object of the same key and resourceVersion instead. A
 * decoder with a transform carries the {@link Renames} it made: a wrapper (the informer's reuse of unchanged objects)
 * hands them on.
 */
export type Decoder<T> = ((raw: unknown, phase: ErrorPhase, whole?: boolean) => T | InformerError) & { readonly renames?: Renames };

/**
 * The keys a transform renamed objects to, by their raw keys: a later version the transform throws for is matched to
 * the key the cache holds (a relist's rejected key, a rejected DELETED's key: docs/invalid-objects.md rules 4 and 5),
 * not to its raw key, under which nothing is cached. Only renamed objects are kept, each until its DELETED or until
 * two whole lists have gone by without it (deleted while no watch was open): at most the cache's renamed objects
 * and those deleted since the list before the last.
 */
export interface Renames {
  /** The key the cache files the object of `rawKey` under: the one a transform renamed it to, else `rawKey`. */
  cachedKey(rawKey: string): string;
  /** The object of `rawKey` was deleted: its rename is forgotten. */
  forget(rawKey: string): void;
  /** A whole list was read: renames neither made nor looked up since the list before are of objects gone. */
  listed(): void;
  /** How many renames are kept (for tests). */
  readonly size: number;
}

/** {@link Renames} in two generations: the current one, and the one before the last whole list. */
function renames(): Renames & { note(rawKey: string, key: string): void } {
  let newer = new Map<string, string>();
  let older = new Map<string, string>();
  return {
    note(rawKey, key) {
      if (rawKey === key) {
        if (newer.size > 0) newer.delete(rawKey);
        if (older.size > 0) older.delete(rawKey);
        return;
      }
      newer.set(rawKey, key);
      if (older.size > 0) older.delete(rawKey);
    },
    cachedKey(rawKey) {
      const key = newer.get(rawKey);
      if (key !== undefined) return key;
      const old = older.get(rawKey);
      if (old === undefined) return rawKey;
      older.delete(rawKey);
      newer.set(rawKey, old);
      return old;
    },
    forget(rawKey) {
      newer.delete(rawKey);
      older.delete(rawKey);
    },
    listed() {
      older = newer;
      newer = new Map();
    },
    get size() {
      return newer.size + older.size;
    },
  };
}

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
  const renamed = transform ? renames() : undefined;
  const accept = (object: T, raw: unknown, phase: ErrorPhase): T | InformerError => {
    if (!transform) return object;
    try {
      const transformed = transform(object);
      // The cache files an object under its key: the transformed object's (a rename moves it, as in
      // client-go's TestSharedInformerTransformer), so it must have one.
      const key = rawKey(transformed);
      if (key === undefined) throw new TypeError('it returned an object without metadata.name');
      // Most transforms keep the name (stripManagedFields): no second key is made for them.
      const from = sameName(raw, transformed) ? key : rawKey(raw);
      if (from !== undefined) renamed!.note(from, key);
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
  const decode = (raw: unknown, phase: ErrorPhase): T | InformerError => {
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
  return renamed ? Object.assign(decode, { renames: renamed as Renames }) : decode;
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

/** Whether two objects have the same metadata.name and metadata.namespace (a transform's output has metadata). */
function sameName(raw: unknown, transformed: KubeObject): boolean {
  const m = isRecord(raw) ? raw.metadata : undefined;
  return isRecord(m) && m.name === transformed.metadata.name && (m.namespace ?? '') === (transformed.metadata.namespace ?? '');
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
