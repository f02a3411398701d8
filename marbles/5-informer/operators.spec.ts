import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { ofType, skipResync, type InformerEvent, type KubeObject } from '../../src/index.ts';
import { generationChanged, where } from '../../src/controller/index.ts';

type Obj = KubeObject;
const o = (name: string, rv: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
const events: Record<string, InformerEvent<Obj>> = {
  a: { type: 'added', object: o('a', '1'), isInInitialList: true },
  u: { type: 'updated', oldObject: o('a', '1'), object: o('a', '2'), isInInitialList: false, resync: false },
  s: { type: 'updated', oldObject: o('a', '2'), object: o('a', '2'), isInInitialList: false, resync: true },
  d: { type: 'deleted', object: o('a', '2'), finalStateUnknown: false, isInInitialList: false },
};

describe('ofType', () => {
  it('keeps only the given types', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-u-s-d-|', events);
      expectObservable(source.pipe(ofType('updated'))).toBe('---u-s---|', events);
      expectObservable(source.pipe(ofType('added', 'deleted'))).toBe('-a-----d-|', events);
      // subscribed once by each pipe
      expectSubscriptions(source.subscriptions).toBe(['^--------!', '^--------!']);
    });
  });

  it('takes at least one type, each one of ours (it kept nothing for none, dropped everything for a word of client-node)', () => {
    // @ts-expect-error no type: a compile error (it was typed as every event and kept none)
    expect(() => ofType()).toThrow(/^ofType: expected one or more of 'added', 'updated', 'deleted', got none/);
    const fromJavaScript = ofType as (...types: string[]) => unknown;
    for (const word of ['modified', 'add', 'MODIFIED'])
      expect(() => fromJavaScript('added', word)).toThrow(
        new RegExp(`^ofType: expected one or more of 'added', 'updated', 'deleted', got "${word}"; client-node's on\\('add', cb\\)`),
      );
    expect(() => (ofType as (...types: unknown[]) => unknown)(undefined)).toThrow(TypeError);
    // @ts-expect-error a word of client-node's is no type of ours
    expect(() => ofType('add')).toThrow(TypeError);
  });

  it('narrows the event type', () => {
    const rvs: string[] = [];
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-u-d|', events);
      const olds = source.pipe(ofType('updated'));
      // `oldObject` only exists on updated events: this compiles only if the type was narrowed.
      olds.subscribe((e) => rvs.push(e.oldObject.metadata.resourceVersion ?? ''));
      expectObservable(olds).toBe('---u--|', events);
      expectSubscriptions(source.subscriptions).toBe(['^-----!', '^-----!']);
    });
    expect(rvs).toEqual(['1']);
  });

  it('passes errors through', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const failure = new Error('x');
      const source = cold('-a-#', events, failure);
      expectObservable(source.pipe(ofType('deleted'))).toBe('---#', undefined, failure);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('unsubscribing unsubscribes the source at that frame', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-u-s-d-|', events);
      const sub = '       ^----!';
      expectObservable(source.pipe(ofType('updated')), sub).toBe('---u-', events);
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });
});

describe('skipResync', () => {
  it('drops updated events that changed nothing, keeps everything else', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-s-u-s-d-|', events);
      expectObservable(source.pipe(skipResync())).toBe('-a---u---d-|', events);
      expectSubscriptions(source.subscriptions).toBe('^----------!');
    });
  });

  it('passes errors through', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const failure = new Error('x');
      const source = cold('-s-#', events, failure);
      expectObservable(source.pipe(skipResync())).toBe('---#', undefined, failure);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('unsubscribing unsubscribes the source at that frame', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-s-u-s-d-|', events);
      const sub = '       ^------!';
      expectObservable(source.pipe(skipResync()), sub).toBe('-a---u-', events);
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });
});

describe('where', () => {
  it('keeps the events the predicate accepts; unsubscribing unsubscribes the source at that frame', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const g1 = { metadata: { name: 'a', namespace: 'ns', resourceVersion: '1', generation: 1 } };
      const g2 = { metadata: { name: 'a', namespace: 'ns', resourceVersion: '2', generation: 2 } };
      const g2status = { metadata: { name: 'a', namespace: 'ns', resourceVersion: '3', generation: 2 } };
      const values: Record<string, InformerEvent<Obj>> = {
        a: { type: 'added', object: g1, isInInitialList: false },
        x: { type: 'updated', oldObject: g1, object: g2, isInInitialList: false, resync: false },
        y: { type: 'updated', oldObject: g2, object: g2status, isInInitialList: false, resync: false },
        d: { type: 'deleted', object: g2status, finalStateUnknown: false, isInInitialList: false },
      };
      const source = hot('-a-x-y-d-|', values);
      const sub = '       ^------!';
      // y changed only the status (same generation): dropped; unsubscribed at 7, before d.
      expectObservable(source.pipe(where(generationChanged())), sub).toBe('-a-x---', values);
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });

  it('passes completion and errors through', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const completing = cold('-a-|', events);
      expectObservable(completing.pipe(where(generationChanged()))).toBe('-a-|', events);
      expectSubscriptions(completing.subscriptions).toBe('^--!');
      const failure = new Error('x');
      const failing = cold('-a-#', events, failure);
      expectObservable(failing.pipe(where(generationChanged()))).toBe('-a-#', events, failure);
      expectSubscriptions(failing.subscriptions).toBe('^--!');
    });
  });
});

describe('ofType, skipResync and where together', () => {
  it("keep the narrowing: after ofType('updated') every later operator still has oldObject", () => {
    const seen: string[] = [];
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-u-s-d-|', events);
      const updates = source.pipe(ofType('updated'), skipResync(), where(generationChanged()));
      // `oldObject` exists only on updated events: this compiles only if every operator kept the narrowed type.
      updates.subscribe((e) => seen.push(`${e.oldObject.metadata.resourceVersion} → ${e.object.metadata.resourceVersion}`));
      expectObservable(updates).toBe('---u-----|', events);
      expectSubscriptions(source.subscriptions).toBe(['^--------!', '^--------!']);
    });
    expect(seen).toEqual(['1 → 2']);
  });
});
