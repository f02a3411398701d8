/**
 * A 429 with Retry-After on a continue page, over HTTP against the emulator: the same page is asked again after the
 * Retry-After, and page 1 is asked once (audit23: the pages read were thrown away and the list began again from
 * page 1, so under API Priority and Fairness a list of N pages completed only when N pages in a row were let through).
 * The 429's body is charged as an error body, and the page asked again keeps the list's budget (listBudget.spec.ts).
 */
import { filter, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, informer } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('a 429 on a continue page (audit23)', () => {
  it('asks the same continue token again, not page 1; the cache holds every object', async () => {
    api = await startApiServer();
    for (let i = 0; i < 10; i++) api.create('configmaps', { metadata: { name: `c${i}`, namespace: 'default' } });
    api.faults.add({
      match: { resource: 'configmaps', watch: false, predicate: (q) => q.query['continue'] !== undefined },
      times: 1,
      fault: { type: 'status', code: 429, retryAfterSeconds: 1 },
    });
    // The rv=0 answer is whole (a watch cache ignores limit): a small maxListBytes makes it page at "" (semantics.md table).
    const cms = informer(api.kubeConfig, ConfigMap, { pageSize: 2, http: { maxListBytes: 1500 } });
    const s = cms.store$.subscribe();
    await firstValueFrom(cms.synced$.pipe(filter(Boolean)));
    const store = await firstValueFrom(cms.store$);
    s.unsubscribe();
    expect(store.size).toBe(10);
    const lists = api.requests.filter((r) => r.resource === 'configmaps' && !r.watch);
    const firstPagesAtLatest = lists.filter((r) => !r.query['continue'] && r.query['resourceVersion'] === undefined);
    expect(firstPagesAtLatest).toHaveLength(1);
    const throttled = lists.find((r) => r.status === 429);
    expect(throttled?.query['continue']).toBeDefined();
    const again = lists.filter((r) => r.query['continue'] === throttled?.query['continue']);
    expect(again.map((r) => r.status)).toEqual([429, 200]);
  }, 30_000);
});
