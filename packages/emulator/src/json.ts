/**
 * JSON helpers: cloning, equality, key ordering, and the two patch formats
 * (RFC 7386 merge patch, RFC 6902 JSON patch).
 */
import { badRequest, invalidPatch, unprocessable } from './status.ts';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A deep copy of plain JSON data. */
export function clone<T>(value: T): T {
  if (value === undefined) return value;
  return JSON.parse(JSON.stringify(value)) as T;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    for (const k of ka) if (!deepEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/** A copy with the keys of every object sorted, as the API server encodes custom resources. */
export function sortKeysDeep<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => sortKeysDeep(v)) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      if (value[k] !== undefined) out[k] = sortKeysDeep(value[k]);
    }
    return out as T;
  }
  return value;
}

/** Reorders the keys of `obj`: those in `order` first (in that order), then the rest as they were. */
export function orderKeys<T extends Record<string, unknown>>(obj: T, order: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const k of order) if (obj[k] !== undefined) out[k] = obj[k];
  for (const k of Object.keys(obj)) if (!(k in out) && obj[k] !== undefined) out[k] = obj[k];
  return out as T;
}

/** RFC 7386 JSON merge patch. Returns a new value; `target` is not modified. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw invalidPatch(`invalid JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getAt(doc: unknown, tokens: string[]): unknown {
  let cur = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isPlainObject(cur)) cur = cur[t];
    else return undefined;
  }
  return cur;
}

/** RFC 6902 JSON patch. Returns a new document; `doc` is not modified. */
export function jsonPatch(doc: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let root = clone(doc);
  const apply = (path: string, fn: (parent: unknown, key: string) => void): void => {
    const tokens = parsePointer(path);
    const last = tokens.pop();
    if (last === undefined) throw invalidPatch('the root of the document cannot be the target of this operation');
    const parent = getAt(root, tokens);
    if (!Array.isArray(parent) && !isPlainObject(parent)) {
      throw invalidPatch(`doc is missing path: "${path}": missing value`);
    }
    fn(parent, last);
  };
  const add = (path: string, value: unknown): void => {
    if (path === '') {
      root = clone(value);
      return;
    }
    apply(path, (parent, key) => {
      if (Array.isArray(parent)) {
        const idx = key === '-' ? parent.length : Number(key);
        if (!Number.isInteger(idx) || idx < 0 || idx > parent.length) {
          throw invalidPatch(`Unable to access invalid index: ${key}: invalid index referenced`);
        }
        parent.splice(idx, 0, clone(value));
      } else (parent as Record<string, unknown>)[key] = clone(value);
    });
  };
  const remove = (path: string): unknown => {
    let removed: unknown;
    apply(path, (parent, key) => {
      if (Array.isArray(parent)) {
        const idx = Number(key);
        if (!Number.isInteger(idx) || idx < 0 || idx >= parent.length) {
          throw invalidPatch(`Unable to remove nonexistent key: ${key}: missing value`);
        }
        removed = parent.splice(idx, 1)[0];
      } else {
        const obj = parent as Record<string, unknown>;
        if (!(key in obj)) throw invalidPatch(`Unable to remove nonexistent key: ${key}: missing value`);
        removed = obj[key];
        delete obj[key];
      }
    });
    return removed;
  };
  for (const raw of ops) {
    if (!isPlainObject(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string') {
      throw invalidPatch('invalid JSON patch operation');
    }
    const op = raw as unknown as JsonPatchOp;
    switch (op.op) {
      case 'add':
        add(op.path, op.value);
        break;
      case 'remove':
        remove(op.path);
        break;
      case 'replace':
        if (op.path === '') root = clone(op.value);
        else {
          remove(op.path);
          add(op.path, op.value);
        }
        break;
      case 'move': {
        const v = remove(op.from ?? '');
        add(op.path, v);
        break;
      }
      case 'copy':
        add(op.path, getAt(root, parsePointer(op.from ?? '')));
        break;
      case 'test':
        if (!deepEqual(getAt(root, parsePointer(op.path)), op.value)) {
          throw unprocessable(`the server rejected our request due to an error in our request`, 'testing value failed');
        }
        break;
      default:
        throw invalidPatch(`Unexpected kind: ${op.op}`);
    }
  }
  return root;
}
