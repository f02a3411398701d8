import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { ConfigMap, informer, type InformerEvent } from '../../src/index.ts';
import { type InformerState } from '../../src/pipeline.ts';
import { fakeListWatch, listPage } from '../../src/testing/index.ts';

const cm = (namespace: string, name: string, rv: string) => ({
  metadata: { name, namespace, resourceVersion: rv, uid: `uid-${namespace}-${name}` },
  data: { rv },
});

describe('informer over several namespaces, given a ListWatch (taken as cluster-wide, filtered on the client)', () => {
  it('caches and delivers only the namespaces asked for; an event of another namespace moves the resourceVersion on, nothing else', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold }) => {
      scheduler.maxFrames = 60_000;
      const lw = fakeListWatch(
        {
          lists: [cold('(l|)', { l: listPage('10', [cm('a', 'x', '1'), cm('b', 'y', '2'), cm('c', 'z', '3')]) })],
          watches: [
            cold('-c-a-d', {
              c: { type: 'ADDED', object: cm('c', 'other', '11') },
              a: { type: 'ADDED', object: cm('a', 'new', '12') },
              d: { type: 'DELETED', object: cm('c', 'z', '13') },
            }),
          ],
        },
        { scheduler },
      );
      const cms = informer(lw, ConfigMap, { namespaces: ['a', 'b'], scheduler, random: () => 0 });
      const events: InformerEvent<ConfigMap>[] = [];
      const states: InformerState<ConfigMap>[] = [];
      cms.events$.subscribe((e) => events.push(e));
      cms.state$.subscribe((s) => states.push({ ...s }));
      scheduler.flush();
      const last = states[states.length - 1]!;
      expect(last.store.keys().sort()).toEqual(['a/new', 'a/x', 'b/y']);
      expect(events.map((e) => `${e.type}:${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual([
        'added:a/x',
        'added:b/y',
        'added:a/new',
      ]);
      // The deletion in c came last: the informer knows the server is at 13 (its next watch resumes there).
      expect(last.resourceVersion).toBe('13');
      expect(lw.lists).toHaveLength(1);
    });
  });
});
