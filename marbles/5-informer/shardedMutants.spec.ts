/**
 * shardedInformer() cases found by mutation testing (gaps102, closed by gaps108): each fails with one hand-made
 * mutation of shardedInformer.ts that every other spec let through. Virtual time; the list answers after 5 ms.
 */
import { describe, expect, it } from 'vitest';
import { BehaviorSubject, EMPTY, Subject, defer, from, map, timer, type Observable, type ObservableInput } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { testScheduler } from '../support/testScheduler.ts';
import { ConfigMap, type InformerError } from '../../src/index.ts';
import { shardedInformer, type ShardSource } from '../../src/leaderelection/index.ts';
import type { ListWatch, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { listPage, watchEvent } from '../../src/testing/index.ts';

const cm = (name: string, rv: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});

/** Lists answer after 5 ms with `items` at resourceVersion `rv`; the watch is `live`. */
function world(scheduler: TestScheduler, items: () => unknown[], rv = '100') {
  const live = new Subject<WatchFrame>();
  const lists: number[] = [];
  const listWatch: ListWatch = {
    list: () =>
      defer(() => {
        lists.push(scheduler.now());
        return timer(5, scheduler).pipe(
          map(() =>
            listPage(
              rv,
              items().map((o) => structuredClone(o)),
            ),
          ),
        );
      }),
    watch: () => live,
  };
  return { listWatch, live, lists };
}

/** Shards by the number at the end of the name, modulo 2; held (and assigned, if given) as the test says. */
function fakeShards(held$: BehaviorSubject<ReadonlySet<number>>, assigned$?: Observable<ReadonlySet<number>>): ShardSource {
  const shardOf = (key: string) => Number(/(\d+)$/.exec(key)?.[1] ?? 0) % 2;
  return {
    shards: 2,
    shardOf,
    held$,
    ...(assigned$ ? { assigned$ } : {}),
    owns: (key) => held$.value.has(shardOf(key)),
    gate: <R>(key: string, work: () => ObservableInput<R>): Observable<R> =>
      defer(() => (held$.value.has(shardOf(key)) ? from(work()) : EMPTY)),
  };
}

describe('shardedInformer: a shard leaving', () => {
  it("its evictions are at the last resourceVersion handed on, not '' (the informer's resourceVersion never goes back)", () => {
    const scheduler = testScheduler();
    const seen: string[] = [];
    scheduler.run(() => {
      const w = world(scheduler, () => [cm('a-0', '7'), cm('a-1', '8')], '100');
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0, 1]));
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const sub = cms.state$.subscribe((s) =>
        seen.push(`${scheduler.now()} ${s.step} ${s.resourceVersion} ${s.events.map((e) => e.type)}`),
      );
      scheduler.schedule(() => w.live.next(watchEvent('MODIFIED', cm('a-0', '101'))), 10);
      scheduler.schedule(() => held$.next(new Set([0])), 20);
      scheduler.schedule(() => sub.unsubscribe(), 30);
    });
    expect(seen).toEqual(['0 start  ', '5 replace 100 added,added', '5 watch 100 ', '10 event 101 updated', '20 event 101 deleted']);
  });
});

describe('shardedInformer: an object without a key', () => {
  it('is handed on (not dropped as of no shard): the informer reports it invalid, as informer() does', () => {
    const scheduler = testScheduler();
    const errors: string[] = [];
    scheduler.run(() => {
      const w = world(scheduler, () => [cm('a-0', '7')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0, 1]));
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const sub = cms.errors$.subscribe((e: InformerError) => errors.push(`${scheduler.now()} ${e.reason} ${e.resourceVersion}`));
      sub.add(cms.events$.subscribe());
      const nameless = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', resourceVersion: '101' } };
      scheduler.schedule(() => w.live.next(watchEvent('ADDED', nameless as never)), 10);
      scheduler.schedule(() => sub.unsubscribe(), 30);
    });
    expect(errors).toEqual(['10 ValidationFailed 101']);
  });
});

describe('shardedInformer: subscribed again after the last subscriber left', () => {
  it('owns nothing once the last subscriber left, and nothing again until the new list is cached', () => {
    const scheduler = testScheduler();
    const owns: string[] = [];
    scheduler.run(() => {
      const w = world(scheduler, () => [cm('a-0', '7')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0]));
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const look = (at: number) => scheduler.schedule(() => owns.push(`${at} ${cms.owns('ns/a-0')}`), at);
      const first = cms.events$.subscribe();
      look(10);
      scheduler.schedule(() => first.unsubscribe(), 20);
      look(21);
      scheduler.schedule(() => {
        const again = cms.events$.subscribe();
        scheduler.schedule(() => again.unsubscribe(), 20);
      }, 30);
      look(31);
      look(40);
    });
    expect(owns).toEqual(['10 true', '21 false', '31 false', '40 true']);
  });

  it('with assigned$, the new run waits for its own first assignment again (no list that keeps nothing)', () => {
    // assigned$ as sharding() gives it: each run emits nothing until its members were listed once.
    const scheduler = testScheduler();
    let lists: number[] = [];
    scheduler.run(() => {
      const w = world(scheduler, () => [cm('a-0', '7')]);
      lists = w.lists;
      let assigned = new Subject<ReadonlySet<number>>();
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set());
      const assigned$ = defer(() => assigned);
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$, assigned$), { scheduler, random: () => 0 });
      const first = cms.events$.subscribe();
      scheduler.schedule(() => assigned.next(new Set([0])), 10);
      scheduler.schedule(() => first.unsubscribe(), 20);
      scheduler.schedule(() => {
        assigned = new Subject<ReadonlySet<number>>();
        const again = cms.events$.subscribe();
        scheduler.schedule(() => assigned.next(new Set([0])), 10);
        scheduler.schedule(() => again.unsubscribe(), 20);
      }, 30);
    });
    expect(lists).toEqual([10, 40]);
  });
});

describe('shardedInformer.owns: the shard source has the last word', () => {
  it('a key of a shard just lost is not owned, even by an observer of held$ told before the informer', () => {
    // The view follows held$ as one of its observers; the source's own owns() changed before any of them was told.
    const scheduler = testScheduler();
    const owns: string[] = [];
    scheduler.run(() => {
      const w = world(scheduler, () => [cm('a-0', '7')]);
      const held$ = new BehaviorSubject<ReadonlySet<number>>(new Set([0]));
      const cms = shardedInformer(w.listWatch, ConfigMap, fakeShards(held$), { scheduler, random: () => 0 });
      const sub = held$.subscribe((held) => owns.push(`${scheduler.now()} {${[...held].join(',')}} ${cms.owns('ns/a-0')}`));
      sub.add(cms.events$.subscribe());
      scheduler.schedule(() => held$.next(new Set()), 10);
      scheduler.schedule(() => sub.unsubscribe(), 20);
    });
    expect(owns).toEqual(['0 {0} false', '10 {} false']);
  });
});
