/**
 * A relist keeps the cached object of every item whose key and resourceVersion are unchanged (informerFromSource.ts,
 * `reuseUnchanged`: the memory peak of a relist is the cache plus what changed), a streaming list's (`watchList`) as a
 * paged list's: its initial events were decoded anew, a second copy of every object until the replace (audit53).
 */
import { NEVER, concat, of, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { ConfigMap, informer, type InformerError, type KubeObject } from '../../src/index.ts';
import { fakeListWatch, listPage, watchBookmark, watchEvent, watchStatus } from '../../src/testing/index.ts';

const cm = (name: string, rv: string, data: Record<string, unknown> = { k: 'v' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', resourceVersion: rv, uid: `u-${name}` },
  data,
});
const END = { 'k8s.io/initial-events-end': 'true' };
const NAMES = ['a', 'b', 'c'] as const;

interface Run {
  /** Per name: the object after the relist is the one cached before it. */
  readonly same: Record<string, boolean>;
  readonly requests: string[];
  readonly errors: InformerError[];
}

/** Lists a, b, c; the watch expires (410); the relist brings a and b unchanged, c at a new resourceVersion. */
function relist(watchList: boolean): Run {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  let out: Run = { same: {}, requests: [], errors: [] };
  const first = [cm('a', '5'), cm('b', '5'), cm('c', '5')];
  const second = [cm('a', '5'), cm('b', '5'), cm('c', '7', { k: 'w' })];
  scheduler.run(({ flush }) => {
    const stream = (items: object[], rv: string): Observable<ReturnType<typeof watchEvent> | ReturnType<typeof watchBookmark>> =>
      of(...items.map((o) => watchEvent('ADDED', o)), watchBookmark(rv, END));
    const lw = fakeListWatch(
      watchList
        ? { watches: [concat(stream(first, '6'), of(watchStatus(410))), concat(stream(second, '8'), NEVER)] }
        : { lists: [of(listPage('6', first)), of(listPage('8', second))], watches: [of(watchStatus(410)), NEVER] },
      { scheduler },
    );
    const inf = informer(lw, ConfigMap, { watchList, scheduler, reportUnobservedErrors: false });
    const stores: { get(key: string): KubeObject | undefined }[] = [];
    const errors: InformerError[] = [];
    const sub = inf.store$.subscribe((s) => stores.push(s));
    sub.add(inf.errors$.subscribe((e) => errors.push(e)));
    scheduler.schedule(() => {
      const before = stores.find((s) => s.get('default/a') !== undefined)!;
      const after = stores.at(-1)!;
      const same = Object.fromEntries(NAMES.map((n) => [n, before.get(`default/${n}`) === after.get(`default/${n}`)]));
      out = { same, requests: lw.requests.map((r) => r.kind), errors };
      sub.unsubscribe();
    }, 60_000);
    flush();
  });
  return out;
}

describe('a relist keeps the cached object of an unchanged item', () => {
  it('list + watch: the relist is a second list; a and b are the cached objects, c a new one', () => {
    const r = relist(false);
    expect(r.requests.filter((t) => t === 'list')).toHaveLength(2);
    expect(r.same).toEqual({ a: true, b: true, c: false });
  });

  it('watchList: the relist is a second streaming list; a and b are the cached objects, c a new one', () => {
    const r = relist(true);
    expect(r.requests.filter((t) => t === 'list')).toHaveLength(0);
    expect(r.requests.filter((t) => t === 'watch')).toHaveLength(2);
    expect(r.same).toEqual({ a: true, b: true, c: false });
  });
});

it("watchList: an invalid initial event's error still says phase 'watch' (the decoder's `whole` is no phase)", () => {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  const errors: InformerError[] = [];
  scheduler.run(({ flush }) => {
    const bad = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default', resourceVersion: '5', uid: 7 } };
    const lw = fakeListWatch({ watches: [concat(of(watchEvent('ADDED', bad), watchBookmark('6', END)), NEVER)] }, { scheduler });
    const inf = informer(lw, ConfigMap, { watchList: true, scheduler, reportUnobservedErrors: false });
    const sub = inf.errors$.subscribe((e) => errors.push(e));
    sub.add(inf.store$.subscribe());
    scheduler.schedule(() => sub.unsubscribe(), 10_000);
    flush();
  });
  expect(errors.map((e) => [e.reason, e.phase])).toEqual([['ValidationFailed', 'watch']]);
});
