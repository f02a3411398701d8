/**
 * An informer over a ListWatch given instead of a KubeConfig: `namespace` keeps its namespace's objects on the client, as
 * `namespaces` does (it was ignored: every namespace cached), and a selector, which a ListWatch cannot apply, is refused
 * (audit19, finding 6). Virtual time: the fake's pages and events are cold Observables on the TestScheduler.
 */
import { NEVER, filter, firstValueFrom, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { Pod, informer, type Informer, type InformerOptions } from '../../src/index.ts';
import { shardedInformer } from '../../src/leaderelection/index.ts';
import { fakeListWatch, kubeObj, listPage, watchEvent } from '../../src/testing/index.ts';
import type { ShardSource } from '../../src/5-informer/shardedInformer.ts';

const pods = [kubeObj(Pod, 'web-1', { namespace: 'shop' }), kubeObj(Pod, 'db-1', { namespace: 'ops' })];
const lw = () => fakeListWatch({ lists: [of(listPage('5', pods))], watches: [NEVER] });
const oneShard: ShardSource = {
  shards: 1,
  shardOf: () => 0,
  held$: of(new Set([0])),
  owns: () => true,
  gate: (_k, work) => of(work()) as never,
};

async function syncedKeys(inf: Informer<Pod>): Promise<readonly string[]> {
  const keep = inf.store$.subscribe();
  await firstValueFrom(inf.synced$.pipe(filter(Boolean)));
  const keys = (await firstValueFrom(inf.store$)).keys();
  keep.unsubscribe();
  return keys;
}

describe('informer(listWatch, resource, { namespace })', () => {
  it('caches its namespace only, as { namespaces } does', async () => {
    const keys = (options: InformerOptions<Pod>) => syncedKeys(informer(lw(), Pod, options));
    expect(await keys({ namespaces: ['shop', 'x'] })).toEqual(['shop/web-1']);
    expect(await keys({ namespace: 'shop' })).toEqual(['shop/web-1']);
    expect(await keys({ namespaces: ['shop'] })).toEqual(['shop/web-1']);
    expect([...(await keys({}))].sort()).toEqual(['ops/db-1', 'shop/web-1']);
  });

  it('a watch event of another namespace is not cached, and still moves the resourceVersion on', () => {
    const steps = new Array<string>();
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold }) => {
      const other = kubeObj(Pod, 'db-2', { namespace: 'ops', resourceVersion: '7' });
      const mine = kubeObj(Pod, 'web-2', { namespace: 'shop', resourceVersion: '8' });
      const fake = fakeListWatch({
        lists: [cold('(p|)', { p: listPage('5', pods) })],
        watches: [cold('-a-b', { a: watchEvent('ADDED', other), b: watchEvent('ADDED', mine) })],
      });
      const running = informer(fake, Pod, { namespace: 'shop' }).state$.subscribe((s) =>
        steps.push(`${s.resourceVersion} ${[...s.store.keys()].sort().join(',')}`),
      );
      // Ended after the events: the informer's timers would keep the virtual clock running forever.
      scheduler.schedule(() => running.unsubscribe(), 10);
    });
    expect(steps.filter((s, i) => s !== steps[i - 1])).toEqual([' ', '5 shop/web-1', '7 shop/web-1', '8 shop/web-1,shop/web-2']);
  });

  it('a sharded informer over a ListWatch keeps its one namespace too', async () => {
    expect(await syncedKeys(shardedInformer(lw(), Pod, oneShard, { namespace: 'shop' }))).toEqual(['shop/web-1']);
  });

  it('a selector is refused: a ListWatch reads what it was built to read', () => {
    expect(() => informer(lw(), Pod, { labelSelector: 'app=web' })).toThrow(TypeError);
    expect(() => informer(lw(), Pod, { labelSelector: 'app=web' })).toThrow(
      /informer: `labelSelector` \("app=web"\) does not apply to a ListWatch source.*httpListWatch\(kc, \{ resource, labelSelector \}\)/,
    );
    expect(() => informer(lw(), Pod, { namespaces: ['a', 'b'], fieldSelector: 'spec.nodeName=n1' })).toThrow(/`fieldSelector`/);
    expect(() => shardedInformer(lw(), Pod, oneShard, { labelSelector: 'app=web' })).toThrow(/shardedInformer: `labelSelector`/);
  });
});
