/**
 * List continue tokens, byte-compatible with kube-apiserver's etcd3 store:
 * unpadded base64url of `{"v":"meta.k8s.io/v1","rv":N,"start":"<next key>"}` (02d–02f, 04f).
 */
import { badRequest } from './status.ts';

export interface ContinueToken {
  /** Revision of the first page; -1 for an inconsistent continuation at the latest revision (04f). */
  rv: number;
  /** The key to continue from (inclusive): the last returned key plus `\u0000`. */
  start: string;
}

/** Go's encoding/json escapes `<`, `>`, `&` and U+2028/9; `\u0000` is written as such. */
function goJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function encodeContinue(token: ContinueToken): string {
  const json = goJson({ v: 'meta.k8s.io/v1', rv: token.rv, start: token.start });
  return Buffer.from(json, 'utf8').toString('base64url');
}

export function decodeContinue(raw: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data or invalid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) throw badRequest('continue key is not valid: not an object');
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (p.v !== 'meta.k8s.io/v1') throw badRequest('continue key is not valid: server does not recognize this encoded key');
  if (typeof p.rv !== 'number' || !Number.isInteger(p.rv) || typeof p.start !== 'string' || p.start === '') {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  if (p.start.includes('..') || p.start.startsWith('/')) {
    throw badRequest('continue key is not valid: key cannot contain a relative path');
  }
  return { rv: p.rv, start: p.start };
}
