import { createHmac, randomBytes } from 'node:crypto';
import type { KubeObject } from './objects.ts';

/** The annotation `kubectl apply` writes: for a Secret it holds the data in clear. */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The resources whose values are secret: core Secrets. */
export function isSecretResource(resource: { readonly group: string; readonly plural: string }): boolean {
  return resource.group === '' && resource.plural === 'secrets';
}

/**
 * Replaces secret values by `<redacted:HASH>`, where HASH is a keyed hash
 * (HMAC-SHA-256, 12 hex digits) under a key drawn at start and never shown:
 * equal values hash equal within one run, so a change, a rotation back, or two
 * Secrets sharing a value can be seen, yet no value can be guessed offline.
 */
export function secretRedactor(key: Uint8Array = randomBytes(32)): (object: KubeObject) => KubeObject {
  const hide = (value: unknown) =>
    `<redacted:${createHmac('sha256', key)
      .update(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))
      .digest('hex')
      .slice(0, 12)}>`;
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
    const annotations = object.metadata.annotations as Record<string, unknown> | undefined;
    if (annotations && LAST_APPLIED in annotations) {
      copy['metadata'] = { ...object.metadata, annotations: { ...annotations, [LAST_APPLIED]: hide(annotations[LAST_APPLIED]) } };
    }
    return copy as KubeObject;
  };
}
