/** One changed field between two versions of an object. */
export interface Change {
  /** `spec.replicas`, `metadata.labels.app`, `spec.containers[0].image` */
  readonly path: string;
  /** Absent when the field was added. */
  readonly old?: unknown;
  /** Absent when the field was removed. */
  readonly new?: unknown;
}

/** Fields whose change is noise for a human watching a cluster. */
export const NOISE: readonly string[] = ['metadata.resourceVersion', 'metadata.managedFields'];

/**
 * How deep the diff descends, and how deep a value is kept in output. Objects
 * come from the network: anything deeper is compared without recursion and
 * shown as {@link TOO_DEEP}, so a hostile object cannot exhaust the stack
 * (V8's own JSON.stringify throws at about 4,500 levels).
 */

import { isRecord } from '../util/isRecord.ts';
export const MAX_DEPTH = 64;

/** Stands for a value (or the part of one) nested deeper than {@link MAX_DEPTH}. */
export const TOO_DEEP = `<nested deeper than ${MAX_DEPTH} levels>`;


function join(path: string, key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
}

/** Deep equality of JSON data, with an explicit stack instead of recursion. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
      continue;
    }
    if (isRecord(x) && isRecord(y)) {
      const kx = Object.keys(x).filter((k) => x[k] !== undefined);
      const ky = Object.keys(y).filter((k) => y[k] !== undefined);
      if (kx.length !== ky.length) return false;
      for (const k of kx) {
        if (!Object.hasOwn(y, k)) return false;
        stack.push([x[k], y[k]]);
      }
      continue;
    }
    return false;
  }
  return true;
}

/**
 * A copy of JSON data cut at `maxDepth` levels (deeper parts become
 * {@link TOO_DEEP}), built without recursion, so JSON.stringify of the result
 * cannot overflow the stack.
 */
export function limitDepth(value: unknown, maxDepth = MAX_DEPTH): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const root: { value: unknown } = { value: undefined };
  const stack: { source: unknown; depth: number; assign: (v: unknown) => void }[] = [{ source: value, depth: 0, assign: (v) => (root.value = v) }];
  while (stack.length > 0) {
    const { source, depth, assign } = stack.pop()!;
    if (typeof source !== 'object' || source === null) {
      assign(source);
    } else if (depth >= maxDepth) {
      assign(TOO_DEEP);
    } else if (Array.isArray(source)) {
      const copy: unknown[] = new Array<unknown>(source.length);
      assign(copy);
      source.forEach((item, i) => stack.push({ source: item, depth: depth + 1, assign: (v) => (copy[i] = v) }));
    } else {
      // defineProperty, not assignment: a "__proto__" key stays data.
      const copy: Record<string, unknown> = {};
      assign(copy);
      for (const [k, item] of Object.entries(source))
        stack.push({ source: item, depth: depth + 1, assign: (v) => Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true }) });
    }
  }
  return root.value;
}

/**
 * The leaf fields that differ between two objects, depth first, skipping the
 * `ignore` paths (and everything under them). Iterative; below `maxDepth`
 * levels a differing subtree is one change whose values are {@link TOO_DEEP}.
 * Changed values are depth-limited copies, safe to serialise.
 */
export function diffObjects(before: unknown, after: unknown, ignore: readonly string[] = NOISE, maxDepth = MAX_DEPTH): Change[] {
  const changes: Change[] = [];
  const skip = new Set(ignore);
  // Children are pushed in reverse so they pop in document order.
  const stack: { a: unknown; b: unknown; path: string; depth: number }[] = [{ a: before, b: after, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { a, b, path, depth } = stack.pop()!;
    if (skip.has(path) || a === b) continue;
    const containers = (isRecord(a) && isRecord(b)) || (Array.isArray(a) && Array.isArray(b));
    if (containers && depth >= maxDepth) {
      if (!jsonEqual(a, b)) changes.push({ path, old: TOO_DEEP, new: TOO_DEEP });
      continue;
    }
    if (isRecord(a) && isRecord(b)) {
      const children = Object.keys(a).map((key) => ({ a: a[key], b: b[key], path: join(path, key), depth: depth + 1 }));
      for (const key of Object.keys(b)) if (!Object.hasOwn(a, key)) children.push({ a: undefined, b: b[key], path: join(path, key), depth: depth + 1 });
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
      continue;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = Math.max(a.length, b.length) - 1; i >= 0; i--)
        stack.push({ a: i < a.length ? a[i] : undefined, b: i < b.length ? b[i] : undefined, path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    if (a === undefined && b === undefined) continue;
    const room = Math.max(0, maxDepth - depth);
    changes.push(
      a === undefined ? { path, new: limitDepth(b, room) } : b === undefined ? { path, old: limitDepth(a, room) } : { path, old: limitDepth(a, room), new: limitDepth(b, room) },
    );
  }
  return changes;
}

/** Matches the placeholder `redact.ts` puts in place of a Secret value. */
const REDACTED = /^<redacted:[0-9a-f]+>$/;

/** A value as a short string: JSON, cut to `max` characters. */
export function brief(value: unknown, max = 60): string {
  let text: string;
  try {
    text = JSON.stringify(limitDepth(value)) ?? String(value);
  } catch (error) {
    text = `<unprintable: ${error instanceof Error ? error.message : String(error)}>`;
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * `spec.replicas: 2 → 3, metadata.labels.tier: +"web"`, at most `limit`
 * changes then `(+N more)`. Redacted Secret values read `<changed>`,
 * `+<redacted>`, `-<redacted>`: a key's fate, never its value.
 */
export function formatChanges(changes: readonly Change[], limit = 8): string {
  const show = (value: unknown) => (typeof value === 'string' && REDACTED.test(value) ? '<redacted>' : brief(value));
  const shown = changes.slice(0, limit).map((c) => {
    if (!('old' in c)) return `${c.path}: +${show(c.new)}`;
    if (!('new' in c)) return `${c.path}: -${show(c.old)}`;
    if (typeof c.old === 'string' && typeof c.new === 'string' && REDACTED.test(c.old) && REDACTED.test(c.new)) return `${c.path}: <changed>`;
    return `${c.path}: ${show(c.old)} → ${show(c.new)}`;
  });
  if (changes.length > limit) shown.push(`(+${changes.length - limit} more)`);
  return shown.join(', ');
}
