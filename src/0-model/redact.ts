import { createHmac, randomBytes } from 'node:crypto';
import type { KubeObject } from './objects.ts';

/** The annotation `kubectl apply` writes: for a Secret it holds the data in clear. */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The resources whose values are secret: core Secrets. */
export function isSecretResource(resource: { readonly group: string; readonly plural: string }): boolean {
  return resource.group === '' && resource.plural === 'secrets';
}

/**
 * An object without a `kind` shaped like a Secret: a string `type` beside `data` or `stringData` (a real API server
 * always sets a Secret's `type`). List items come without their kind: without this, a Secret listed under another
 * resource name would show its values in clear. A ConfigMap has no `type`; an object of another resource this shape
 * matches loses its values, which is the safe side to err on.
 */
export function shapedLikeSecret(object: object): boolean {
  const shape = object as { kind?: unknown; type?: unknown; data?: unknown; stringData?: unknown };
  // `kind` and `type` first: a lazily decoded object's `data` (a ConfigMap's) is parsed only when it may be a Secret's.
  if (shape.kind !== undefined || typeof shape.type !== 'string') return false;
  const values = (v: unknown) => typeof v === 'object' && v !== null;
  return values(shape.data) || values(shape.stringData);
}

/**
 * The one rule of "is this object a Secret's, whose values are hidden", for `record` (the trace), `watch` and
 * `replay`: an object (with metadata) of a resource whose values are secret (`secret: true`, {@link isSecretResource}),
 * one with `kind: Secret`, or one {@link shapedLikeSecret} unless the caller knows its resource holds none
 * (`secret: false`; `undefined`, not known, is the default).
 */
export function isSecretObject(object: unknown, secret?: boolean): boolean {
  if (typeof object !== 'object' || object === null) return false;
  const metadata = (object as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return false;
  return secret === true || (object as { kind?: unknown }).kind === 'Secret' || (secret === undefined && shapedLikeSecret(object));
}

/** `"kind":"Secret"` in JSON text: kubectl writes it compact; a space about the colon (a hand-written annotation) too. */
const SECRET_KIND = /"kind"\s*:\s*"Secret"/;

/**
 * Whether the last-applied annotation of `object` is a Secret's (its JSON says `"kind":"Secret"`): it then holds the
 * data in clear, whatever `object` is taken for (a metadata-only object is a PartialObjectMetadata, of a resource
 * perhaps not named `secrets`, with neither the kind nor the shape {@link isSecretObject} knows). Cheap on the hot
 * path: a substring test, then a pattern on that one annotation; nothing is parsed. A reference to a Secret in another
 * object's last-applied (`{"kind":"Secret","name":…}`) hides that annotation too: the safe side.
 */
export function lastAppliedOfSecret(object: unknown): boolean {
  if (typeof object !== 'object' || object === null) return false;
  const metadata = (object as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return false;
  const annotations = (metadata as { annotations?: unknown }).annotations;
  if (typeof annotations !== 'object' || annotations === null) return false;
  const text = (annotations as Record<string, unknown>)[LAST_APPLIED];
  return typeof text === 'string' && text.includes('"Secret"') && SECRET_KIND.test(text);
}

/** A keyed hash of a value, as `<redacted:HASH>` (see {@link secretRedactor}). */
function hasher(key: Uint8Array): (value: unknown) => string {
  return (value) =>
    `<redacted:${createHmac('sha256', key)
      .update(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))
      .digest('hex')
      .slice(0, 12)}>`;
}

/** `copy` (a copy of `object`) with `object`'s last-applied annotation, if it has one, replaced by its hash. */
function hideLastApplied(object: KubeObject, copy: Record<string, unknown>, hide: (value: unknown) => string): Record<string, unknown> {
  const annotations = object.metadata.annotations as Record<string, unknown> | undefined;
  if (annotations && LAST_APPLIED in annotations) {
    copy['metadata'] = { ...object.metadata, annotations: { ...annotations, [LAST_APPLIED]: hide(annotations[LAST_APPLIED]) } };
  }
  return copy;
}

/**
 * Replaces secret values by `<redacted:HASH>`, where HASH is a keyed hash
 * (HMAC-SHA-256, 12 hex digits) under a key drawn at start and never shown:
 * equal values hash equal within one run, so a change, a rotation back, or two
 * Secrets sharing a value can be seen, yet no value can be guessed offline.
 */
export function secretRedactor(key: Uint8Array = randomBytes(32)): (object: KubeObject) => KubeObject {
  const hide = hasher(key);
  const hideValues = (map: unknown) => {
    if (typeof map !== 'object' || map === null || Array.isArray(map)) return map === undefined ? undefined : hide(map);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(map))
      Object.defineProperty(out, k, { value: hide(v), enumerable: true, writable: true, configurable: true });
    return out;
  };
  return (object) => {
    const copy: Record<string, unknown> = { ...object };
    for (const field of ['data', 'stringData']) if (field in copy) copy[field] = hideValues(copy[field]);
    return hideLastApplied(object, copy, hide) as KubeObject;
  };
}

/** What a recorder or a printer hides of the objects it is given (see {@link secretHiding}). */
export interface SecretHiding {
  /** Whether `hide` changes `object`. */
  readonly hides: (object: unknown) => boolean;
  /** `object` with its secret values hashed, or `object` itself when it holds none. */
  readonly hide: <T>(object: T) => T;
}

/**
 * The one home of what is hidden, for `record` (the trace), `watch` and `replay`: a Secret's values ({@link
 * isSecretObject} with `secret`: `data`, `stringData`, the last-applied annotation; {@link secretRedactor}), and of any
 * other object the last-applied annotation when it is a Secret's ({@link lastAppliedOfSecret}: a metadata-only
 * Secret's). Hashes are keyed by `key`: share it to keep equal values equal across several hidings of one run.
 */
export function secretHiding(secret?: boolean, key: Uint8Array = randomBytes(32)): SecretHiding {
  const values = secretRedactor(key);
  const hash = hasher(key);
  const hides = (object: unknown) => isSecretObject(object, secret) || lastAppliedOfSecret(object);
  const hide = <T>(object: T): T => {
    if (isSecretObject(object, secret)) return values(object as KubeObject) as T;
    if (!lastAppliedOfSecret(object)) return object;
    return hideLastApplied(object as KubeObject, { ...(object as KubeObject) }, hash) as T;
  };
  return { hides, hide };
}
