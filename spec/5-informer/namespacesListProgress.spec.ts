/**
 * An informer over several namespaces reports a paged list's progress on `listProgress$`, as an informer over one or
 * all namespaces does (docs/api.md): past 16 namespaces the cluster-wide list's pages; one list per namespace (16 or
 * fewer, or the cluster-wide list Forbidden), the namespaces' lists summed. audit35: it never emitted (namespacesInformer's
 * source dropped `onListProgress`), so `rx-informer watch pods -n <17+ namespaces>` never said `listing … so far`.
 */
import { afterEach, expect, it } from 'vitest';
import { firstValueFrom, filter } from 'rxjs';
import { ConfigMap, informer } from '../../src/index.ts';
import type { ListProgress } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const names = (n: number) => Array.from({ length: n }, (_, i) => `ns-${String(i).padStart(2, '0')}`);

for (const [how, options, clusterForbidden] of [
  ['all namespaces (as before)', {}, false],
  ['17 namespaces (one cluster-wide list)', { namespaces: names(17) }, false],
  ['17 namespaces, the cluster-wide list Forbidden (one list per namespace)', { namespaces: names(17) }, true],
  ['2 namespaces (one list each)', { namespaces: names(2) }, false],
] as const) {
  it(`${how}: a list of several pages reports its progress, both namespaces' objects counted`, async () => {
    api = await startApiServer({ http2: true, namespaces: names(17) });
    // As spec/cli/listProgress.spec.ts: the rv "0" list is served whole; a 410 on it makes the informer list in pages of 500.
    api.faults.add({
      match: { resource: 'configmaps', watch: false, predicate: (r) => r.query['resourceVersion'] === '0' },
      times: Infinity,
      fault: { type: 'status', code: 410, reason: 'Expired' },
    });
    if (clusterForbidden)
      api.faults.add({
        match: { predicate: (q) => q.resource === 'configmaps' && q.namespace === undefined },
        times: Infinity,
        fault: { type: 'status', code: 403, reason: 'Forbidden', message: 'configmaps is forbidden' },
      });
    // 750 in each of ns-00 and ns-01: two pages each, or three for the cluster-wide list.
    for (let i = 0; i < 1500; i++) api.create('configmaps', { metadata: { name: `cm-${i}`, namespace: names(2)[i % 2] } });
    const inf = informer(api.kubeConfig, ConfigMap, options);
    const seen: ListProgress[] = [];
    const progress = inf.listProgress$.subscribe((p) => seen.push(p));
    await firstValueFrom(inf.synced$.pipe(filter(Boolean)));
    progress.unsubscribe();
    expect(seen.length).toBeGreaterThan(0);
    const most = Math.max(...seen.map((p) => p.objects));
    // More than one page of one namespace: the pages of both are counted (the last page of a list is never reported).
    expect(most).toBeGreaterThan(500);
    expect(most).toBeLessThan(1500);
  }, 30_000);
}
