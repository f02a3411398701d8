import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { Observable, ReplaySubject, take } from 'rxjs';
import { Store } from '../../src/4-store/store.ts';
import type { InformerEvent } from '../../src/4-store/informerEvent.ts';
import type { InformerState } from '../../src/4-store/reduceDeltas.ts';
import { sharedEvents } from '../../src/5-informer/sharedEvents.ts';

type Obj = { metadata: { name: string; namespace?: string } };
const obj = (name: string): Obj => ({ metadata: { name, namespace: 'ns' } });

/** A state stream like the informer's: replays the latest state, counts its subscriptions. */
function states() {
  const subject = new ReplaySubject<InformerState<Obj>>(1);
  let store = Store.empty<Obj>();
  let subscriptions = 0;
  let active = 0;
  const state$ = new Observable<InformerState<Obj>>((subscriber) => {
    subscriptions++;
    active++;
    const inner = subject.subscribe(subscriber);
    return () => {
      active--;
      inner.unsubscribe();
    };
  });
  const step = (...added: Obj[]) => {
    store = store.update(added.map((o) => [`ns/${o.metadata.name}`, o] as const));
    const events: InformerEvent<Obj>[] = added.map((object) => ({ type: 'added', object, isInInitialList: false }));
    subject.next({ store, synced: true, resourceVersion: '', events, errors: [], step: 'event' });
  };
  return { state$, step, complete: () => subject.complete(), counts: () => ({ subscriptions, active }) };
}

const names = (events: InformerEvent<Obj>[]) => events.map((e) => `${e.isInInitialList ? 'i' : ''}${e.object.metadata.name}`);

/** Marble values for a state stream: state `A` adds object a to the store, `B` then adds b, and so on; each step's events are its `added` event. */
function stateSteps(...added: string[]): Record<string, InformerState<Obj>> {
  let store = Store.empty<Obj>();
  const values: Record<string, InformerState<Obj>> = {};
  for (const name of added) {
    const object = obj(name);
    store = store.update([[`ns/${name}`, object]]);
    values[name.toUpperCase()] = {
      store,
      synced: true,
      resourceVersion: '',
      events: [{ type: 'added', object, isInInitialList: false }],
      errors: [],
      step: 'event',
    };
  }
  return values;
}

/** Marble values for the events: `i` a's added event in a snapshot; `b`, `c`, `d` live added events. */
const eventValues: Record<string, InformerEvent<Obj>> = {
  i: { type: 'added', object: obj('a'), isInInitialList: true },
  b: { type: 'added', object: obj('b'), isInInitialList: false },
  c: { type: 'added', object: obj('c'), isInInitialList: false },
  d: { type: 'added', object: obj('d'), isInInitialList: false },
};

describe('sharedEvents', () => {
  it('one upstream subscription for every subscriber; each gets the snapshot, then live events', () => {
    const s = states();
    s.step(obj('a'));
    const events$ = sharedEvents(s.state$);
    const first: InformerEvent<Obj>[] = [];
    const second: InformerEvent<Obj>[] = [];
    const one = events$.subscribe((e) => first.push(e));
    s.step(obj('b'), obj('c'));
    const two = events$.subscribe((e) => second.push(e));
    s.step(obj('d'));
    expect(names(first)).toEqual(['ia', 'b', 'c', 'd']);
    expect(names(second).slice(0, 3).sort()).toEqual(['ia', 'ib', 'ic']);
    expect(names(second).slice(3)).toEqual(['d']);
    expect(s.counts()).toEqual({ subscriptions: 1, active: 1 });
    one.unsubscribe();
    expect(s.counts().active).toBe(1);
    two.unsubscribe();
    expect(s.counts().active).toBe(0);
  });

  it('a subscriber that joins while a step is being delivered gets no duplicate of that step', () => {
    const s = states();
    const events$ = sharedEvents(s.state$);
    const late: InformerEvent<Obj>[] = [];
    let joined = false;
    events$.subscribe((e) => {
      if (!joined && e.object.metadata.name === 'x') {
        joined = true;
        events$.subscribe((f) => late.push(f));
      }
    });
    s.step(obj('x'), obj('y'));
    s.step(obj('z'));
    // x and y come in the snapshot (the store after the step), never again as live events.
    expect(names(late).slice(0, 2).sort()).toEqual(['ix', 'iy']);
    expect(names(late).slice(2)).toEqual(['z']);
  });

  it('a subscriber that leaves during its snapshot leaves nothing subscribed', () => {
    const s = states();
    s.step(obj('a'), obj('b'));
    const got: InformerEvent<Obj>[] = [];
    sharedEvents(s.state$)
      .pipe(take(1))
      .subscribe((e) => got.push(e));
    expect(got).toHaveLength(1);
    expect(s.counts()).toEqual({ subscriptions: 1, active: 0 });
  });

  it('reconnects after the last subscriber left, and passes completion to every subscriber', () => {
    const s = states();
    const events$ = sharedEvents(s.state$);
    events$.subscribe().unsubscribe();
    let completed = 0;
    events$.subscribe({ complete: () => completed++ });
    events$.subscribe({ complete: () => completed++ });
    expect(s.counts()).toEqual({ subscriptions: 2, active: 1 });
    s.complete();
    expect(completed).toBe(2);
    expect(s.counts().active).toBe(0);
  });

  it('a state stream that ends during the subscribe is subscribed afresh by the next subscriber', () => {
    const s = states();
    s.step(obj('a'));
    s.complete();
    const events$ = sharedEvents(s.state$);
    let completed = 0;
    const got: InformerEvent<Obj>[] = [];
    events$.subscribe({ next: (e) => got.push(e), complete: () => completed++ });
    events$.subscribe({ next: (e) => got.push(e), complete: () => completed++ });
    expect(names(got)).toEqual(['ia', 'ia']);
    expect(completed).toBe(2);
    expect(s.counts()).toEqual({ subscriptions: 2, active: 0 });
  });

  describe('the shared subscription to the state stream (marbles)', () => {
    it('is taken by the first subscriber and ended at the frame the last one leaves', () => {
      testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const state$ = hot('-A--B--C--D---', stateSteps('a', 'b', 'c', 'd'));
        const events$ = sharedEvents(state$);
        const first = '     ^-----!';
        const second = '    ---^--------!';
        // first: the snapshot of A as it comes, then b; second joins at 3: A's snapshot at once, then live events.
        expectObservable(events$, first).toBe('-i--b-', eventValues);
        expectObservable(events$, second).toBe('---ib--c--d-', eventValues);
        expectSubscriptions(state$.subscriptions).toBe('^-----------!');
      });
    });

    it('a sole subscriber that unsubscribes early ends it at that frame', () => {
      testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const state$ = hot('-A--B--C--', stateSteps('a', 'b', 'c'));
        const sub = '       ^---!';
        expectObservable(sharedEvents(state$), sub).toBe('-i--', eventValues);
        expectSubscriptions(state$.subscriptions).toBe(sub);
      });
    });

    it('is taken afresh by a subscriber that comes after the last one left', () => {
      testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const state$ = hot('-----A--B--C--', stateSteps('a', 'b', 'c'));
        const events$ = sharedEvents(state$);
        // the first leaves at 2, before any state; the second connects afresh at 3: its snapshot is A, at 5
        expectObservable(events$, '^-!').toBe('--', eventValues);
        expectObservable(events$, '---^-------!').toBe('-----i--b--', eventValues);
        expectSubscriptions(state$.subscriptions).toBe(['^-!', '---^-------!']);
      });
    });

    it('ends when the state stream completes or fails, passing that on', () => {
      testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const completing = hot('-A--B--|', stateSteps('a', 'b'));
        const completed$ = sharedEvents(completing);
        expectObservable(completed$).toBe('-i--b--|', eventValues);
        expectObservable(completed$, '--^-------').toBe('--i-b--|', eventValues);
        expectSubscriptions(completing.subscriptions).toBe('^------!');

        const failure = new Error('state stream broke');
        const failing = hot('-A--#', stateSteps('a'), failure);
        expectObservable(sharedEvents(failing)).toBe('-i--#', eventValues, failure);
        expectSubscriptions(failing.subscriptions).toBe('^---!');
      });
    });
  });
});
