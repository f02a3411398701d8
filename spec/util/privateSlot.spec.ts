import { describe, expect, it } from 'vitest';
import { isDeepStrictEqual } from 'node:util';
import { privateSlot } from '../../src/util/privateSlot.ts';

describe('privateSlot', () => {
  it('keeps a value on a plain object that no key, symbol, descriptor, prototype, copy or deep comparison shows', () => {
    const slot = privateSlot<{ text: string }>();
    const object = { a: 1, b: { c: 'd' } };
    const value = { text: 'x' };
    slot.stamp(object, value);
    expect(slot.get(object)).toBe(value);
    expect(Reflect.ownKeys(object)).toEqual(['a', 'b']);
    expect(Object.getOwnPropertyDescriptors(object)).toEqual(Object.getOwnPropertyDescriptors({ a: 1, b: object.b }));
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect(isDeepStrictEqual(object, { a: 1, b: { c: 'd' } })).toBe(true);
    expect(JSON.stringify(object)).toBe('{"a":1,"b":{"c":"d"}}');
    // Copies do not carry it.
    expect(slot.get({ ...object })).toBeUndefined();
    expect(slot.get(structuredClone(object))).toBeUndefined();
    expect(slot.get(Object.create(object) as object)).toBeUndefined();
  });

  it('is its own field: another slot neither sees it nor clears it', () => {
    const first = privateSlot<number>();
    const second = privateSlot<number>();
    const object = {};
    first.stamp(object, 1);
    expect(second.get(object)).toBeUndefined();
    second.clear(object);
    expect(first.get(object)).toBe(1);
    second.stamp(object, 2);
    expect([first.get(object), second.get(object)]).toEqual([1, 2]);
  });

  it('clears a value (an object never stamped is left alone), and refuses a second stamp', () => {
    const slot = privateSlot<string>();
    const object = {};
    slot.clear(object);
    expect(slot.get(object)).toBeUndefined();
    slot.stamp(object, 'v');
    slot.clear(object);
    expect(slot.get(object)).toBeUndefined();
    expect(() => slot.stamp(object, 'again')).toThrow(TypeError);
    expect(Reflect.ownKeys(object)).toEqual([]);
  });
});
