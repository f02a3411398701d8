/**
 * An informer over a few namespaces (at most the per-namespace threshold: one list and watch each, merged into one
 * view) knows the server's resourceVersion once it has synced, as a single-namespace informer does: the merged
 * state's resourceVersion is where its lists left off, not '' until the first watch event (audit47 N5). Through the
 * public informer only, on the emulator over HTTP, so it holds however the merging is written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { filter, firstValueFrom } from 'rxjs';
import { ConfigMap, informer } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('informer over a few namespaces (one list and watch each): resourceVersion', () => {
  it("is the server's once synced, before any watch event (not '')", async () => {
    const namespaces = ['ns-a', 'ns-b'];
    api = await startApiServer({ namespaces: [...namespaces, 'ns-other'] });
    for (const namespace of namespaces) api.create('configmaps', { metadata: { name: 'cm', namespace } });
    api.create('configmaps', { metadata: { name: 'later', namespace: 'ns-other' } }); // moves the server's version on
    const kc = new KubeConfig();
    kc.loadFromString(api.kubeConfig.exportConfig());
    const cms = informer(kc, ConfigMap, { namespaces });
    const synced = await firstValueFrom(cms.state$.pipe(filter((s) => s.synced)));
    expect(synced.store.keys().sort()).toEqual(['ns-a/cm', 'ns-b/cm']);
    expect(
      api.requests
        .filter((r) => !r.watch)
        .map((r) => r.namespace)
        .sort(),
    ).toEqual(namespaces);
    // Each namespace's list was served at the server's version: the merged view resumes from there.
    expect(synced.resourceVersion).toBe(api.resourceVersion);
  });
});
