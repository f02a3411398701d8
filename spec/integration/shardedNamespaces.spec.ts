/**
 * `shardedInformer(kc, r, shards, { namespaces })` on the emulator: the namespaces are honoured as
 * `informer()` honours them (issue #33.8: only `namespace` was passed through, and every namespace was cached).
 */
import { BehaviorSubject, defer, filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, InformerError, informer, type InformerOptions } from '../../src/index.ts';
import { shardedInformer } from '../../src/leaderelection/index.ts';
import { type ShardSource } from '../../src/pipeline.ts';
import { fakeListWatch } from '../../src/testing/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** One shard, always held: the sharded informer caches what `informer()` would. */
const everything: ShardSource = {
  shards: 1,
  shardOf: () => 0,
  held$: new BehaviorSubject<ReadonlySet<number>>(new Set([0])),
  owns: () => true,
  gate: (_key, work) => defer(work),
};

async function keysOf(cache: {
  readonly store$: import('rxjs').Observable<{ keys(): string[] }>;
  readonly synced$: import('rxjs').Observable<boolean>;
}) {
  const running = cache.store$.subscribe();
  try {
    await firstValueFrom(cache.synced$.pipe(filter(Boolean)));
    return (await firstValueFrom(cache.store$)).keys().sort();
  } finally {
    running.unsubscribe();
  }
}

describe('shardedInformer with namespaces', () => {
  it('caches the objects of those namespaces only, as informer() does; one namespace is read as `namespace`', async () => {
    api = await startApiServer({ namespaces: ['a', 'b', 'c'] });
    for (const namespace of ['a', 'b', 'c']) for (const name of ['x', 'y']) api.create('configmaps', { metadata: { name, namespace } });

    for (const namespaces of [['a', 'b'], ['c'], ['b', 'a', 'b'], []]) {
      const plain = await keysOf(informer(api.kubeConfig, ConfigMap, { namespaces }));
      const sharded = await keysOf(shardedInformer(api.kubeConfig, ConfigMap, everything, { namespaces }));
      expect(sharded, `namespaces ${namespaces.join(',')}`).toEqual(plain);
      expect(sharded.every((key) => namespaces.includes(key.split('/')[0]!))).toBe(true);
    }
    expect(await keysOf(shardedInformer(api.kubeConfig, ConfigMap, everything, { namespaces: ['a', 'b'] }))).toEqual([
      'a/x',
      'a/y',
      'b/x',
      'b/y',
    ]);
    // One namespace: its own list and watch, as `namespace` would.
    api.clearRequests();
    await keysOf(shardedInformer(api.kubeConfig, ConfigMap, everything, { namespaces: ['c'] }));
    const requests = api.requests.filter((r) => r.resource === 'configmaps');
    expect(requests.length).toBeGreaterThan(0);
    expect(new Set(requests.map((r) => r.namespace))).toEqual(new Set(['c']));
  });

  it('maxNamespaceWatches is a type error, and a Config error at run time: several namespaces are one cluster-wide list and watch here', () => {
    const kc = {} as never;
    // @ts-expect-error -- not an option of shardedInformer
    expect(() => shardedInformer(kc, ConfigMap, everything, { namespaces: ['a', 'b'], maxNamespaceWatches: 1 })).toThrow(InformerError);
    const options: InformerOptions<ConfigMap> = { namespaces: ['a', 'b'], maxNamespaceWatches: 1 };
    expect(() => shardedInformer(kc, ConfigMap, everything, options)).toThrow(/maxNamespaceWatches \(1\) does not apply/);
  });

  it('http.keepObject is a Config error: the informer drops the objects of shards it does not hold with its own, which would replace it', () => {
    const source = fakeListWatch();
    const keepObject = () => true;
    expect(() => shardedInformer(source, ConfigMap, everything, { http: { keepObject } })).toThrow(
      expect.objectContaining({ reason: 'Config', message: expect.stringContaining('http.keepObject does not apply') }),
    );
    expect(() => shardedInformer(source, ConfigMap, everything, { http: { lazyDecode: true } })).not.toThrow();
  });
});
