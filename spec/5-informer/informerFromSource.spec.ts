import v8 from 'node:v8';
import vm from 'node:vm';
import { Subject, take } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Pod, informer, type Store } from '../../src/index.ts';
import type { ListPage, RawWatchEvent } from '../../src/pipeline.ts';
import { fakeInformer, fakeListWatch, fakeResource, kubeObj, listPage, listed, watchEvent } from '../../src/testing/index.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import type { KubeObject } from '../../src/0-model/objects.ts';
import { lastErrorOf } from '../../src/5-informer/informerFromSource.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const pod = (name: string, resourceVersion: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: name, resourceVersion: String(resourceVersion) },
});

/** A WeakRef to the informer's first snapshot (the empty store before the list), and the informer's inputs. */
function started() {
  const list = new Subject<ListPage>();
  const watch = new Subject<RawWatchEvent>();
  const pods = informer(fakeListWatch({ lists: [list], watches: [watch] }), Pod);
  let events = 0;
  const subscription = pods.events$.subscribe(() => events++);
  let first: WeakRef<Store<Pod>> | undefined;
  pods.store$.pipe(take(1)).subscribe((store) => (first = new WeakRef(store)));
  return { list, watch, subscription, first: first!, events: () => events };
}

describe('informerFromSource', () => {
  it('holds no snapshot but the latest: the first one is collected once later ones replace it', async () => {
    const { list, watch, subscription, first, events } = started();
    expect(first.deref()?.size).toBe(0);
    list.next(listPage('1', [pod('a', 1), pod('b', 1)]));
    list.complete();
    for (let rv = 2; rv < 12; rv++) watch.next(watchEvent('MODIFIED', pod(rv % 2 ? 'a' : 'b', rv)));
    expect(events()).toBe(12);
    // A WeakRef's target stays alive until the job that made or read it ends; in a worker shared with other spec
    // files, something transient of theirs may run in between (seen once in CI): a few jobs and collections, then
    // it must be gone. What the informer itself held (rxjs scan's seed, before) held it for good.
    for (let tries = 0; tries < 5 && first.deref() !== undefined; tries++) {
      await new Promise((next) => setImmediate(next));
      gc();
    }
    expect(first.deref()).toBeUndefined();
    subscription.unsubscribe();
  });
});

describe('lastErrorOf(state$): the last fault of the informer’s current run (what a timed waitForCacheSync names)', () => {
  it('the last of a step’s faults; a new run (after the last unsubscribe) starts with none', () => {
    const events$ = new Subject<SourceEvent<KubeObject>>();
    const byName = (o: KubeObject): string[] => {
      if (o.metadata?.name !== 'ok') throw new Error(`no ${o.metadata?.name}`);
      return ['ok'];
    };
    const cms = fakeInformer(fakeResource(), events$, { indexers: { byName } });
    const first = cms.errors$.subscribe();
    events$.next(listed('1', kubeObj('a', { namespace: 'ns' }), kubeObj('ok', { namespace: 'ns' }), kubeObj('b', { namespace: 'ns' })));
    expect(lastErrorOf(cms.state$)).toMatchObject({ reason: 'IndexerError', key: 'ns/b' });
    first.unsubscribe();
    const second = cms.errors$.subscribe();
    expect(lastErrorOf(cms.state$)).toBeUndefined();
    second.unsubscribe();
  });
});
