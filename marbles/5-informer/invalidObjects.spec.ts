import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { Subject } from 'rxjs';
import type { z } from 'zod';
import { InformerError, customResource, informer, KubeObject, type InformerEvent, type Indexers, type Store } from '../../src/index.ts';
import { decoder, informerFromSource, type SourceEvent } from '../../src/pipeline.ts';
import { fakeListWatch, listPage, watchEvent } from '../support/fakeListWatch.ts';

/**
 * The rule of docs/invalid-objects.md, seen from the informer: the source
 * (listAndWatch) reports an invalid object as an error and tells the key
 * (`rejectedKeys`, `deletedKey`); the cache keeps the key's last valid object,
 * and no `deleted` event is ever produced for an object that exists.
 */

type Obj = KubeObject & { data?: { owner?: string } };
// Unstructured, as the built-in kinds: metadata validated, the object cached as sent (the same object: `toBe`); `data` is
// typed by this cast, the schema a type argument needs (customResource<Obj>({ … }) without one is a compile error).
const Widgets = customResource({
  group: 'example.com',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
  schema: KubeObject as z.ZodType<Obj>,
});
const o = (name: string, rv: string, owner?: string): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
  ...(owner === undefined ? {} : { data: { owner } }),
});
const invalid = (key: string, rv: string) =>
  ({
    type: 'error',
    error: new InformerError('ValidationFailed', `${key} failed validation`, { key, resourceVersion: rv, issues: [] }),
  }) as const;

function harness(indexers?: Indexers<Obj>) {
  const source = new Subject<SourceEvent<Obj>>();
  const informer = informerFromSource(Widgets, source, { indexers });
  const events: InformerEvent<Obj>[] = [];
  const errors: InformerError[] = [];
  let store: Store<Obj> | undefined;
  const ended: string[] = [];
  informer.events$.subscribe({ next: (e) => events.push(e), error: () => ended.push('events$'), complete: () => ended.push('events$') });
  informer.errors$.subscribe({ next: (e) => errors.push(e), error: () => ended.push('errors$'), complete: () => ended.push('errors$') });
  informer.store$.subscribe({ next: (s) => (store = s), error: () => ended.push('store$'), complete: () => ended.push('store$') });
  return { source, events, errors, ended, store: () => store! };
}

describe('objects that fail validation (the informer keeps the last valid object)', () => {
  it('watch: an invalid MODIFIED leaves the cached version; the next valid one replaces it normally', () => {
    const h = harness();
    const a1 = o('a', '1'),
      a3 = o('a', '3');
    h.source.next({ type: 'replace', items: [a1], resourceVersion: '1' });
    h.source.next(invalid('ns/a', '2'));
    expect(h.store().get('ns/a')).toBe(a1);
    h.source.next({ type: 'modified', object: a3, resourceVersion: '3' });
    expect(h.store().get('ns/a')).toBe(a3);
    expect(h.events.map((e) => e.type)).toEqual(['added', 'updated']);
    expect(h.errors.map((e) => [e.reason, e.key, e.resourceVersion])).toEqual([['ValidationFailed', 'ns/a', '2']]);
  });

  it('relist: a key listed as invalid is kept (no deleted event, no tombstone, no updated); reported every time it is seen', () => {
    const h = harness();
    const a1 = o('a', '1'),
      b1 = o('b', '1');
    h.source.next({ type: 'replace', items: [a1, b1], resourceVersion: '1' });
    for (const rv of ['5', '6']) {
      h.source.next(invalid('ns/a', rv));
      h.source.next({ type: 'replace', items: [b1], resourceVersion: rv, rejectedKeys: ['ns/a'] });
    }
    expect(h.store().get('ns/a')).toBe(a1);
    expect(h.events.filter((e) => e.type === 'deleted')).toEqual([]);
    expect(h.events.map((e) => e.type)).toEqual(['added', 'added', 'updated', 'updated']); // b's unchanged relists
    expect(h.errors.map((e) => e.resourceVersion)).toEqual(['5', '6']);
  });

  it('an object that was never valid is never cached, and never reported deleted', () => {
    const h = harness();
    h.source.next(invalid('ns/a', '1'));
    h.source.next({ type: 'replace', items: [], resourceVersion: '1', rejectedKeys: ['ns/a'] });
    h.source.next(invalid('ns/a', '2'));
    h.source.next({ type: 'deletedKey', key: 'ns/a', resourceVersion: '3' });
    expect(h.store().size).toBe(0);
    expect(h.events).toEqual([]);
  });

  it('a DELETED event whose object is invalid still deletes the key, with the last cached state as the deleted object', () => {
    const h = harness();
    const a1 = o('a', '1');
    h.source.next({ type: 'replace', items: [a1], resourceVersion: '1' });
    h.source.next(invalid('ns/a', '2'));
    h.source.next({ type: 'deletedKey', key: 'ns/a', resourceVersion: '2' });
    expect(h.store().has('ns/a')).toBe(false);
    expect(h.events[h.events.length - 1]).toEqual({ type: 'deleted', object: a1, finalStateUnknown: false, isInInitialList: false });
  });

  it('an indexer that throws (`cm.data.owner` on an object without data) ends nothing: IndexerError, old version kept, no event', () => {
    const h = harness({ owner: (cm) => [cm.data!.owner!] });
    const a1 = o('a', '1', 'me'),
      a2 = o('a', '2'),
      b3 = o('b', '3'),
      a4 = o('a', '4', 'you');
    h.source.next({ type: 'replace', items: [a1], resourceVersion: '1' });
    h.source.next({ type: 'modified', object: a2, resourceVersion: '2' });
    h.source.next({ type: 'added', object: b3, resourceVersion: '3' });
    expect(h.store().get('ns/a')).toBe(a1);
    expect(h.store().has('ns/b')).toBe(false);
    expect(h.store().indexKeys('owner', 'me')).toEqual(['ns/a']);
    h.source.next({ type: 'replace', items: [a2, b3], resourceVersion: '3' });
    expect(h.store().get('ns/a')).toBe(a1);
    h.source.next({ type: 'modified', object: a4, resourceVersion: '4' });
    expect(h.store().indexKeys('owner', 'you')).toEqual(['ns/a']);
    h.source.next({ type: 'deleted', object: b3, resourceVersion: '5' });
    expect(h.events.map((e) => e.type)).toEqual(['added', 'updated']);
    expect(h.errors.map((e) => [e.reason, e.key, e.resourceVersion])).toEqual([
      ['IndexerError', 'ns/a', '2'],
      ['IndexerError', 'ns/b', '3'],
      ['IndexerError', 'ns/a', '2'],
      ['IndexerError', 'ns/b', '3'],
    ]);
    expect(h.ended).toEqual([]);
  });

  it('isSync as client-go: an update that keeps the resourceVersion is resync: true, whatever brought it', () => {
    const h = harness();
    const a1 = o('a', '1');
    h.source.next({ type: 'replace', items: [a1], resourceVersion: '1' });
    h.source.next({ type: 'modified', object: { ...a1 }, resourceVersion: '1' });
    h.source.next({ type: 'modified', object: o('a', '2'), resourceVersion: '2' });
    expect(h.events.slice(1).map((e) => e.type === 'updated' && e.resync)).toEqual([true, false]);
  });

  it('with the decoder: an object of another kind on a watch is not cached (ValidationFailed)', () => {
    const decode = decoder(Widgets.schema, undefined, { apiVersion: 'example.com/v1', kind: 'Widget' });
    const h = harness();
    h.source.next({ type: 'replace', items: [], resourceVersion: '1' });
    const gadget = decode({ ...o('g', '2'), kind: 'Gadget' }, 'watch');
    expect(gadget).toBeInstanceOf(InformerError);
    if (gadget instanceof InformerError) h.source.next({ type: 'error', error: gadget });
    else h.source.next({ type: 'added', object: gadget, resourceVersion: '2' });
    expect(h.store().size).toBe(0);
    expect(h.errors[0]).toMatchObject({ reason: 'ValidationFailed', key: 'ns/g' });
  });
});

describe('end to end through listAndWatch (a fake ListWatch)', () => {
  it('an unstructured object with a "__proto__" key: never cached, never reported deleted on relist; its DELETED still deletes', () => {
    const ts = testScheduler();
    ts.run(({ cold, flush }) => {
      ts.maxFrames = 3600_000;
      const a5 = o('a', '5'),
        b7 = o('b', '7');
      const poisoned = (rv: string) =>
        JSON.parse(
          `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns","resourceVersion":"${rv}"},"__proto__":{"polluted":true}}`,
        ) as Obj;
      const expired = { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } };
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [a5, b7]) }), cold('-(p|)', { p: listPage('20', [poisoned('12'), b7]) })],
        watches: [
          cold('--m-x', { m: watchEvent('MODIFIED', poisoned('11')), x: expired as never }),
          cold('1000ms d', { d: watchEvent('DELETED', poisoned('21')) }),
        ],
      });
      const widgets = informer(fake, Widgets, { scheduler: ts, random: () => 0 });
      const events: InformerEvent<Obj>[] = [];
      const errors: InformerError[] = [];
      let store: Store<Obj> | undefined;
      const subs = [
        widgets.events$.subscribe((e) => events.push(e)),
        widgets.errors$.subscribe((e) => errors.push(e)),
        widgets.store$.subscribe((s) => (store = s)),
      ];
      ts.schedule(() => {
        // After the relist, before the second watch's DELETED: a is still its last valid version.
        expect(store!.get('ns/a')).toBe(a5);
        expect(events.filter((e) => e.type === 'deleted')).toEqual([]);
      }, 950); // the relist is at once or after one backoff (≤ 0.81 s); the DELETED comes a second after it
      ts.schedule(() => subs.forEach((s) => s.unsubscribe()), 60_000);
      flush();
      expect(errors.filter((e) => e.reason === 'ValidationFailed').map((e) => [e.key, e.resourceVersion, e.phase])).toEqual([
        ['ns/a', '11', 'watch'],
        ['ns/a', '12', 'list'],
        ['ns/a', '21', 'watch'],
      ]);
      expect(
        events.map(
          (e) =>
            `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}${e.type === 'deleted' && e.finalStateUnknown ? ' dfsu' : ''}`,
        ),
      ).toEqual([
        'added a 5',
        'added b 7',
        'updated b 7', // the relist found b unchanged (resync: true)
        'deleted a 5',
      ]);
      expect(store!.has('ns/a')).toBe(false);
      expect(Object.prototype).not.toHaveProperty('polluted');
    });
  });

  it("rule 5's exception: a DELETED whose object is of another kind deletes nothing (skipped as client-go's watchHandler)", () => {
    const ts = testScheduler();
    ts.run(({ cold, flush }) => {
      const a5 = o('a', '5');
      const fake = fakeListWatch({
        lists: [cold('-(p|)', { p: listPage('10', [a5]) })],
        watches: [cold('--d', { d: watchEvent('DELETED', { ...o('a', '11'), kind: 'Gadget' }) })],
      });
      const widgets = informer(fake, Widgets, { scheduler: ts, random: () => 0 });
      const events: string[] = [];
      const errors: InformerError[] = [];
      let store: Store<Obj> | undefined;
      const subs = [
        widgets.events$.subscribe((e) => events.push(`${e.type} ${e.object.metadata.name}`)),
        widgets.errors$.subscribe((e) => errors.push(e)),
        widgets.store$.subscribe((s) => (store = s)),
      ];
      ts.schedule(() => subs.forEach((s) => s.unsubscribe()), 1_000);
      flush();
      expect(errors.map((e) => [e.reason, e.key])).toEqual([['ValidationFailed', 'ns/a']]);
      expect(events).toEqual(['added a']);
      expect(store!.get('ns/a')).toBe(a5);
    });
  });
});
