/**
 * A relist's unchanged objects, at the default resyncPeriod (0): client-go's `OnUpdate` calls them a sync, and
 * `sharedProcessor.distribute(…, true)` hands them to the listeners marked syncing; `addListener` marks every listener
 * so, and only `shouldResync` (run by the reflector's resync timer, which an informer without a resync period never
 * starts: `resyncChan`) takes one off. So every handler gets them, as here (docs/semantics.md, "Followed").
 */
import { describe, expect, it } from 'vitest';
import { Subject } from 'rxjs';
import type { InformerEvent, KubeObject } from '../../src/index.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';

const o = (name: string, rv: string) => kubeObj(name, { resourceVersion: rv });
const fmt = (e: InformerEvent<KubeObject>) =>
  `${e.type}:${e.object.metadata.name}@${e.object.metadata.resourceVersion}${e.type === 'updated' && e.resync ? ' resync' : ''}`;

describe.each(['delta-fifo', 'in-order'] as const)('a relist with resyncPeriod 0 (%s)', (delivery) => {
  it('hands each unchanged object to every subscriber and handler as updated with resync: true, a changed one as an update', () => {
    const src = new Subject<SourceEvent<KubeObject>>();
    const inf = fakeInformer(fakeResource(), src, { delivery });
    const events: string[] = [];
    const handled: string[] = [];
    inf.events$.subscribe((e) => events.push(fmt(e)));
    inf.on((e) => void handled.push(fmt(e)));
    src.next(listed('10', o('a', '1'), o('b', '2')));
    events.length = 0;
    handled.length = 0;
    src.next(listed('20', o('a', '1'), o('b', '3'))); // after a 410, say
    expect(events).toEqual(['updated:a@1 resync', 'updated:b@3']);
    expect(handled).toEqual(events);
  });
});
