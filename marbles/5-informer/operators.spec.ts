import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
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

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('ofType', () => {
  it('keeps only the given types', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const source = cold('-a-u-s-d-|', events);
      expectObservable(source.pipe(ofType('updated'))).toBe('---u-s---|', events);
      expectObservable(source.pipe(ofType('added', 'deleted'))).toBe('-a-----d-|', events);
      expectObservable(source.pipe(ofType())).toBe('---------|');
    });
  });

  it('narrows the event type', () => {
    const rvs: string[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const olds = cold('-a-u-d|', events).pipe(ofType('updated'));
      // `oldObject` only exists on updated events: this compiles only if the type was narrowed.
      olds.subscribe((e) => rvs.push(e.oldObject.metadata.resourceVersion ?? ''));
      expectObservable(olds).toBe('---u--|', events);
    });
    expect(rvs).toEqual(['1']);
  });

  it('passes errors through', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const failure = new Error('x');
      expectObservable(cold('-a-#', events, failure).pipe(ofType('deleted'))).toBe('---#', undefined, failure);
    });
  });
});

describe('skipResync', () => {
  it('drops updated events that changed nothing, keeps everything else', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-s-u-s-d-|', events).pipe(skipResync())).toBe('-a---u---d-|', events);
    });
  });

  it('passes errors through', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const failure = new Error('x');
      expectObservable(cold('-s-#', events, failure).pipe(skipResync())).toBe('---#', undefined, failure);
    });
  });
});

describe('ofType, skipResync and where together', () => {
  it('keep the narrowing: after ofType(\'updated\') every later operator still has oldObject', () => {
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
