import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { map } from 'rxjs';
import { InformerError, type KubeObject } from '../../src/index.ts';
import type { BatchCause, Delta, DeltaType, Deltas, FifoOutput, SourceEvent } from '../../src/pipeline.ts';
import type { FillReplace } from '../../src/3-deltas/deltas.ts';
import { realFifo } from '../../src/3-deltas/realFifo.ts';
import { deltaFifo } from '../../src/3-deltas/deltaFifo.ts';

type Obj = KubeObject;
const o = (name: string, rv: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });

const replace = (rv: string, ...items: Obj[]): SourceEvent<Obj> => ({ type: 'replace', items, resourceVersion: rv });
const add = (object: Obj): SourceEvent<Obj> => ({ type: 'added', object, resourceVersion: object.metadata.resourceVersion ?? '' });
const mod = (object: Obj): SourceEvent<Obj> => ({ type: 'modified', object, resourceVersion: object.metadata.resourceVersion ?? '' });
const del = (object: Obj): SourceEvent<Obj> => ({ type: 'deleted', object, resourceVersion: object.metadata.resourceVersion ?? '' });
const tick: SourceEvent<Obj> = { type: 'resync' };

const delta = (type: DeltaType, object: Delta<Obj>['object']): Delta<Obj> => ({ type, object });
const tomb = (key: string, object: Obj) => ({ finalStateUnknown: true as const, key, object });
const entry = (key: string, isInInitialList: boolean, d: Delta<Obj>): Deltas<Obj> => ({ key, deltas: [d], isInInitialList });
const batch = (cause: BatchCause, resourceVersion: string | undefined, ...items: Deltas<Obj>[]): FifoOutput<Obj> =>
  resourceVersion === undefined ? { type: 'deltas', cause, items } : { type: 'deltas', cause, items, resourceVersion };

describe('realFifo (in-order delivery)', () => {
  it('the JSDoc diagram: one delta per event, a relist as one batch with its tombstones first', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a1 = o('a', '1'),
        a2 = o('a', '2'),
        a3 = o('a', '3'),
        b4 = o('b', '4'),
        b5 = o('b', '5');
      const source = cold('a--m--n--R------x--|', { a: add(a1), m: mod(a2), n: mod(a3), R: replace('4', b4), x: del(b5) });
      expectObservable(source.pipe(realFifo())).toBe('A--U--V--B------D--|', {
        A: batch('event', '1', entry('ns/a', true, delta('Added', a1))),
        U: batch('event', '2', entry('ns/a', true, delta('Updated', a2))),
        V: batch('event', '3', entry('ns/a', true, delta('Updated', a3))),
        B: batch('replace', '4', entry('ns/a', true, delta('Deleted', tomb('ns/a', a3))), entry('ns/b', true, delta('Replaced', b4))),
        D: batch('event', '5', entry('ns/b', false, delta('Deleted', b5))),
      });
      expectSubscriptions(source.subscriptions).toBe('^------------------!');
    });
  });

  it('two deletes in a row stay two; resync is a Sync per known object; bookmarks, watch starts and errors pass through', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a1 = o('a', '1'),
        a2 = o('a', '2');
      const fault = new InformerError('NetworkError', 'reset', { phase: 'watch' });
      const source = cold<SourceEvent<Obj>>('r-s-k-e-x-y-|', {
        r: replace('1', a1),
        s: tick,
        k: { type: 'bookmark', resourceVersion: '7' },
        e: { type: 'error', error: fault },
        x: del(a2),
        y: del(a2),
      });
      expectObservable(source.pipe(realFifo())).toBe('R-S-K-E-X-Y-|', {
        R: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
        S: batch('resync', undefined, entry('ns/a', false, delta('Sync', a1))),
        K: { type: 'bookmark', resourceVersion: '7' },
        E: { type: 'error', error: fault },
        X: batch('event', '2', entry('ns/a', false, delta('Deleted', a2))),
        Y: batch('event', '2', entry('ns/a', false, delta('Deleted', a2))),
      });
      expectSubscriptions(source.subscriptions).toBe('^-----------!');
    });
  });

  it('side by side with deltaFifo: the same relist, tombstones first vs last', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const a1 = o('a', '1'),
        b1 = o('b', '1'),
        c2 = o('c', '2');
      const source = cold('r-R|', { r: replace('1', a1, b1), R: replace('2', c2, b1) });
      const order = (output: FifoOutput<Obj>) =>
        output.type === 'deltas' ? output.items.map((i) => `${i.deltas[0]!.type} ${i.key}`).join(', ') : output.type;
      expectObservable(source.pipe(realFifo(), map(order))).toBe('x-y|', {
        x: 'Replaced ns/a, Replaced ns/b',
        y: 'Deleted ns/a, Replaced ns/c, Replaced ns/b',
      });
      expectObservable(source.pipe(deltaFifo(), map(order))).toBe('x-z|', {
        x: 'Replaced ns/a, Replaced ns/b',
        z: 'Replaced ns/c, Replaced ns/b, Deleted ns/a',
      });
    });
  });
});

describe('a relist that finds another object under a cached name (another uid)', () => {
  const withUid = (name: string, rv: string, uid: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv, uid } });
  const a1 = withUid('a', '1', 'uid-1'),
    b1 = withUid('b', '1', 'uid-b'),
    a5 = withUid('a', '5', 'uid-2'),
    a6 = withUid('a', '6', 'uid-1');
  const both = [
    ['realFifo', realFifo<Obj>],
    ['deltaFifo', deltaFifo<Obj>],
  ] as const;
  for (const [name, fifo] of both) {
    it(`${name}: the old object's tombstone, then the new one's Replaced, as one entry at its place in the list`, () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const source = cold('r-R-S|', { r: replace('1', a1, b1), R: replace('5', b1, a5), S: replace('6', b1, a6) });
        expectObservable(source.pipe(fifo())).toBe('x-y-z|', {
          x: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1)), entry('ns/b', true, delta('Replaced', b1))),
          y: batch('replace', '5', entry('ns/b', false, delta('Replaced', b1)), {
            key: 'ns/a',
            deltas: [delta('Deleted', tomb('ns/a', a1)), delta('Replaced', a5)],
            isInInitialList: false,
          }),
          // Back to the first uid: another object again.
          z: batch('replace', '6', entry('ns/b', false, delta('Replaced', b1)), {
            key: 'ns/a',
            deltas: [delta('Deleted', tomb('ns/a', a5)), delta('Replaced', a6)],
            isInInitialList: false,
          }),
        });
      });
    });
  }

  it('no uid on either side, or the same uid: a plain Replaced (an update)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const bare = o('a', '7');
      const same = withUid('a', '8', 'uid-1');
      const source = cold('r-R-S|', { r: replace('1', a1), R: replace('8', same), S: replace('9', bare) });
      expectObservable(source.pipe(realFifo())).toBe('x-y-z|', {
        x: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
        y: batch('replace', '8', entry('ns/a', false, delta('Replaced', same))),
        z: batch('replace', '9', entry('ns/a', false, delta('Replaced', bare))),
      });
    });
  });

  it('a name the watch deleted, listed again under another uid: a plain Replaced (nothing cached to tell the deletion of)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const source = cold('r-x-R|', { r: replace('1', a1), x: del(a1), R: replace('5', a5) });
      expectObservable(source.pipe(deltaFifo())).toBe('a-b-c|', {
        a: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
        b: batch('event', '1', entry('ns/a', false, delta('Deleted', a1))),
        c: batch('replace', '5', entry('ns/a', false, delta('Replaced', a5))),
      });
    });
  });
});

describe('a fill list (FillReplace: a sharded informer filling shards that joined)', () => {
  const a1 = o('a', '1'),
    b1 = o('b', '1'),
    b2 = o('b', '2'),
    c3 = o('c', '3');
  const fill = (rv: string, ...items: Obj[]): SourceEvent<Obj> => {
    const event: FillReplace<Obj> = { type: 'replace', items, resourceVersion: rv, fill: true };
    return event;
  };
  const both = [
    ['realFifo', realFifo<Obj>],
    ['deltaFifo', deltaFifo<Obj>],
  ] as const;
  for (const [name, fifo] of both) {
    it(`${name}: no delta for an object held unchanged; changed, new and missing ones as in a plain replace`, () => {
      testScheduler().run(({ cold, expectObservable }) => {
        // a unchanged, b changed meanwhile, c new (its shard joined), and d gone.
        const d1 = o('d', '1');
        const source = cold('r-F|', { r: replace('1', a1, b1, d1), F: fill('3', a1, b2, c3) });
        const order = (output: FifoOutput<Obj>) =>
          output.type === 'deltas' ? output.items.map((i) => i.deltas.map((d) => `${d.type} ${i.key}`).join('+')).join(', ') : output.type;
        expectObservable(source.pipe(fifo(), map(order))).toBe('x-y|', {
          x: 'Replaced ns/a, Replaced ns/b, Replaced ns/d',
          y: name === 'realFifo' ? 'Deleted ns/d, Replaced ns/b, Replaced ns/c' : 'Replaced ns/b, Replaced ns/c, Deleted ns/d',
        });
      });
    });
  }
});
