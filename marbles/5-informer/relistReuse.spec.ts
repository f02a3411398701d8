import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { ConfigMap, informer, type InformerEvent, type Store } from '../../src/index.ts';
import { fakeListWatch, listPage, watchStatus } from '../../src/testing/index.ts';

const cm = (name: string, rv: string) => ({ metadata: { name, namespace: 'ns', resourceVersion: rv, uid: `uid-${name}` }, data: { rv } });

describe('relist', () => {
  it('keeps the cached object for an item whose resourceVersion did not change (one object per version)', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold }) => {
      // The last watch never ends: its stall timer would re-arm forever in virtual time.
      scheduler.maxFrames = 60_000;
      const lw = fakeListWatch(
        {
          lists: [
            cold('(l|)', { l: listPage('10', [cm('a', '1'), cm('b', '2')]) }),
            cold('(l|)', { l: listPage('20', [cm('a', '1'), cm('b', '5'), cm('c', '6')]) }),
          ],
          watches: [cold('--e', { e: watchStatus(410) })],
        },
        { scheduler },
      );
      const cms = informer(lw, ConfigMap, { scheduler, random: () => 0 });
      const stores: Store<ConfigMap>[] = [];
      const events: InformerEvent<ConfigMap>[] = [];
      cms.store$.subscribe((s) => stores.push(s));
      cms.events$.subscribe((e) => events.push(e));
      scheduler.flush();
      const first = stores.find((s) => s.size === 2)!;
      const last = stores[stores.length - 1]!;
      expect(last.keys().sort()).toEqual(['ns/a', 'ns/b', 'ns/c']);
      // a is the very object cached by the first list; b changed, so it is the new one.
      expect(last.get('ns/a')).toBe(first.get('ns/a'));
      expect(last.get('ns/b')).not.toBe(first.get('ns/b'));
      expect(last.get('ns/b')?.metadata.resourceVersion).toBe('5');
      const relisted = events.slice(2).map((e) => `${e.type}:${e.object.metadata.name}${e.type === 'updated' ? `:${e.resync}` : ''}`);
      expect(relisted).toEqual(['updated:a:true', 'updated:b:false', 'added:c']);
    });
  });
});

describe('the replayed state', () => {
  it('carries the cache but not the events of the step that made it (they are not kept alive)', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold }) => {
      scheduler.maxFrames = 60_000;
      const lw = fakeListWatch({ lists: [cold('(l|)', { l: listPage('10', [cm('a', '1'), cm('b', '2')]) })] }, { scheduler });
      const cms = informer(lw, ConfigMap, { scheduler, random: () => 0 });
      const seenLive: number[] = [];
      cms.state$.subscribe((s) => seenLive.push(s.events.length));
      scheduler.schedule(() => {
        let replayed: { size: number; events: number } | undefined;
        cms.state$.subscribe((s) => (replayed ??= { size: s.store.size, events: s.events.length })).unsubscribe();
        expect(replayed).toEqual({ size: 2, events: 0 });
      }, 5);
      scheduler.flush();
      // the live subscriber saw the list's two events when they happened
      expect(seenLive).toContain(2);
    });
  });
});
