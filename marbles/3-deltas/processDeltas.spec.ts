import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { map, timer } from 'rxjs';
import { InformerError, type KubeObject } from '../../src/index.ts';
import {
  deltaFifo,
  processDeltas,
  type SourceEvent,
  type Delta,
  type DeltaType,
  type Deltas,
  type FifoOutput,
} from '../../src/pipeline.ts';

type Obj = KubeObject;
const o = (name: string, rv: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
const d = (type: DeltaType, name: string, rv: string): Delta<Obj> => ({ type, object: o(name, rv) });
/** One batch holding one key's deltas. */
const one = (key: string, ...deltas: Delta<Obj>[]): FifoOutput<Obj> => ({
  type: 'deltas',
  cause: 'event',
  items: [{ key, deltas, isInInitialList: false }],
});

const label = (entry: Deltas<Obj>) =>
  `${entry.key}:${entry.deltas.map((x) => `${x.type}${'metadata' in x.object ? x.object.metadata.resourceVersion : ''}`).join(',')}`;

describe('processDeltas', () => {
  it('a slow handler: deltas for a waiting key coalesce into one entry, keys leave in first-arrival order, consecutive deletes collapse', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      // frames: a 0, b 1, a 2, a 3 (twice), b 7; complete 8
      const input = hot('abc(dd)e|', {
        a: one('a', d('Added', 'a', '1')),
        b: one('b', d('Added', 'b', '2')),
        c: one('a', d('Updated', 'a', '3')),
        d: one('a', d('Deleted', 'a', '4')),
        e: one('b', d('Updated', 'b', '5')),
      });
      const out = input.pipe(processDeltas<Obj, string>((entry) => timer(10).pipe(map(() => label(entry)))));
      // a1 is handled 0→10; meanwhile b, a (updated, deleted twice) and b again queue up as two entries: b then a.
      expectObservable(out).toBe('10ms x 9ms y 9ms (z|)', {
        x: 'a:Added1',
        y: 'b:Added2,Updated5',
        z: 'a:Updated3,Deleted4',
      });
      // the source completes at 8; the output waits for the backlog
      expectSubscriptions(input.subscriptions).toBe('^-------!');
    });
  });

  it('deltas for the key being handled queue behind it as a new entry', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const input = hot('ab', { a: one('a', d('Added', 'a', '1')), b: one('a', d('Updated', 'a', '2')) });
      const out = input.pipe(processDeltas<Obj, string>((entry) => timer(3).pipe(map(() => label(entry)))));
      expectObservable(out).toBe('---x--y', { x: 'a:Added1', y: 'a:Updated2' });
      expectSubscriptions(input.subscriptions).toBe('^');
    });
  });

  it('the backlog never holds more entries than distinct keys, however much arrives while the handler is busy', () => {
    const ts = testScheduler();
    ts.run(({ hot, flush, expectSubscriptions }) => {
      const values: Record<string, FifoOutput<Obj>> = {};
      let marbles = 'f';
      values.f = one('first', d('Added', 'first', '0'));
      const keys = ['k1', 'k2', 'k3'];
      for (let i = 0; i < 60; i++) {
        const key = keys[i % 3]!;
        values[String.fromCharCode(0x100 + i)] = one(key, d(i % 7 === 6 ? 'Deleted' : 'Updated', key, String(i + 1)));
      }
      marbles += Object.keys(values)
        .filter((k) => k !== 'f')
        .join('');
      const input = hot(marbles, values);
      const handled: Deltas<Obj>[] = [];
      input.pipe(processDeltas<Obj, never>((entry) => (handled.push(entry), timer(100).pipe(map(() => undefined as never))))).subscribe();
      flush();
      expect(handled.map((h) => h.key)).toEqual(['first', 'k1', 'k2', 'k3']);
      // every delta arrived, in order, per key (Deleted never follows a Deleted here, so nothing collapses)
      expect(handled[1]?.deltas).toHaveLength(20);
      expect(
        handled.slice(1).map((h) => h.deltas.map((x) => ('metadata' in x.object ? Number(x.object.metadata.resourceVersion) : -1))),
      ).toEqual(keys.map((_, k) => Array.from({ length: 20 }, (_, j) => 3 * j + k + 1)));
      expectSubscriptions(input.subscriptions).toBe('^');
    });
  });

  it('splits a multi-key batch into per-key entries, and ignores bookmarks, watch starts and errors', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const batch: FifoOutput<Obj> = {
        type: 'deltas',
        cause: 'replace',
        resourceVersion: '9',
        items: [
          { key: 'x', deltas: [d('Replaced', 'x', '1')], isInInitialList: true },
          { key: 'y', deltas: [d('Replaced', 'y', '2')], isInInitialList: true },
        ],
      };
      const input = cold('-bwer|', {
        b: { type: 'bookmark', resourceVersion: '3' },
        w: { type: 'watch', resourceVersion: '3' },
        e: { type: 'error', error: new InformerError('ServerError', 'x') },
        r: batch,
      } satisfies Record<string, FifoOutput<Obj>>);
      const out = input.pipe(
        processDeltas<Obj, string>((entry) => timer(2).pipe(map(() => `${label(entry)}/${String(entry.isInInitialList)}`))),
      );
      expectObservable(out).toBe('------x-(y|)', { x: 'x:Replaced1/true', y: 'y:Replaced2/true' });
      expectSubscriptions(input.subscriptions).toBe('^----!');
    });
  });

  it('unsubscribing stops the running handler', () => {
    const ts = testScheduler();
    ts.run(({ hot, expectObservable, expectSubscriptions, cold }) => {
      const work = cold('----x|');
      const input = hot('a', { a: one('a', d('Added', 'a', '1')) });
      expectObservable(input.pipe(processDeltas<Obj, string>(() => work)), '^-!').toBe('---');
      expectSubscriptions(input.subscriptions).toBe('^-!');
      expectSubscriptions(work.subscriptions).toBe('^-!');
    });
  });

  it('unsubscribing with a backlog waiting stops the running handler and starts no other', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions, cold }) => {
      const work = cold('---x|');
      const input = hot('ab-c', {
        a: one('a', d('Added', 'a', '1')),
        b: one('b', d('Added', 'b', '2')),
        c: one('c', d('Added', 'c', '3')),
      });
      const sub = '      ^-----!';
      // a runs 0→4, b 4→8: unsubscribed at 6, while b runs and c waits.
      expectObservable(input.pipe(processDeltas<Obj, string>(() => work)), sub).toBe('---x--');
      expectSubscriptions(input.subscriptions).toBe(sub);
      expectSubscriptions(work.subscriptions).toBe(['^---!', '----^-!']);
    });
  });

  it('an error from the handler ends the output and unsubscribes the source', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions, cold }) => {
      const failure = new Error('handler broke');
      const work = cold('--#', undefined, failure);
      const input = hot('-ab---', { a: one('a', d('Added', 'a', '1')), b: one('b', d('Added', 'b', '2')) });
      expectObservable(input.pipe(processDeltas<Obj, string>(() => work))).toBe('---#', undefined, failure);
      expectSubscriptions(input.subscriptions).toBe('^--!');
      expectSubscriptions(work.subscriptions).toBe('-^-!');
    });
  });

  it('an error from the source ends the output and stops the running handler', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions, cold }) => {
      const failure = new Error('source broke');
      const work = cold('-----x|');
      const input = hot('-a-#', { a: one('a', d('Added', 'a', '1')) }, failure);
      expectObservable(input.pipe(processDeltas<Obj, string>(() => work))).toBe('---#', undefined, failure);
      expectSubscriptions(input.subscriptions).toBe('^--!');
      expectSubscriptions(work.subscriptions).toBe('-^-!');
    });
  });

  describe('behind deltaFifo (client-go DeltaFIFO rules across the two operators)', () => {
    it('a resync adds no Sync for a key that still has deltas waiting in processDeltas', () => {
      testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const a1 = o('a', '1'),
          b1 = o('b', '1'),
          b2 = o('b', '2');
        // r: list a, b (frame 0); m: modify b (frame 1); t: resync (frame 2), while the handler is busy with the list.
        const input = hot<SourceEvent<Obj>>('rmt', {
          r: { type: 'replace', items: [a1, b1], resourceVersion: '1' },
          m: { type: 'modified', object: b2, resourceVersion: '2' },
          t: { type: 'resync' },
        });
        const out = input.pipe(
          deltaFifo(),
          processDeltas<Obj, string>((entry) => timer(10).pipe(map(() => label(entry)))),
        );
        // a: handled first (0-10); b waits with Replaced1,Updated2, so the tick adds no Sync to it; a gets its Sync.
        expectObservable(out).toBe('10ms x 9ms y 9ms z', { x: 'ns/a:Replaced1', y: 'ns/b:Replaced1,Updated2', z: 'ns/a:Sync1' });
        expectSubscriptions(input.subscriptions).toBe('^');
      });
    });

    it('a real delete arriving after a relist tombstone replaces the tombstone while it waits', () => {
      testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const a1 = o('a', '1'),
          b1 = o('b', '1'),
          b7 = o('b', '7');
        const input = hot<SourceEvent<Obj>>('r 20ms R d', {
          r: { type: 'replace', items: [a1, b1], resourceVersion: '1' },
          R: { type: 'replace', items: [a1], resourceVersion: '5' },
          d: { type: 'deleted', object: b7, resourceVersion: '7' },
        });
        const seen: Deltas<Obj>[] = [];
        const out = input.pipe(
          deltaFifo(),
          processDeltas<Obj, string>((entry) => (seen.push(entry), timer(10).pipe(map(() => label(entry))))),
        );
        // frame 21: a (Replaced) is handled until 31; b's tombstone waits, and the delete at 22 takes its place.
        expectObservable(out).toBe('10ms x 9ms y 10ms z 9ms w', {
          x: 'ns/a:Replaced1',
          y: 'ns/b:Replaced1',
          z: 'ns/a:Replaced1',
          w: 'ns/b:Deleted7',
        });
        expectSubscriptions(input.subscriptions).toBe('^');
      });
    });

    it('a delete after a tombstone that was already handled is dropped (client-go ignores it)', () => {
      testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const a1 = o('a', '1'),
          b1 = o('b', '1'),
          b7 = o('b', '7');
        const input = hot<SourceEvent<Obj>>('r 20ms R 20ms d', {
          r: { type: 'replace', items: [a1, b1], resourceVersion: '1' },
          R: { type: 'replace', items: [a1], resourceVersion: '5' },
          d: { type: 'deleted', object: b7, resourceVersion: '7' },
        });
        const out = input.pipe(
          deltaFifo(),
          processDeltas<Obj, string>((entry) => timer(1).pipe(map(() => label(entry)))),
        );
        // The tombstone is handled at 23; the delete at 42 finds nothing waiting and is dropped.
        expectObservable(out).toBe('-yv 19ms zw', { y: 'ns/a:Replaced1', v: 'ns/b:Replaced1', z: 'ns/a:Replaced1', w: 'ns/b:Deleted' });
        expectSubscriptions(input.subscriptions).toBe('^');
      });
    });
  });
});
