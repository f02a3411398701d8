import { describe, expect, it } from 'vitest';
import { BehaviorSubject, EMPTY, Subject, defer, from, map, timer, type Observable, type ObservableInput } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { testScheduler } from '../support/testScheduler.ts';
import { ConfigMap, type InformerEvent } from '../../src/index.ts';
import { shardedInformer, type ShardSource } from '../../src/leaderelection/index.ts';
import { controller } from '../../src/controller/index.ts';
import type { ListWatch, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { listPage, watchEvent } from '../../src/testing/index.ts';

type Cm = { apiVersion: string; kind: string; metadata: { name: string; namespace: string; resourceVersion: string } };
const cm = (name: string, rv: string): Cm => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});

/** A server of ConfigMaps in virtual time: lists answer after `listMs`, watches see live changes. */
function world(scheduler: TestScheduler, objects: Cm[], listMs = 5) {
  const live = new Subject<WatchFrame>();
  let rv = 100;
  const current = new Map(objects.map((o) => [o.metadata.name, o]));
  const lists: number[] = [];
  const listWatch: ListWatch = {
    list: () =>
      defer(() => {
        lists.push(scheduler.now());
        return timer(listMs, scheduler).pipe(
          map(() =>
            listPage(
              String(rv),
              [...current.values()].map((o) => structuredClone(o)),
            ),
          ),
        );
      }),
    watch: () => live,
  };
  const change = (type: 'MODIFIED' | 'DELETED', name: string) => {
    rv++;
    const object = { ...cm(name, String(rv)) };
    if (type === 'DELETED') current.delete(name);
    else current.set(name, object);
    live.next(watchEvent(type, object));
  };
  return { listWatch, change, lists };
}

/** Shards by the number at the end of the name, modulo 2; held as the test says. */
function fakeShards(held$: BehaviorSubject<ReadonlySet<number>>): ShardSource {
  const shardOf = (key: string) => Number(/(\d+)$/.exec(key)?.[1] ?? 0) % 2;
  return {
    shards: 2,
    shardOf,
    held$,
    owns: (key) => held$.value.has(shardOf(key)),
    gate: <R>(key: string, work: () => ObservableInput<R>): Observable<R> =>
      defer(() => (held$.value.has(shardOf(key)) ? from(work()) : EMPTY)),
  };
}

const describeEvent = (e: InformerEvent<ConfigMap>) =>
  `${e.type}:${e.object.metadata.name}${e.type === 'deleted' && e.shardMoved ? ':moved' : ''}`;

describe('shardedInformer', () => {
  it('caches only held shards; a shard counts as owned only once its list is cached; a shard that leaves goes out as moves', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable }) => {
      scheduler.maxFrames = 100_000;
      const w = world(scheduler, [cm('a-0', '1'), cm('a-1', '2'), cm('b-2', '3'), cm('b-3', '4')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set());
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const events: string[] = [];
      const sizes: string[] = [];
      const owns: string[] = [];
      cms.events$.subscribe((e) => events.push(`${scheduler.now()} ${describeEvent(e)}`));
      cms.store$.subscribe((s) => sizes.push(`${scheduler.now()} ${s.keys().sort().join(',')}`));
      scheduler.schedule(() => held$.next(new Set([0])), 10);
      scheduler.schedule(() => owns.push(`12 ${cms.owns('ns/a-0')}`), 12);
      scheduler.schedule(() => owns.push(`16 ${cms.owns('ns/a-0')} ${cms.owns('ns/a-1')}`), 16);
      scheduler.schedule(() => w.change('MODIFIED', 'a-1'), 20); // shard 1: dropped
      scheduler.schedule(() => w.change('MODIFIED', 'a-0'), 21);
      scheduler.schedule(() => held$.next(new Set([0, 1])), 30);
      scheduler.schedule(() => w.change('DELETED', 'b-2'), 40); // a server delete
      scheduler.schedule(() => held$.next(new Set([1])), 50);
      scheduler.schedule(() => held$.next(new Set()), 200_000); // beyond maxFrames: not reached
      expectObservable(cms.owned$.pipe(map((s) => [...s].sort().join(''))), '^ 99999ms !').toBe('a 14ms b 19ms c 14ms d', {
        a: '',
        b: '0',
        c: '01',
        d: '1',
      });
      expectObservable(cms.acquired$, '^ 99999ms !').toBe('15ms a 19ms b', { a: 0, b: 1 });
      scheduler.flush();
      expect(w.lists).toEqual([0, 10, 30]);
      expect(owns).toEqual(['12 false', '16 true false']);
      expect(sizes).toEqual([
        '0 ',
        '15 ns/a-0,ns/b-2',
        '21 ns/a-0,ns/b-2',
        '35 ns/a-0,ns/a-1,ns/b-2,ns/b-3',
        '40 ns/a-0,ns/a-1,ns/b-3',
        '50 ns/a-1,ns/b-3',
      ]);
      expect(events).toEqual([
        '15 added:a-0',
        '15 added:b-2',
        '21 updated:a-0',
        // The list for shard 1 brings a-0 and b-2 back unchanged: no events for them.
        '35 added:a-1',
        '35 added:b-3',
        '40 deleted:b-2',
        '50 deleted:a-0:moved',
      ]);
    });
  });

  it('acquired$ subscribed once shards are owned: not those (they did not join), only the shards that join later', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable }) => {
      scheduler.maxFrames = 1_000; // the informer's timers go on for ever
      const w = world(scheduler, [cm('a-0', '1'), cm('a-1', '2')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0]));
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const owned: string[] = [];
      cms.owned$.subscribe((s) => owned.push(`${scheduler.now()} ${[...s].sort().join('')}`));
      scheduler.schedule(() => held$.next(new Set([0, 1])), 30);
      expectObservable(cms.acquired$, '20ms ^ 99ms !').toBe('35ms a', { a: 1 });
      scheduler.flush();
      expect(owned).toEqual(['0 ', '5 0', '35 01']);
    });
  });

  it('gate runs work for a key only once its shard is owned (held and its list cached), not while the list runs', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      scheduler.maxFrames = 1_000; // the informer's timers go on for ever
      const w = world(scheduler, [cm('a-0', '1')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0]));
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      cms.owned$.subscribe();
      const ran: string[] = [];
      const tryAt = (frame: number) =>
        scheduler.schedule(() => cms.gate('ns/a-0', () => [`ran ${frame}`]).subscribe((r) => ran.push(r)), frame);
      tryAt(2); // held, its list (0 to 5 ms) not cached yet
      tryAt(10);
      scheduler.flush();
      expect(ran).toEqual(['ran 10']);
    });
  });

  it('shards that arrive while a list runs start it again: one list for all of them, owned together', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable }) => {
      scheduler.maxFrames = 100_000;
      const w = world(scheduler, [cm('a-0', '1'), cm('a-1', '2')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set());
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      // Shards arrive every 2 ms while each list takes 5 ms; one leaves and comes back during a list.
      scheduler.schedule(() => held$.next(new Set([0])), 6);
      scheduler.schedule(() => held$.next(new Set([0, 1])), 8);
      scheduler.schedule(() => held$.next(new Set([0])), 12);
      scheduler.schedule(() => held$.next(new Set([0, 1])), 13);
      expectObservable(cms.owned$.pipe(map((s) => [...s].sort().join(''))), '^ 99999ms !').toBe('a 17ms b', { a: '', b: '01' });
      scheduler.flush();
      // 0: the first list (no shard); 6: for shard 0; 8: for shards 0 and 1 (the list of 6 had dropped shard 1's objects);
      // 13: again (shard 1 left at 12, so the list of 8 does not cover it), cached at 18: both shards owned then, not before.
      expect(w.lists).toEqual([0, 6, 8, 13]);
    });
  });

  it('with assigned$, a shard assigned before it is held is cached meanwhile: owned the moment it is held, without a list', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable }) => {
      scheduler.maxFrames = 100_000;
      const w = world(scheduler, [cm('a-0', '1'), cm('a-1', '2'), cm('b-3', '3')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0]));
      const assigned$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0]));
      const cms = shardedInformer(w.listWatch, ConfigMap, { ...fakeShards(held$), assigned$ }, { scheduler, random: () => 0 });
      const events: string[] = [];
      cms.events$.subscribe((e) =>
        events.push(`${scheduler.now()} ${describeEvent(e)}${e.type === 'updated' && e.resync ? ':resync' : ''}`),
      );
      // Shard 1 is assigned at 20 (its holder's member Lease lapsed), its own Lease taken at 40; shard 0's Lease is lost at 60
      // and taken again at 70 while still assigned; at 80 shard 1 is assigned elsewhere, and released at 81.
      scheduler.schedule(() => assigned$.next(new Set([0, 1])), 20);
      scheduler.schedule(() => w.change('MODIFIED', 'a-1'), 30); // on its way in: cached, not owned
      scheduler.schedule(() => held$.next(new Set([0, 1])), 40);
      scheduler.schedule(() => held$.next(new Set([1])), 60);
      scheduler.schedule(() => held$.next(new Set([0, 1])), 70);
      scheduler.schedule(() => assigned$.next(new Set([0])), 80);
      scheduler.schedule(() => held$.next(new Set([0])), 81);
      expectObservable(cms.owned$.pipe(map((s) => [...s].sort().join(''))), '^ 99999ms !').toBe('a 4ms b 34ms c 19ms d 9ms c 10ms b', {
        a: '',
        b: '0',
        c: '01',
        d: '1',
      });
      scheduler.flush();
      // One list at 0, one when shard 1 is assigned; none when it is held, none when shard 0 comes back.
      expect(w.lists).toEqual([0, 20]);
      expect(events).toEqual([
        '5 added:a-0',
        '25 added:a-1',
        '25 added:b-3',
        '30 updated:a-1',
        '81 deleted:a-1:moved',
        '81 deleted:b-3:moved',
      ]);
    });
  });

  it('with assigned$, the first list waits for the first assignment (or a shard held): no list that keeps nothing at start-up', () => {
    for (const [first, list] of [
      ['assigned', 12],
      ['held', 7],
    ] as const) {
      const scheduler = testScheduler();
      scheduler.run(({ expectObservable }) => {
        scheduler.maxFrames = 100_000;
        const w = world(scheduler, [cm('a-0', '1'), cm('a-1', '2')]);
        const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set());
        // sharding()'s assigned$ emits nothing until its first listing of the members (here at 12).
        const assigned$ = new Subject<ReadonlySet<number>>();
        const cms = shardedInformer(w.listWatch, ConfigMap, { ...fakeShards(held$), assigned$ }, { scheduler, random: () => 0 });
        if (first === 'assigned') scheduler.schedule(() => assigned$.next(new Set([0])), 12);
        else {
          scheduler.schedule(() => held$.next(new Set([0])), 7); // a Lease taken before the members are listed
          scheduler.schedule(() => assigned$.next(new Set([0])), 12);
        }
        scheduler.schedule(() => held$.next(new Set([0])), 20);
        expectObservable(cms.synced$, '^ 99999ms !').toBe(`f ${list + 4}ms t`, { f: false, t: true });
        expectObservable(cms.owned$.pipe(map((s) => [...s].sort().join(''))), '^ 99999ms !').toBe(
          first === 'assigned' ? 'a 19ms b' : 'a 11ms b',
          { a: '', b: '0' },
        );
        scheduler.flush();
        // One list, for shard 0: none at 0 (it would keep nothing), none at 12 when the assignment comes with the shard cached.
        expect(w.lists).toEqual([list]);
      });
    }
  });

  it('a list for a shard that joined still delivers what changed meanwhile in the shards already cached; listProgress$ follows its pages', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      scheduler.maxFrames = 100_000;
      const objects = [cm('a-0', '1'), cm('a-1', '2'), cm('b-2', '3')];
      let version = 1;
      const lists: string[] = [];
      // Two pages per list; a-0 changes on the server while no watch runs (a list restarted drops its watch).
      const listWatch: ListWatch = {
        list: (options) =>
          defer(() => {
            lists.push(`${scheduler.now()} ${options.continue ?? 'first'}`);
            const items = objects.map((o) => structuredClone(o));
            if (version > 1) items[0]!.metadata.resourceVersion = String(version);
            return timer(2, scheduler).pipe(
              map(() =>
                options.continue === undefined
                  ? listPage(String(10 + version), items.slice(0, 2), 'next')
                  : listPage(String(10 + version), items.slice(2)),
              ),
            );
          }),
        watch: () => new Subject<WatchFrame>(),
      };
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0]));
      const cms = shardedInformer(listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const events: string[] = [];
      const progress: string[] = [];
      cms.events$.subscribe((e) =>
        events.push(`${scheduler.now()} ${describeEvent(e)}${e.type === 'updated' && e.resync ? ':resync' : ''}`),
      );
      cms.listProgress$.subscribe((p) => progress.push(`${scheduler.now()} ${p.pages}/${p.objects}`));
      scheduler.schedule(() => (version = 7), 10);
      scheduler.schedule(() => held$.next(new Set([0, 1])), 20);
      scheduler.flush();
      expect(lists).toEqual(['0 first', '2 next', '20 first', '22 next']);
      // Objects of shards not kept are not counted: a-1 is dropped from the first page of the first list.
      expect(progress).toEqual(['2 1/1', '22 1/2']);
      expect(events).toEqual(['4 added:a-0', '4 added:b-2', '24 updated:a-0', '24 added:a-1']);
    });
  });

  it('controller() does not reconcile a key for its shard moving away', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      scheduler.maxFrames = 100_000;
      const w = world(scheduler, [cm('a-0', '1'), cm('a-1', '2')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0, 1]));
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const reconciled: string[] = [];
      const c = controller({ for: cms, scheduler, reconcile: (key) => void reconciled.push(`${scheduler.now()} ${key}`) });
      const running = c.outcomes$.subscribe();
      scheduler.schedule(() => held$.next(new Set([1])), 20);
      scheduler.schedule(() => w.change('DELETED', 'a-1'), 30); // a server delete still counts
      scheduler.schedule(() => running.unsubscribe(), 99_000);
      scheduler.flush();
      // The list at 5 brings both in; the move of a-0 at 20 is no deletion; the server's deletion of a-1 is.
      expect(reconciled).toEqual(['5 ns/a-0', '5 ns/a-1', '30 ns/a-1']);
    });
  });
  it('controller() does not reconcile the keys it already had again when a shard arrives', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      scheduler.maxFrames = 100_000;
      const w = world(scheduler, [cm('a-0', '1'), cm('a-1', '2'), cm('b-2', '3')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0]));
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const reconciled: string[] = [];
      const c = controller({ for: cms, scheduler, reconcile: (key) => void reconciled.push(`${scheduler.now()} ${key}`) });
      const running = c.outcomes$.subscribe();
      scheduler.schedule(() => held$.next(new Set([0, 1])), 20);
      scheduler.schedule(() => running.unsubscribe(), 99_000);
      scheduler.flush();
      // The list at 20 brings a-1 in, and a-0 and b-2 back unchanged: only a-1 is reconciled then.
      expect(w.lists).toEqual([0, 20]);
      expect(reconciled).toEqual(['5 ns/a-0', '5 ns/b-2', '25 ns/a-1']);
    });
  });
});
