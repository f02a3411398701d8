import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filter, firstValueFrom, shareReplay } from 'rxjs';
import { ConfigMap, Secret, informer, informerFactory, readiness, type InformerHealth } from '../../src/index.ts';
import { serve } from '../../src/metrics/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

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
      await firstValueFrom(factory.health$.pipe(filter((all) => all.length === 2 && all.every((h) => h.synced))));
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

  it('health$ on a real connection: a watch dropped and the server refusing every request is a run of failures; stale 120 s on; well again after', async () => {
    const api2 = await startApiServer({ bookmarkIntervalMs: 50 });
    try {
      const configMaps = informer(api2.kubeConfig, ConfigMap, { namespace: 'default' });
      const sub = configMaps.health$.subscribe(); // keeps the informer running between the waits
      await firstValueFrom(configMaps.health$.pipe(filter((h) => h.synced)));
      // Watching once the server has said something on the watch (the emulator, as kube-apiserver, sends a
      // bookmark only after a change): not when the request went out.
      expect((await firstValueFrom(configMaps.health$)).watching).toBe(false);
      api2.create('configmaps', { metadata: { name: 'first', namespace: 'default' }, data: { x: '1' } });
      const healthy = await firstValueFrom(configMaps.health$.pipe(filter((h) => h.watching)));
      expect(healthy).toMatchObject({ name: 'configmaps', consecutiveFailures: 0, failingSince: undefined });

      const refuse = api2.faults.add({ match: { resource: 'configmaps' }, times: 1_000, fault: { type: 'reset' } });
      api2.faults.add({ live: true, match: { resource: 'configmaps', watch: true }, fault: { type: 'dropWatch' } });
      const failing = await firstValueFrom(configMaps.health$.pipe(filter((h) => h.consecutiveFailures >= 2)));
      expect(failing).toMatchObject({ watching: false, lastFailure: 'NetworkError' });
      expect(failing.failingSince).toBeDefined();
      // Stale once the run of failures is older than the default 120 s (health is data: judged at any time).
      expect(readiness([failing], failing.failingSince! + 120_000).ready).toBe(true);
      expect(readiness([failing], failing.failingSince! + 120_001)).toEqual({
        ready: false,
        reasons: [expect.stringMatching(/^configmaps: failing for 120 s \(\d+ failures in a row, last NetworkError\)$/)],
      });

      refuse.remove();
      api2.create('configmaps', { metadata: { name: 'news', namespace: 'default' }, data: { x: '1' } });
      const well = await firstValueFrom(configMaps.health$.pipe(filter((h) => h.watching && h.consecutiveFailures === 0)));
      expect(well.failingSince).toBeUndefined();
      expect(readiness([well], well.at + 10 * 60_000).ready).toBe(true);
      sub.unsubscribe();
    } finally {
      await api2.close();
    }
  }, 60_000);
});
