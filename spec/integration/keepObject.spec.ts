/**
 * `informer(kc, r, { http: { keepObject } })` on the emulator: the objects the predicate rejects are not cached (they
 * were cached as `{ metadata }` skeletons, a ConfigMap without its `data`) and their watch events are not delivered.
 */
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, informer } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('informer() with an http.keepObject', () => {
  const cases: readonly { name: string; encoding: 'json' | 'protobuf'; namespaces?: string[] }[] = [
    { name: 'json', encoding: 'json' },
    { name: 'protobuf', encoding: 'protobuf' },
    // Two namespaces read one by one (fewer than `maxNamespaceWatches`): each namespace's read gets the keepObject.
    { name: 'namespaces, one by one', encoding: 'json', namespaces: ['a', 'b'] },
  ];
  for (const { name, encoding, namespaces } of cases) {
    it(`caches and delivers only the objects it keeps (${name})`, async () => {
      api = await startApiServer({ namespaces: ['a', 'b'] });
      for (const namespace of ['a', 'b'])
        for (const name of ['x', 'y']) api.create('configmaps', { metadata: { name, namespace }, data: { k: name } });
      const keepObject = (skeleton: { metadata: { namespace?: string } }) => skeleton.metadata.namespace === 'a';
      const configMaps = informer(api.kubeConfig, ConfigMap, { namespaces, http: { lazyDecode: true, encoding, keepObject } });
      const changes = firstValueFrom(configMaps.events$.pipe(take(3), toArray()));
      const running = configMaps.store$.subscribe();
      try {
        await firstValueFrom(configMaps.synced$.pipe(filter(Boolean)));
        const store = await firstValueFrom(configMaps.store$);
        expect(store.keys().sort()).toEqual(['a/x', 'a/y']);
        expect(store.list().map((cm) => cm.data)).toEqual([{ k: 'x' }, { k: 'y' }]);
        // Watched in this order: b/z first; a/z is delivered, b/z is not (nor its delete).
        api.create('configmaps', { metadata: { name: 'z', namespace: 'b' }, data: { k: 'z' } });
        api.delete('configmaps', 'b', 'x');
        api.create('configmaps', { metadata: { name: 'z', namespace: 'a' }, data: { k: 'z' } });
        const seen = (await changes).map((event) => `${event.type} ${event.object.metadata.namespace}/${event.object.metadata.name}`);
        expect(seen).toEqual(['added a/x', 'added a/y', 'added a/z']);
        expect((await firstValueFrom(configMaps.store$)).keys().sort()).toEqual(['a/x', 'a/y', 'a/z']);
      } finally {
        running.unsubscribe();
      }
    });
  }
});
