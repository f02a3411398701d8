import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filter, firstValueFrom, shareReplay } from 'rxjs';
import { ConfigMap, Secret, informerFactory, type InformerHealth } from '../../src/index.ts';
import { serve } from '../../src/metrics/index.ts';
import { startApiServer, type ApiServer } from '../../src/testing/index.ts';

describe('factory.health$ and serve(factory) on the emulator', () => {
  let api: ApiServer;
  beforeEach(async () => {
    api = await startApiServer();
    api.create('configmaps', { metadata: { name: 'a', namespace: 'default' }, data: { x: '1' } });
  });
  afterEach(async () => {
    await api.close();
  });

  it('follows the informers the factory makes and forgets; serve() serves those made after it started', async () => {
    const factory = informerFactory(api.kubeConfig);
    const seen: (readonly InformerHealth[])[] = [];
    const sub = factory.health$.subscribe((h) => seen.push(h));
    expect(seen.at(-1)).toEqual([]);
    const server = serve(factory, { host: '127.0.0.1' }).pipe(shareReplay({ bufferSize: 1, refCount: true }));
    const running = server.subscribe();
    try {
      const { url } = await firstValueFrom(server);
      factory.informer(ConfigMap, { namespace: 'default' });
      const secrets = factory.informer(Secret, { namespace: 'default' });
      await firstValueFrom(factory.health$.pipe(filter((all) => all.length === 2 && all.every((h) => h.synced && h.watching))));
      expect(seen.at(-1)?.map((h) => h.name)).toEqual(['configmaps', 'secrets']);
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain('informer_store_objects{name="configmaps"} 1');
      expect(metrics).toContain('informer_store_objects{name="secrets"} 0');
      expect(await (await fetch(`${url}/readyz`)).text()).toBe('[+]configmaps ok\n[+]secrets ok\nok\n');
      expect(factory.forget(secrets)).toBe(true);
      expect(seen.at(-1)?.map((h) => h.name)).toEqual(['configmaps']);
      expect(await (await fetch(`${url}/metrics`)).text()).not.toContain('name="secrets"');
    } finally {
      running.unsubscribe();
      sub.unsubscribe();
    }
  });
});
