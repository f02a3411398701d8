import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KeyedBacklog } from '../../src/util/keyedBacklog.ts';

type Op = { readonly op: 'set'; readonly key: string; readonly value: number } | { readonly op: 'delete' | 'shift'; readonly key: string };

/** The model: keys in order of first arrival, each placed at most once; a deleted key keeps its place. */
class Model {
  readonly values = new Map<string, number>();
  readonly order: string[] = [];
  set(key: string, value: number): void {
    if (!this.order.includes(key)) this.order.push(key);
    this.values.set(key, value);
  }
  delete(key: string): void {
    this.values.delete(key);
  }
  shift(): number | undefined {
    while (this.order.length > 0) {
      const key = this.order.shift()!;
      const value = this.values.get(key);
      this.values.delete(key);
      if (value !== undefined) return value;
    }
    return undefined;
  }
}

describe('KeyedBacklog', () => {
  it('behaves as keys in first-arrival order, one place each, a deleted key keeping its place (against a model)', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd');
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('set' as const), key, value: fc.integer() }),
      fc.record({ op: fc.constantFrom('delete' as const, 'shift' as const), key }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const backlog = new KeyedBacklog<number>();
        const model = new Model();
        for (const o of ops) {
          if (o.op === 'set') {
            backlog.set(o.key, o.value);
            model.set(o.key, o.value);
          } else if (o.op === 'delete') {
            backlog.delete(o.key);
            model.delete(o.key);
          } else {
            expect(backlog.shift()).toBe(model.shift());
          }
          expect(backlog.size).toBe(model.values.size);
          expect([...backlog.keys()].sort()).toEqual([...model.values.keys()].sort());
          for (const k of ['a', 'b', 'c', 'd']) expect(backlog.get(k)).toBe(model.values.get(k));
        }
        const drained: number[] = [];
        for (let v = backlog.shift(); v !== undefined; v = backlog.shift()) drained.push(v);
        const expected: number[] = [];
        for (let v = model.shift(); v !== undefined; v = model.shift()) expected.push(v);
        expect(drained).toEqual(expected);
      }),
    );
  });

  it('first() leaves the front key in place; a key set again after it left goes to the back', () => {
    const backlog = new KeyedBacklog<string>();
    backlog.set('a', 'a1');
    backlog.set('b', 'b1');
    expect(backlog.first()).toBe('a1');
    expect(backlog.first()).toBe('a1');
    expect(backlog.shift()).toBe('a1');
    backlog.set('a', 'a2');
    expect([backlog.shift(), backlog.shift(), backlog.shift()]).toEqual(['b1', 'a2', undefined]);
    // Deleted while waiting, then set again: it leaves from its old place, once.
    backlog.set('c', 'c1');
    backlog.delete('c');
    backlog.set('c', 'c2');
    backlog.set('d', 'd1');
    expect([backlog.shift(), backlog.shift(), backlog.shift()]).toEqual(['c2', 'd1', undefined]);
  });
});
