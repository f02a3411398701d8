import { describe, expect, it } from 'vitest';
import { BehaviorSubject, EMPTY, Subject, defer, from, map, timer, type Observable, type ObservableInput } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { testScheduler } from '../support/testScheduler.ts';
import { ConfigMap, shardedInformer, type InformerEvent, type ShardSource } from '../../src/index.ts';
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
        '35 updated:a-0',
        '35 added:a-1',
        '35 updated:b-2',
        '35 added:b-3',
        '40 deleted:b-2',
        '50 deleted:a-0:moved',
      ]);
    });
  });

  it('a shard that arrives while a list runs is listed once that list is cached (shards trickling in never starve a list)', () => {
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
      expectObservable(cms.owned$.pipe(map((s) => [...s].sort().join(''))), '^ 99999ms !').toBe('a 10ms b 9ms c', {
        a: '',
        b: '0',
        c: '01',
      });
      scheduler.flush();
      // 0: the first list; 6: for shard 0; 11: for shard 1, once the one for 0 was cached; 16: for shard 1 again (it left at 12,
      // so the list of 11 does not cover it): owned at 21, not at 16.
      expect(w.lists).toEqual([0, 6, 11, 16]);
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
});
