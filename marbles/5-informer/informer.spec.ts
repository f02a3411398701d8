import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { TestScheduler } from 'rxjs/testing';
import { filter, first, type Observable, type Subscription } from 'rxjs';
import {
  customResource,
  informer,
  stripManagedFields,
  type InformerEvent,
  type InformerOptions,
  type KubeObject,
  type Store,
} from '../../src/index.ts';
import { type WatchFrame } from '../../src/pipeline.ts';
import { fakeListWatch, httpFailure, listPage, watchEvent, type FakeListWatch } from '../support/fakeListWatch.ts';

const GUARD_MS = 24 * 3600_000;

type Obj = KubeObject;
const Widgets = customResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });
const o = (name: string, rv: string, labels?: Record<string, string>): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns', resourceVersion: rv, ...(labels ? { labels } : {}) },
});

const added = (object: Obj, isInInitialList: boolean): InformerEvent<Obj> => ({ type: 'added', object, isInInitialList });
const updated = (oldObject: Obj, object: Obj, resync = false): InformerEvent<Obj> => ({
  type: 'updated',
  oldObject,
  object,
  isInInitialList: false,
  resync,
});
const deleted = (object: Obj, finalStateUnknown = false): InformerEvent<Obj> => ({
  type: 'deleted',
  object,
  finalStateUnknown,
  isInInitialList: false,
});

function scenario(body: (ts: TestScheduler, helpers: Parameters<Parameters<TestScheduler['run']>[0]>[0]) => void): void {
  const ts = testScheduler();
  ts.run((helpers) => {
    ts.maxFrames = GUARD_MS;
    body(ts, helpers);
  });
}

function make(ts: TestScheduler, fake: FakeListWatch, options: InformerOptions<Obj> = {}) {
  return informer(fake, Widgets, { scheduler: ts, random: () => 0, ...options });
}

/** The test's own scheduled actions (so that "nothing pending" can leave them out). */
const testActions = new WeakSet<object>();
function at(ts: TestScheduler, frame: number, work: () => void): void {
  testActions.add(ts.schedule(work, frame - ts.now()));
}
/** Scheduled actions that are not the test's own: timers left by the code under test. */
const pendingTimers = (ts: TestScheduler) => ts.actions.filter((action) => !testActions.has(action)).length;

/** Subscribes at frame `from` (0: now), unsubscribes at `until`; logs what arrives with its frame. */
function record<V>(ts: TestScheduler, source: Observable<V>, from: number, until?: number) {
  const log: [number, V][] = [];
  let subscription: Subscription | undefined;
  const subscribe = () => (subscription = source.subscribe((value) => log.push([ts.now(), value])));
  if (from === 0) subscribe();
  else at(ts, from, subscribe);
  if (until !== undefined) at(ts, until, () => subscription?.unsubscribe());
  return log;
}

const nameOf = (e: InformerEvent<Obj>) => e.object.metadata.name;

describe('informer over a fake ListWatch', () => {
  it('events$: the initial list as added with isInInitialList, then watch events', () => {
    scenario((ts, { cold, expectObservable }) => {
      const a = o('a', '5'),
        b = o('b', '7'),
        c = o('c', '11'),
        a2 = o('a', '12'),
        b3 = o('b', '13');
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [a, b]) })],
        watches: [
          cold<WatchFrame>('-----c-m-d', { c: watchEvent('ADDED', c), m: watchEvent('MODIFIED', a2), d: watchEvent('DELETED', b3) }),
        ],
      });
      const pods = make(ts, fake);
      expectObservable(pods.events$, '^----------!').toBe('-(ab)-c-u-d', {
        a: added(a, true),
        b: added(b, true),
        c: added(c, false),
        u: updated(a, a2),
        d: deleted(b3),
      });
    });
  });

  it('a late subscriber first gets the cache as added (isInInitialList) then live events: no gap, no duplicate', () => {
    scenario((ts, { cold, flush }) => {
      const a = o('a', '5'),
        b = o('b', '7'),
        c = o('c', '11'),
        a2 = o('a', '12'),
        d = o('d', '14');
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [a, b]) })],
        watches: [cold<WatchFrame>('-----c-m-n', { c: watchEvent('ADDED', c), m: watchEvent('MODIFIED', a2), n: watchEvent('ADDED', d) })],
      });
      const pods = make(ts, fake);
      const early = record(ts, pods.events$, 0, 50);
      const late = record(ts, pods.events$, 7, 50); // joins after c was added (6), before a is modified (8)
      flush();
      const replayed = late.filter(([t]) => t === 7).map(([, e]) => e);
      expect(replayed.map(nameOf).sort()).toEqual(['a', 'b', 'c']);
      expect(replayed.every((e) => e.type === 'added' && e.isInInitialList)).toBe(true);
      expect(late.filter(([t]) => t > 7)).toEqual([
        [8, updated(a, a2)],
        [10, added(d, false)],
      ]);
      // the early subscriber saw the same live tail
      expect(early.filter(([t]) => t > 7)).toEqual(late.filter(([t]) => t > 7));
      expect(early.filter(([t]) => t <= 7).map(([t, e]) => [t, nameOf(e), e.isInInitialList])).toEqual([
        [1, 'a', true],
        [1, 'b', true],
        [6, 'c', false],
      ]);
      expect(fake.lists).toHaveLength(1);
    });
  });

  it('synced$ goes false → true once the initial list is in (and replays it)', () => {
    scenario((ts, { cold, expectObservable }) => {
      const fake = fakeListWatch({ lists: [cold('--(p|)', { p: listPage('10', []) })] });
      const pods = make(ts, fake);
      expectObservable(pods.synced$, '^-----!').toBe('f-t', { f: false, t: true });
      expectObservable(pods.synced$, '----^-!').toBe('----t', { t: true });
    });
  });

  it('store$ replays the latest snapshot; a held snapshot never changes', () => {
    scenario((ts, { cold, flush }) => {
      const a = o('a', '5'),
        a2 = o('a', '12');
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [a]) })],
        watches: [cold<WatchFrame>('--m-x', { m: watchEvent('MODIFIED', a2), x: watchEvent('ADDED', o('x', '13')) })],
      });
      const pods = make(ts, fake);
      const stores = record(ts, pods.store$, 0, 20);
      const late = record(ts, pods.store$, 10, 20);
      flush();
      expect(stores.map(([t, s]) => [t, s.size])).toEqual([
        [0, 0],
        [1, 1],
        [3, 1],
        [5, 2],
      ]);
      const held = stores[1]![1] as Store<Obj>;
      expect(held.get('ns/a')).toEqual(a);
      expect(held.keys()).toEqual(['ns/a']);
      expect(held.byIndex('namespace', 'ns')).toEqual([a]);
      expect(late).toHaveLength(1);
      expect(late[0]![0]).toBe(10);
      expect(late[0]![1]).toBe(stores[3]![1]);
      expect(late[0]![1].get('ns/a')).toEqual(a2);
    });
  });

  it('all subscribers (events$, store$, synced$, errors$, state$, on) share one list and one watch', () => {
    scenario((ts, { cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [o('a', '1')]) })],
        watches: [cold<WatchFrame>('--a', { a: watchEvent('ADDED', o('b', '11')) })],
      });
      const pods = make(ts, fake);
      const handled: string[] = [];
      const subscriptions = [
        pods.events$.subscribe(),
        pods.store$.subscribe(),
        pods.synced$.subscribe(),
        pods.errors$.subscribe(),
        pods.state$.subscribe(),
        pods.on((e) => void handled.push(`${e.type} ${e.object.metadata.name}`)),
      ];
      at(ts, 2, () => pods.events$.subscribe().unsubscribe());
      at(ts, 20, () => subscriptions.forEach((s) => s.unsubscribe()));
      flush();
      expect(fake.lists).toHaveLength(1);
      expect(fake.watches).toHaveLength(1);
      expect(fake.maxActive).toBe(1);
      expect(handled).toEqual(['added a', 'added b']);
    });
  });

  it('the last unsubscribe tears the list/watch down; a new subscriber starts afresh', () => {
    scenario((ts, { cold, flush }) => {
      const a = o('a', '5'),
        b = o('b', '11');
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [a]) }), cold('-(p|)', { p: listPage('20', [a, b]) })],
        watches: [cold<WatchFrame>('-b', { b: watchEvent('ADDED', b) })],
      });
      const pods = make(ts, fake);
      const first = record(ts, pods.events$, 0, 5);
      const second = record(ts, pods.synced$, 3, 7);
      let afterTeardown = { active: -1, pending: -1 };
      at(ts, 7, () => (afterTeardown = { active: fake.active, pending: pendingTimers(ts) }));
      const again = record(ts, pods.events$, 10, 30);
      const againSynced = record(ts, pods.synced$, 10, 30);
      flush();
      expect(first).toEqual([
        [1, added(a, true)],
        [2, added(b, false)],
      ]);
      expect(second).toEqual([[3, true]]);
      // Still open after the first subscriber left (5), closed when the second left (7).
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 7 });
      expect(afterTeardown).toEqual({ active: 0, pending: 0 });
      // Fresh: a new list from rv "0", an empty cache, synced false again.
      expect(fake.lists.map((l) => [l.calledAt, l.options.resourceVersion])).toEqual([
        [0, '0'],
        [10, '0'],
      ]);
      expect(again.map(([t, e]) => [t, e.type, nameOf(e), e.isInInitialList])).toEqual([
        [11, 'added', 'a', true],
        [11, 'added', 'b', true],
      ]);
      expect(againSynced).toEqual([
        [10, false],
        [11, true],
      ]);
    });
  });

  it('errors$ receives source errors as they happen (not replayed to later subscribers)', () => {
    scenario((ts, { cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('--#', undefined, httpFailure(500))],
      });
      const pods = make(ts, fake);
      const errors = record(ts, pods.errors$, 0, 2000);
      const late = record(ts, pods.errors$, 10, 2000);
      flush();
      expect(errors.map(([t, e]) => [t, e.reason, e.status, e.phase])).toEqual([[3, 'ServerError', 500, 'watch']]);
      expect(late).toEqual([]);
      // the informer went on: re-watched after the backoff
      expect(fake.watches.map((w) => w.calledAt)).toEqual([1, 803]);
    });
  });

  it('resyncPeriod re-delivers cached objects as updated with resync: true', () => {
    scenario((ts, { cold, flush }) => {
      const a = o('a', '5');
      const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', [a]) })] });
      const pods = make(ts, fake, { resyncPeriod: 10 });
      const events = record(ts, pods.events$, 0, 25);
      flush();
      expect(events).toEqual([
        [1, added(a, true)],
        [11, updated(a, a, true)],
        [21, updated(a, a, true)],
      ]);
    });
  });

  it('applies indexers and the transform before caching', () => {
    scenario((ts, { cold, flush }) => {
      const a = {
        ...o('a', '5', { app: 'web' }),
        metadata: { ...o('a', '5', { app: 'web' }).metadata, managedFields: [{ manager: 'kubectl' }] },
      };
      const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', [a, o('b', '6', { app: 'db' })]) })] });
      const pods = make(ts, fake, {
        transform: stripManagedFields,
        indexers: { app: (x) => (x.metadata.labels?.app ? [x.metadata.labels.app] : []) },
      });
      const stores = record(ts, pods.store$, 0, 5);
      flush();
      const store = stores[stores.length - 1]![1];
      expect(store.indexKeys('app', 'web')).toEqual(['ns/a']);
      expect(store.get('ns/a')?.metadata).not.toHaveProperty('managedFields');
    });
  });

  it('BUG: a subscriber that leaves synchronously once synced (first(Boolean), as waitForCacheSync-style code does) leaves no request open', () => {
    scenario((ts, { cold, flush }) => {
      const fake = fakeListWatch({ lists: [cold('-(p|)', { p: listPage('10', [o('a', '1')]) })] });
      const pods = make(ts, fake);
      let synced = false;
      pods.synced$.pipe(first(Boolean)).subscribe(() => (synced = true));
      let after = { active: -1, pending: -1 };
      at(ts, 5, () => (after = { active: fake.active, pending: pendingTimers(ts) }));
      flush();
      expect(synced).toBe(true);
      // The informer had no subscriber left after frame 1, yet listAndWatch opened a watch (and its stall timer
      // keeps reopening it): see listAndWatch.spec.ts "leaves synchronously".
      expect(after).toEqual({ active: 0, pending: 0 });
      expect(fake.watches).toHaveLength(0);
    });
  });

  it('a subscriber that leaves synchronously on a watch event leaves nothing open', () => {
    scenario((ts, { cold, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', []) })],
        watches: [cold<WatchFrame>('--a', { a: watchEvent('ADDED', o('a', '11')) })],
      });
      const pods = make(ts, fake);
      pods.events$
        .pipe(
          filter((e) => e.type === 'added'),
          first(),
        )
        .subscribe();
      let after = { active: -1, pending: -1 };
      at(ts, 5, () => (after = { active: fake.active, pending: pendingTimers(ts) }));
      flush();
      expect(after).toEqual({ active: 0, pending: 0 });
      expect(fake.watches[0]).toMatchObject({ end: 'unsubscribe', endedAt: 3 });
    });
  });
});
