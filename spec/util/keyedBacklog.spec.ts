import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KeyedBacklog } from '../../src/util/keyedBacklog.ts';

type Op = { readonly op: 'set'; readonly key: string; readonly value: number } | { readonly op: 'delete' | 'shift'; readonly key: string };

/**
 * The model: keys in order of first arrival, each placed at most once; a deleted key keeps its place, until the
 * deleted keys holding one are more than the keys with a value plus `slack`: then every such place is dropped.
 */
class Model {
  readonly values = new Map<string, number>();
  order: string[] = [];
  private readonly slack: number;
  constructor(slack = Infinity) {
    this.slack = slack;
  }
  set(key: string, value: number): void {
    if (!this.order.includes(key)) this.order.push(key);
    this.values.set(key, value);
  }
  delete(key: string): void {
    this.values.delete(key);
    this.bound();
  }
  shift(): number | undefined {
    while (this.order.length > 0) {
      const key = this.order.shift()!;
      const value = this.values.get(key);
      this.values.delete(key);
      if (value !== undefined) {
        this.bound();
        return value;
      }
    }
    return undefined;
  }
  private bound(): void {
    if (this.order.length - this.values.size > this.values.size + this.slack) this.order = this.order.filter((k) => this.values.has(k));
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

  it('drops the places of deleted keys once they outnumber the keys with a value plus its slack (against a model)', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('set' as const), key, value: fc.integer() }),
      fc.record({ op: fc.constantFrom('delete' as const, 'shift' as const), key }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), fc.array(op, { maxLength: 80 }), (slack, ops) => {
        const backlog = new KeyedBacklog<number>(slack);
        const model = new Model(slack);
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
          expect(backlog.held).toBeLessThanOrEqual(2 * backlog.size + slack);
        }
        const drained: number[] = [];
        for (let v = backlog.shift(); v !== undefined; v = backlog.shift()) drained.push(v);
        const expected: number[] = [];
        for (let v = model.shift(); v !== undefined; v = model.shift()) expected.push(v);
        expect(drained).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('a shift that leaves deleted keys outnumbering the rest drops their places too', () => {
    const backlog = new KeyedBacklog<number>(0);
    backlog.set('e', 0);
    backlog.set('a', 1);
    backlog.delete('a'); // one deleted place, one key with a value: within the slack
    expect(backlog.held).toBe(2);
    expect(backlog.shift()).toBe(0);
    expect(backlog.held).toBe(0);
  });

  it('a stalled consumer and names created and deleted without end: at most 2 × size + 1,024 entries held', () => {
    const backlog = new KeyedBacklog<number>();
    backlog.set('head', 0); // the consumer is stuck before taking it
    backlog.set('x', 1);
    backlog.delete('x'); // x keeps its place...
    let most = 0;
    for (let i = 0; i < 20_000; i++) {
      backlog.set(`job-${i}`, i);
      backlog.delete(`job-${i}`);
      most = Math.max(most, backlog.held);
    }
    expect(most).toBeLessThanOrEqual(2 * 1 + 1024);
    expect(backlog.size).toBe(1);
    // ...until the places were dropped: set again, x goes to the back
    backlog.set('y', 2);
    backlog.set('x', 3);
    expect([backlog.shift(), backlog.shift(), backlog.shift(), backlog.shift()]).toEqual([0, 2, 3, undefined]);
    expect(backlog.held).toBe(0);
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
