/**
 * The CRD watch answered 401 (an expired credential: the next request runs the exec plugin or reads the token file
 * again) is a transient fault, as client-go's reflector and kube-controller-manager take it (retried with backoff,
 * each failure reported): unlike a 403 it stays in the factory's count, so `waitForCacheSync()` waits for it as for
 * every informer the same credential serves; each retry's 401 is on `errors$`, and a `timeoutMs` names it. Once the
 * credential works, the CRD watch lists and the wait resolves. The informers and HTTP run in real time against the
 * emulator, at default options (the reflector's backoff: 800 ms doubling).
 */
import { VirtualTimeScheduler, type Subscription } from 'rxjs';
import { afterEach, expect, it } from 'vitest';
import { dynamicInformerFactory } from '../../src/discovery/index.ts';
import type { InformerError } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { until } from '../support/until.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

it('CRDs unauthorized (401): the CRD watch stays counted and retries, each 401 is reported, a timed wait names it, and it syncs once the credential works', async () => {
  api = await startApiServer();
  const unauthorized = api.faults.add({
    match: { resource: 'customresourcedefinitions' },
    fault: { type: 'status', code: 401, reason: 'Unauthorized' },
    times: Infinity,
  });
  const dynamic = dynamicInformerFactory(api.kubeConfig, { scheduler: new VirtualTimeScheduler() });
  const errors: InformerError[] = [];
  subscriptions.push(dynamic.errors$.subscribe((e) => errors.push(e)));
  subscriptions.push(dynamic.watch(['configmaps'], { namespace: 'shop' }).subscribe());
  // Two 401s: the first list and the retry after the backoff, each reported; the CRD watch is not taken out.
  await until(() => errors.filter((e) => e.reason === 'Unauthorized').length >= 2, 'two 401s to be reported');
  expect(dynamic.factory.informers().map((i) => i.resource.plural)).toContain('customresourcedefinitions');
  // A timed wait names the CRD watch and its 401 rather than hanging without a word.
  const waited = dynamic.factory.waitForCacheSync(undefined, { timeoutMs: 1_000 });
  await expect(waited).rejects.toMatchObject({ reason: 'Timeout' });
  await expect(waited).rejects.toThrow(/: customresourcedefinitions\.apiextensions\.k8s\.io \(Unauthorized: /);
  expect(dynamic.factory.informers().map((i) => i.resource.plural)).toContain('customresourcedefinitions');

  // The credential works again: the CRD watch lists at its next retry and the wait resolves.
  unauthorized.remove();
  await expect(dynamic.factory.waitForCacheSync(undefined, { timeoutMs: 20_000 })).resolves.toBe(true);
  expect(
    dynamic.factory
      .informers()
      .map((i) => i.resource.plural)
      .sort(),
  ).toEqual(['configmaps', 'customresourcedefinitions']);
});
