import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { map, timer } from 'rxjs';
import { handleEvents, type InformerEvent, type KubeObject } from '../../src/index.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';

type Obj = { metadata: { name: string; resourceVersion: string } };
const obj = (name: string, rv: string): Obj => ({ metadata: { name, resourceVersion: rv } });
const added = (o: Obj): InformerEvent<Obj> => ({ type: 'added', object: o, isInInitialList: false });
const updated = (old: Obj, o: Obj): InformerEvent<Obj> => ({
  type: 'updated',
  oldObject: old,
  object: o,
  isInInitialList: false,
  resync: false,
});

describe('handleEvents', () => {
  it('coalesces a slow handler’s backlog per key and keeps first-arrival key order', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions, flush }) => {
      const a1 = obj('a', '1'),
        a2 = obj('a', '2'),
        a3 = obj('a', '3'),
        b1 = obj('b', '4');
      const events = hot('-w-x-y-z-----------|', { w: added(a1), x: updated(a1, a2), y: added(b1), z: updated(a2, a3) });
      const handled: string[] = [];
      const out = events.pipe(
        handleEvents<Obj>((e) => {
          handled.push(
            `${e.type}:${e.object.metadata.name}@${e.object.metadata.resourceVersion}${e.type === 'updated' ? `<${e.oldObject.metadata.resourceVersion}` : ''}`,
          );
          return cold('--------|');
        }),
      );
      // a1 runs 1→9; a2, b1 and a3 arrive meanwhile; a (merged) runs 9→17, b 17→25, then the output completes.
      expectObservable(out).toBe('-------------------------|');
      // the source completes at 19; the output waits for the backlog
      expectSubscriptions(events.subscriptions).toBe('^------------------!');
      flush();
      // a1 ran first; a2 and a3 merged into one update (old 1 → new 3); b waited its turn behind a.
      expect(handled).toEqual(['added:a@1', 'updated:a@3<1', 'added:b@4']);
    });
  });

  it('reports a throwing or failing handler as HandlerError and carries on', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const events = hot('-a-b-c-|', { a: added(obj('a', '1')), b: added(obj('b', '2')), c: added(obj('c', '3')) });
      const out = events.pipe(
        handleEvents<Obj>((e) => {
          if (e.object.metadata.name === 'a') throw new Error('boom');
          if (e.object.metadata.name === 'b')
            return timer(1).pipe(
              map(() => {
                throw new Error('late');
              }),
            );
          return undefined;
        }),
        map((error) => `${error.reason}:${error.key}`),
      );
      expectObservable(out).toBe('-a--b--|', { a: 'HandlerError:a', b: 'HandlerError:b' });
      expectSubscriptions(events.subscriptions).toBe('^------!');
    });
  });

  it('dispatches to per-type handlers', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions, flush }) => {
      const seen: string[] = [];
      const a = obj('a', '1');
      const events = hot('-a-u-|', { a: added(a), u: updated(a, obj('a', '2')) });
      expectObservable(events.pipe(handleEvents<Obj>({ updated: (e) => void seen.push(e.object.metadata.resourceVersion) }))).toBe(
        '-----|',
      );
      expectSubscriptions(events.subscriptions).toBe('^----!');
      flush();
      expect(seen).toEqual(['2']);
    });
  });

  it('unsubscribing unsubscribes the source and the running handler at that frame, and starts no other', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const work = cold('----|');
      const events = hot('-a-b----', { a: added(obj('a', '1')), b: added(obj('b', '2')) });
      const sub = '       ^---!';
      // a's handler runs 1→5 with b waiting; unsubscribed at 4.
      expectObservable(events.pipe(handleEvents<Obj>(() => work)), sub).toBe('----');
      expectSubscriptions(events.subscriptions).toBe(sub);
      expectSubscriptions(work.subscriptions).toBe('-^--!');
    });
  });

  it('an error from the source ends the output and stops the running handler', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const failure = new Error('source broke');
      const work = cold('-----|');
      const events = hot('-a-#', { a: added(obj('a', '1')) }, failure);
      expectObservable(events.pipe(handleEvents<Obj>(() => work))).toBe('---#', undefined, failure);
      expectSubscriptions(events.subscriptions).toBe('^--!');
      expectSubscriptions(work.subscriptions).toBe('-^-!');
    });
  });
});

describe('a slow on() handler and a resync of an object of the initial list it has not reached', () => {
  it('hands the object as added with isInInitialList: true (the resync changed nothing)', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, flush }) => {
      scheduler.maxFrames = 2_000; // the resync ticks for ever
      const source = cold<SourceEvent<KubeObject>>('l', { l: listed('10', kubeObj('a'), kubeObj('b')) });
      const inf = fakeInformer(fakeResource(), source, { resyncPeriod: 500, scheduler });
      const handled: string[] = [];
      inf.on((e) => {
        handled.push(
          `${e.type}:${e.object.metadata.name}${e.isInInitialList ? ' initial' : ''}${e.type === 'updated' ? ` resync=${e.resync}` : ''}`,
        );
        // a takes 800 ms: the resync at 500 ms finds b still waiting behind it
        return e.object.metadata.name === 'a' ? cold('800ms |') : undefined;
      });
      flush();
      expect(handled.slice(0, 3)).toEqual(['added:a initial', 'added:b initial', 'updated:a resync=true']);
    });
  });
});
