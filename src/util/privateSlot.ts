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

/** A value kept in a private field of objects (one field per slot), for objects of any class. */
export interface PrivateSlot<T> {
  /** Gives `object` its value: an object not given one before (a second time throws a `TypeError`). */
  stamp(object: object, value: T): void;
  /** `object`'s value, undefined if it was never given one or it was cleared. */
  get(object: object): T | undefined;
  /** Drops `object`'s value (what it held is free for the collector); nothing for an object never given one. */
  clear(object: object): void;
}

/** A new slot: its own private field, which no other slot and no code outside this function can read. */
export function privateSlot<T>(): PrivateSlot<T> {
  class Slot extends Stamp {
    #value: T | undefined;
    private constructor(object: object, value: T) {
      super(object);
      this.#value = value;
    }
    static stamp(object: object, value: T): void {
      new Slot(object, value);
    }
    static get(object: object): T | undefined {
      return #value in object ? (object as Slot).#value : undefined;
    }
    static clear(object: object): void {
      if (#value in object) (object as Slot).#value = undefined;
    }
  }
  return Slot;
}
