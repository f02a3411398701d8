import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { identity } from 'rxjs';
import { resync, type KubeObject, type SourceEvent } from '../../src/index.ts';

type Obj = KubeObject;
const a: Obj = { metadata: { name: 'a', namespace: 'ns', resourceVersion: '2' } };
const events: Record<string, SourceEvent<Obj>> = {
  R: { type: 'replace', items: [], resourceVersion: '1' },
  S: { type: 'replace', items: [a], resourceVersion: '3' },
  a: { type: 'added', object: a, resourceVersion: '2' },
  b: { type: 'bookmark', resourceVersion: '4' },
  r: { type: 'resync' },
};

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('resync', () => {
  it('ticks every period, counted from the first replace; nothing before it', () => {
    const ts = testScheduler();
    ts.run(({ hot, expectObservable }) => {
      const source = hot('-a-b--R-a---S-------', events);
      const sub = '      ^-------------------!';
      // ticks at 10, 14, 18: every 4 frames from the first replace (a second replace does not restart the clock)
      expectObservable(source.pipe(resync<Obj>(4, ts)), sub).toBe('-a-b--R-a-r-S-r---r-', events);
    });
  });

  it('keeps ticking until unsubscribed, and unsubscribing frees the timer', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable, flush }) => {
      const source = cold('R', events); // never completes
      expectObservable(source.pipe(resync<Obj>(3, ts)), '^---------!').toBe('R--r--r--r', events);
      flush();
      expect(ts.actions).toHaveLength(0);
    });
  });

  it('frees the timer on unsubscribe (no scheduled action left)', () => {
    const ts = testScheduler();
    ts.run(({ cold, flush }) => {
      const seen: string[] = [];
      const subscription = cold('-R', events)
        .pipe(resync<Obj>(5, ts))
        .subscribe((e) => seen.push(`${ts.now()}:${e.type}`));
      let pending = -1;
      ts.schedule(() => subscription.unsubscribe(), 13);
      ts.schedule(() => (pending = ts.actions.length), 13);
      flush();
      expect(seen).toEqual(['1:replace', '6:resync', '11:resync']);
      expect(pending).toBe(0);
    });
  });

  it('passes errors and completion through (and stops ticking)', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      expectObservable(cold('R----|', events).pipe(resync<Obj>(2, ts))).toBe('R-r-r|', events);
      const failure = new Error('x');
      expectObservable(cold('R--#', events, failure).pipe(resync<Obj>(2, ts))).toBe('R-r#', events, failure);
    });
  });

  it('a period of 0 (or less) disables it', () => {
    expect(resync(0)).toBe(identity);
    expect(resync(-5)).toBe(identity);
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      expectObservable(cold('R-----a-|', events).pipe(resync<Obj>(0, ts))).toBe('R-----a-|', events);
    });
  });
});
