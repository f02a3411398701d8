import { hasUnparsedMembers } from '../1-transport/lazyJson.ts';

const OBJECT = Object.prototype;

/**
 * Makes a new version of an object share, by reference, every part that is
 * deep-equal to the version it replaces: `next`'s members (at any depth) that
 * equal `prev`'s are replaced, in place, by `prev`'s. Returns `prev` when the
 * two are deep-equal as a whole, else `next`.
 *
 * Why: a watch event mostly changes an object's status, while its spec, labels
 * and the rest stay as they were. The cache keeps each object until its next
 * version, which with many objects cached is long after the young generation
 * of V8's heap has been collected: without sharing, every event's whole object
 * survives and is copied twice (within the young generation, then into the old
 * one), and the one it replaces becomes old-generation garbage. With sharing,
 * the unchanged copies die young, where garbage costs nothing, and only what
 * changed is kept (see docs/performance.md, "Flat at any size").
 *
 * Only plain data is touched: arrays and objects whose prototype is
 * `Object.prototype`, extensible ones (a frozen or sealed object is compared,
 * never changed), data properties (a member of a lazily decoded object that has
 * not been parsed is left as it is: it is neither read nor shared). `prev` is
 * never changed. Meant for objects the informer decoded itself, before anyone
 * else has seen them.
 */
export function shareUnchanged<T>(next: T, prev: T): T {
  if ((next as unknown) === (prev as unknown)) return prev;
  if (typeof next !== 'object' || next === null || typeof prev !== 'object' || prev === null) return next;
  try {
    return share(next, prev, 0) as T;
  } catch {
    // A property that would not take the new value (a non-writable one, a setter that throws): what was shared stays shared, and deep-equal.
    return next;
  }
}

/** Lazily decoded objects keep unparsed members at the top and in `metadata` (managedFields): deeper, everything is plain JSON. */
const LAZY_DEPTH = 2;

function share(next: object, prev: object, depth: number): object {
  if (Array.isArray(next)) return Array.isArray(prev) ? shareArray(next as unknown[], prev as unknown[], depth) : next;
  if (Object.getPrototypeOf(next) !== OBJECT || Object.getPrototypeOf(prev) !== OBJECT) return next;
  if (depth < LAZY_DEPTH && (hasUnparsedMembers(next) || hasUnparsedMembers(prev))) return shareLazy(next as Record<string, unknown>, prev as Record<string, unknown>, depth);
  const a = next as Record<string, unknown>;
  const b = prev as Record<string, unknown>;
  const writable = Object.isExtensible(a);
  let same = true;
  let count = 0;
  for (const key in a) {
    count++;
    const x = a[key];
    const y = b[key];
    if (x === y) {
      // An own member equal to `undefined` and a missing one are not the same.
      if (y === undefined && !Object.prototype.hasOwnProperty.call(b, key)) same = false;
      continue;
    }
    if (typeof x !== 'object' || x === null || typeof y !== 'object' || y === null || share(x, y, depth + 1) !== y) same = false;
    else if (writable && key !== '__proto__') a[key] = y;
    else same = false;
  }
  if (!same) return next;
  // Every member of `next` is in `prev`, equal: equal as a whole when `prev` has no other.
  for (const _ in b) if (--count < 0) return next;
  return prev;
}

function shareArray(a: unknown[], b: unknown[], depth: number): unknown[] {
  const n = a.length;
  let same = n === b.length;
  const m = Math.min(n, b.length);
  const writable = Object.isExtensible(a);
  for (let i = 0; i < m; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (typeof x !== 'object' || x === null || typeof y !== 'object' || y === null || share(x, y, depth + 1) !== y) same = false;
    else if (writable) a[i] = y;
    else same = false;
  }
  return same ? b : a;
}

/** An object with members not parsed yet: its parsed (data) members are shared; it never equals as a whole. */
function shareLazy(a: Record<string, unknown>, b: Record<string, unknown>, depth: number): object {
  if (!Object.isExtensible(a)) return a;
  for (const key of Object.keys(a)) {
    if (key === '__proto__') continue;
    const mine = Object.getOwnPropertyDescriptor(a, key);
    const theirs = Object.getOwnPropertyDescriptor(b, key);
    if (!mine || !theirs || !('value' in mine) || !('value' in theirs) || !mine.writable) continue;
    const x = mine.value as unknown;
    const y = theirs.value as unknown;
    if (x === y || typeof x !== 'object' || x === null || typeof y !== 'object' || y === null) continue;
    if (share(x, y, depth + 1) === y) a[key] = y;
  }
  return a;
}
