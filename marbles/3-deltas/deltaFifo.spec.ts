import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { Subject } from 'rxjs';
import { InformerError, type KubeObject } from '../../src/index.ts';
import {
  deltaFifo,
  isTombstone,
  type BatchCause,
  type Delta,
  type DeltaType,
  type Deltas,
  type FifoOutput,
  type SourceEvent,
} from '../../src/pipeline.ts';
import type { MissedDeletion } from '../../src/3-deltas/deltas.ts';

type Obj = KubeObject;
const o = (name: string, rv: string, namespace = 'ns'): Obj => ({ metadata: { name, namespace, resourceVersion: rv } });

// source events
const replace = (rv: string, ...items: Obj[]): SourceEvent<Obj> => ({ type: 'replace', items, resourceVersion: rv });
const add = (object: Obj): SourceEvent<Obj> => ({ type: 'added', object, resourceVersion: object.metadata.resourceVersion ?? '' });
const mod = (object: Obj): SourceEvent<Obj> => ({ type: 'modified', object, resourceVersion: object.metadata.resourceVersion ?? '' });
const del = (object: Obj): SourceEvent<Obj> => ({ type: 'deleted', object, resourceVersion: object.metadata.resourceVersion ?? '' });
const tick: SourceEvent<Obj> = { type: 'resync' };

// expected output
const delta = (type: DeltaType, object: Delta<Obj>['object']): Delta<Obj> => ({ type, object });
const tomb = (key: string, object: Obj) => ({ finalStateUnknown: true as const, key, object });
const entry = (key: string, isInInitialList: boolean, ...deltas: Delta<Obj>[]): Deltas<Obj> => ({ key, deltas, isInInitialList });
const batch = (cause: BatchCause, resourceVersion: string | undefined, ...items: Deltas<Obj>[]): FifoOutput<Obj> =>
  resourceVersion === undefined ? { type: 'deltas', cause, items } : { type: 'deltas', cause, items, resourceVersion };

describe('deltaFifo', () => {
  it('maps added → Added, modified → Updated, deleted → Deleted, one batch per source step', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a1 = o('a', '1'),
        b2 = o('b', '2'),
        b3 = o('b', '3'),
        b4 = o('b', '4');
      const source = cold('-r-a-m-d-|', { r: replace('1', a1), a: add(b2), m: mod(b3), d: del(b4) });
      expectObservable(source.pipe(deltaFifo())).toBe('-R-A-U-D-|', {
        R: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
        A: batch('event', '2', entry('ns/b', false, delta('Added', b2))),
        U: batch('event', '3', entry('ns/b', false, delta('Updated', b3))),
        D: batch('event', '4', entry('ns/b', false, delta('Deleted', b4))),
      });
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('ignores a delete of a key it has never handed on (and one already deleted)', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a1 = o('a', '1');
      const source = cold('-r-x-d-y-|', { r: replace('1', a1), x: del(o('ghost', '2')), d: del(o('a', '3')), y: del(o('a', '4')) });
      expectObservable(source.pipe(deltaFifo())).toBe('-R---D---|', {
        R: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
        D: batch('event', '3', entry('ns/a', false, delta('Deleted', o('a', '3')))),
      });
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('keys by namespace/name, or name when cluster-scoped (and accepts a custom keyOf)', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const n = { metadata: { name: 'node-1', resourceVersion: '1' } };
      const p = o('web', '2', 'prod');
      const source = cold('-r|', { r: replace('2', n, p) });
      expectObservable(source.pipe(deltaFifo())).toBe('-R|', {
        R: batch('replace', '2', entry('node-1', true, delta('Replaced', n)), entry('prod/web', true, delta('Replaced', p))),
      });
      const byUid = deltaFifo<Obj>({ keyOf: (x) => `uid:${x.metadata.name}` });
      expectObservable(source.pipe(byUid)).toBe('-R|', {
        R: batch('replace', '2', entry('uid:node-1', true, delta('Replaced', n)), entry('uid:web', true, delta('Replaced', p))),
      });
      // subscribed once by each pipe
      expectSubscriptions(source.subscriptions).toBe(['^-!', '^-!']);
    });
  });

  it('replace → Replaced for every listed object, then Deleted tombstones (last known state) for known keys the list lacks', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a1 = o('a', '1'),
        b1 = o('b', '1'),
        c1 = o('c', '1'),
        b5 = o('b', '5'),
        c6 = o('c', '6'),
        d7 = o('d', '7');
      const source = cold('-r-m-x-R-|', {
        r: replace('1', a1, b1, c1),
        m: mod(c6),
        x: del(o('a', '2')),
        R: replace('9', d7, b5),
      });
      expectObservable(source.pipe(deltaFifo())).toBe('-A-B-C-D-|', {
        A: batch(
          'replace',
          '1',
          entry('ns/a', true, delta('Replaced', a1)),
          entry('ns/b', true, delta('Replaced', b1)),
          entry('ns/c', true, delta('Replaced', c1)),
        ),
        B: batch('event', '6', entry('ns/c', false, delta('Updated', c6))),
        C: batch('event', '2', entry('ns/a', false, delta('Deleted', o('a', '2')))),
        // a was deleted by the watch: no tombstone; c was missed: a tombstone with its last known state (rv 6).
        D: batch(
          'replace',
          '9',
          entry('ns/d', false, delta('Replaced', d7)),
          entry('ns/b', false, delta('Replaced', b5)),
          entry('ns/c', false, delta('Deleted', tomb('ns/c', c6))),
        ),
      });
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('the first replace batch is emitted even when empty and marks isInInitialList; later ones do not', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a2 = o('a', '2'),
        a3 = o('a', '3');
      const source = cold('-e-a-r-s|', { e: replace('1'), a: add(a2), r: replace('3', a3), s: replace('4') });
      expectObservable(source.pipe(deltaFifo())).toBe('-E-A-R-S|', {
        E: batch('replace', '1'),
        A: batch('event', '2', entry('ns/a', false, delta('Added', a2))),
        R: batch('replace', '3', entry('ns/a', false, delta('Replaced', a3))),
        S: batch('replace', '4', entry('ns/a', false, delta('Deleted', tomb('ns/a', a3)))),
      });
      expectSubscriptions(source.subscriptions).toBe('^-------!');
    });
  });

  it('resync → Sync for every known object (no batch when nothing is known; no resourceVersion)', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a1 = o('a', '1'),
        b1 = o('b', '1'),
        b2 = o('b', '2');
      const source = cold('-t-r-t-m-d-t-|', { t: tick, r: replace('1', a1, b1), m: mod(b2), d: del(a1) });
      expectObservable(source.pipe(deltaFifo())).toBe('---R-S-U-D-T-|', {
        R: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1)), entry('ns/b', true, delta('Replaced', b1))),
        S: batch('resync', undefined, entry('ns/a', false, delta('Sync', a1)), entry('ns/b', false, delta('Sync', b1))),
        U: batch('event', '2', entry('ns/b', false, delta('Updated', b2))),
        D: batch('event', '1', entry('ns/a', false, delta('Deleted', a1))),
        T: batch('resync', undefined, entry('ns/b', false, delta('Sync', b2))),
      });
      expectSubscriptions(source.subscriptions).toBe('^------------!');
    });
  });

  it('passes bookmark, watch and error events through untouched', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const error = new InformerError('ServerError', 'boom', { status: 500 });
      const events: Record<string, SourceEvent<Obj>> = {
        b: { type: 'bookmark', resourceVersion: '7' },
        w: { type: 'watch', resourceVersion: '7' },
        e: { type: 'error', error },
      };
      const source = cold('-w-b-e-|', events);
      expectObservable(source.pipe(deltaFifo())).toBe('-w-b-e-|', events as Record<string, FifoOutput<Obj>>);
      expectSubscriptions(source.subscriptions).toBe('^------!');
    });
  });

  it('propagates the source’s error and completion', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const failure = new Error('source broke');
      const failing = cold<SourceEvent<Obj>>('-#', undefined, failure);
      expectObservable(failing.pipe(deltaFifo())).toBe('-#', undefined, failure);
      expectSubscriptions(failing.subscriptions).toBe('^!');
      const completing = cold<SourceEvent<Obj>>('---|');
      expectObservable(completing.pipe(deltaFifo())).toBe('---|');
      expectSubscriptions(completing.subscriptions).toBe('^--!');
    });
  });

  it('unsubscribing unsubscribes the source at that frame', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const a1 = o('a', '1'),
        b2 = o('b', '2');
      const source = hot('-r-a-m-d-|', { r: replace('1', a1), a: add(b2), m: mod(o('b', '3')), d: del(o('b', '4')) });
      const sub = '       ^----!';
      expectObservable(source.pipe(deltaFifo()), sub).toBe('-R-A-', {
        R: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
        A: batch('event', '2', entry('ns/b', false, delta('Added', b2))),
      });
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });

  it('re-entrant steps (emitted while a batch is handed on) coalesce per key in first-arrival order; consecutive deletes collapse', () => {
    const source = new Subject<SourceEvent<Obj>>();
    const out: FifoOutput<Obj>[] = [];
    const a1 = o('a', '1'),
      a2 = o('a', '2'),
      a3 = o('a', '3'),
      b4 = o('b', '4'),
      c5 = o('c', '5');
    let once = true;
    source.pipe(deltaFifo()).subscribe((output) => {
      out.push(output);
      if (output.type === 'deltas' && output.cause === 'event' && once) {
        once = false;
        // While `Added a` is being handed on, the source pushes more.
        source.next(mod(a2));
        source.next(add(b4));
        source.next(mod(a3));
        source.next(del(a3));
        source.next(del(a3));
        source.next(add(c5));
      }
    });
    source.next(replace('0'));
    source.next(add(a1));
    expect(out).toEqual([
      batch('replace', '0'),
      batch('event', '1', entry('ns/a', false, delta('Added', a1))),
      batch(
        'event',
        '2',
        entry('ns/a', false, delta('Updated', a2), delta('Updated', a3), delta('Deleted', a3)),
        entry('ns/b', false, delta('Added', b4)),
        entry('ns/c', false, delta('Added', c5)),
      ),
    ]);
  });

  it('a key re-entrantly dropped by a relist while queued gets a tombstone with its newest queued state', () => {
    const source = new Subject<SourceEvent<Obj>>();
    const out: FifoOutput<Obj>[] = [];
    const a1 = o('a', '1'),
      b2 = o('b', '2'),
      b3 = o('b', '3');
    let once = true;
    source.pipe(deltaFifo()).subscribe((output) => {
      out.push(output);
      if (output.type === 'deltas' && output.cause === 'event' && once) {
        once = false;
        source.next(mod(b3)); // queued for b …
        source.next(replace('9', a1)); // … and the relist no longer lists b
      }
    });
    source.next(replace('1', a1));
    source.next(add(b2));
    const last = out[out.length - 1];
    expect(last).toEqual(
      batch(
        'replace',
        '9',
        entry('ns/b', false, delta('Updated', b3), delta('Deleted', tomb('ns/b', b3))),
        entry('ns/a', false, delta('Replaced', a1)),
      ),
    );
    if (last?.type === 'deltas') expect(isTombstone(last.items[0]?.deltas[1]?.object)).toBe(true);
  });

  it('a list into an empty cache coalesces a key listed twice; a knownObjects without size still gets tombstones', () => {
    const a1 = o('a', '1'),
      a2 = o('a', '2'),
      b3 = o('b', '3');
    const out: FifoOutput<Obj>[] = [];
    const source = new Subject<SourceEvent<Obj>>();
    source.pipe(deltaFifo()).subscribe((output) => out.push(output));
    source.next(replace('2', a1, a2));
    expect(out).toEqual([batch('replace', '2', entry('ns/a', true, delta('Replaced', a1), delta('Replaced', a2)))]);

    // A consumer's cache that cannot say its size: the relist looks for missed deletions all the same.
    const cached = new Map<string, Obj>([['ns/a', a1]]);
    const known = { get: (k: string) => cached.get(k), has: (k: string) => cached.has(k), entries: () => cached.entries() };
    const out2: FifoOutput<Obj>[] = [];
    const source2 = new Subject<SourceEvent<Obj>>();
    source2.pipe(deltaFifo({ knownObjects: () => known })).subscribe((output) => out2.push(output));
    source2.next(replace('3', b3));
    expect(out2).toEqual([
      batch('replace', '3', entry('ns/b', true, delta('Replaced', b3)), entry('ns/a', true, delta('Deleted', tomb('ns/a', a1)))),
    ]);
  });

  describe('objects that failed validation (docs/invalid-objects.md)', () => {
    const replaceRejecting = (rv: string, rejectedKeys: string[], ...items: Obj[]): SourceEvent<Obj> => ({
      type: 'replace',
      items,
      resourceVersion: rv,
      rejectedKeys,
    });
    const deletedKey = (key: string, rv: string): SourceEvent<Obj> => ({ type: 'deletedKey', key, resourceVersion: rv });

    it('a relist whose list had a key as invalid: no tombstone and no Replaced for it (it exists on the server)', () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const a1 = o('a', '1'),
          b1 = o('b', '1'),
          c1 = o('c', '1'),
          a2 = o('a', '2');
        const source = cold('-r-R-|', { r: replace('1', a1, b1, c1), R: replaceRejecting('5', ['ns/b'], a2) });
        expectObservable(source.pipe(deltaFifo())).toBe('-A-B-|', {
          A: batch(
            'replace',
            '1',
            entry('ns/a', true, delta('Replaced', a1)),
            entry('ns/b', true, delta('Replaced', b1)),
            entry('ns/c', true, delta('Replaced', c1)),
          ),
          // b failed validation: kept as it was; c is really gone: tombstone.
          B: batch('replace', '5', entry('ns/a', false, delta('Replaced', a2)), entry('ns/c', false, delta('Deleted', tomb('ns/c', c1)))),
        });
        expectSubscriptions(source.subscriptions).toBe('^----!');
      });
    });

    it('rejectedKeys of the first list (nothing known) produce nothing', () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const a1 = o('a', '1');
        const source = cold('-r-|', { r: replaceRejecting('1', ['ns/b'], a1) });
        expectObservable(source.pipe(deltaFifo())).toBe('-A-|', {
          A: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
        });
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
    });

    it('deletedKey → Deleted carrying the last known object (not a tombstone); ignored for an unknown key', () => {
      testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const a1 = o('a', '1');
        const source = cold('-r-x-d-y-|', {
          r: replace('1', a1),
          x: deletedKey('ns/ghost', '2'),
          d: deletedKey('ns/a', '3'),
          y: deletedKey('ns/a', '4'),
        });
        expectObservable(source.pipe(deltaFifo())).toBe('-R---D---|', {
          R: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
          D: batch('event', '3', entry('ns/a', false, delta('Deleted', a1))),
        });
        expectSubscriptions(source.subscriptions).toBe('^--------!');
      });
    });

    it('a MissedDeletion (deleted, finalStateUnknown) → Deleted carrying a tombstone of its object; ignored for an unknown key', () => {
      testScheduler().run(({ cold, expectObservable }) => {
        const a1 = o('a', '1');
        const missed = (object: Obj, rv: string): SourceEvent<Obj> => {
          const event: MissedDeletion<Obj> = { type: 'deleted', object, resourceVersion: rv, finalStateUnknown: true };
          return event;
        };
        const source = cold('-r-x-d-|', { r: replace('1', a1), x: missed(o('ghost', '1'), '2'), d: missed(a1, '3') });
        expectObservable(source.pipe(deltaFifo())).toBe('-R---D-|', {
          R: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1))),
          D: batch('event', '3', entry('ns/a', false, delta('Deleted', tomb('ns/a', a1)))),
        });
      });
    });

    it('deletedKey for a key with deltas queued (re-entrant) carries its newest queued object', () => {
      const source = new Subject<SourceEvent<Obj>>();
      const out: FifoOutput<Obj>[] = [];
      const a1 = o('a', '1'),
        b2 = o('b', '2'),
        b3 = o('b', '3');
      let once = true;
      source.pipe(deltaFifo()).subscribe((output) => {
        out.push(output);
        if (output.type === 'deltas' && output.cause === 'event' && once) {
          once = false;
          source.next(mod(b3));
          source.next(deletedKey('ns/b', '4'));
        }
      });
      source.next(replace('1', a1));
      source.next(add(b2));
      expect(out[out.length - 1]).toEqual(batch('event', '3', entry('ns/b', false, delta('Updated', b3), delta('Deleted', b3))));
    });

    it('with a knownObjects (an informer), deletedKey carries the known object', () => {
      const a1 = o('a', '1');
      const cached = new Map<string, Obj>([['ns/a', a1]]);
      const known = { get: (k: string) => cached.get(k), has: (k: string) => cached.has(k), entries: () => cached.entries(), size: 1 };
      const out: FifoOutput<Obj>[] = [];
      const source = new Subject<SourceEvent<Obj>>();
      source.pipe(deltaFifo({ knownObjects: () => known })).subscribe((output) => out.push(output));
      source.next(deletedKey('ns/a', '9'));
      source.next(deletedKey('ns/zzz', '10'));
      // (no list has gone through this operator yet: still the initial list)
      expect(out).toEqual([batch('event', '9', entry('ns/a', true, delta('Deleted', a1)))]);
    });
  });

  it('a real delete after a relist tombstone (own knownObjects) goes out marked afterTombstone, once; with knownObjects it is dropped', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const a1 = o('a', '1'),
        b1 = o('b', '1'),
        b7 = o('b', '7');
      const source = cold('-r-R-d-e-|', { r: replace('1', a1, b1), R: replace('5', a1), d: del(b7), e: del(b7) });
      expectObservable(source.pipe(deltaFifo())).toBe('-A-B-D---|', {
        A: batch('replace', '1', entry('ns/a', true, delta('Replaced', a1)), entry('ns/b', true, delta('Replaced', b1))),
        B: batch('replace', '5', entry('ns/a', false, delta('Replaced', a1)), entry('ns/b', false, delta('Deleted', tomb('ns/b', b1)))),
        D: batch('event', '7', { key: 'ns/b', deltas: [delta('Deleted', b7)], isInInitialList: false, afterTombstone: true }),
      });
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });
});
