/**
 * Private fields stamped on objects we did not construct: what lazy JSON (1-transport/lazyJson.ts) and lazy protobuf
 * (1-transport/protobuf/lazy.ts) keep beside a plain object, instead of a `WeakMap` or `WeakSet` entry. A private field
 * is invisible to the object's keys, symbols, descriptors, prototype, spreading, `structuredClone` and deep equality,
 * as a `WeakMap` entry is; but it is a property store, with no ephemeron for the collector to trace
 * (docs/performance.md, "Where a dropped object's time goes" and the lazy protobuf's metadata).
 */

/** Its constructor returns the object it is given, so that a subclass stamps its private fields on that object. */
export class Stamp {
  constructor(target: object) {
    return target as Stamp;
  }
}
