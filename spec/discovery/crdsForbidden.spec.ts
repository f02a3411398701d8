/**
 * A user who may not list CustomResourceDefinitions (a namespaced tenant's RBAC): the CRD watch gets 403 for good.
 * audit28: a CRD installed later was never discovered (nothing else made discovery run again), and the factory's
 * `waitForCacheSync()` waited on the CRD informer, which never syncs. At default options but the factory's scheduler
 * (a VirtualTimeScheduler: the 30 s wait is read from its pending action, and runs when the spec flushes it); the
 * informers and HTTP run in real time against the emulator.
 */
import { VirtualTimeScheduler, type Subscription } from 'rxjs';
import { afterEach, expect, it } from 'vitest';
import { dynamicInformerFactory, type DynamicEvent } from '../../src/discovery/index.ts';
import { CRD_BLIND_REDISCOVERY_MS } from '../../src/discovery/discoveryTriggers.ts';
import type { InformerError, KubeObject } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { until } from '../support/until.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

const MyApples = { group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple' };

it('CRDs forbidden (403): discovery runs every 30 s, a CRD installed later starts, and waitForCacheSync() does not wait on the CRD watch', async () => {
  api = await startApiServer();
  api.faults.add({
    match: { resource: 'customresourcedefinitions' },
    fault: { type: 'status', code: 403, reason: 'Forbidden' },
    times: Infinity,
  });
  const clock = new VirtualTimeScheduler();
  const dynamic = dynamicInformerFactory(api.kubeConfig, { scheduler: clock });
  const errors: InformerError[] = [];
  subscriptions.push(dynamic.errors$.subscribe((e) => errors.push(e)));
  const events: DynamicEvent<KubeObject>[] = [];
  subscriptions.push(dynamic.watch(['myapples'], { namespace: 'shop' }).subscribe((e) => events.push(e)));
  await until(() => events.some((e) => e.type === 'unresolved'), 'myapples to be unresolved');
  await until(() => errors.some((e) => e.reason === 'Forbidden'), 'the CRD watch to be refused');
  // The refused CRD watch has left the factory's count: waitForCacheSync() resolves (nothing else runs yet).
  await until(() => dynamic.factory.informers().length === 0, 'the CRD watch to leave the factory');
  await expect(dynamic.factory.waitForCacheSync(undefined, { timeoutMs: 20_000 })).resolves.toBe(true);

  // Nothing will say a CRD came: the next discovery is due 30 s after the last.
  expect(CRD_BLIND_REDISCOVERY_MS).toBe(30_000);
  await until(() => clock.actions.length > 0, 'the next discovery to be scheduled');
  expect(clock.actions.map((a) => a.delay - clock.now())).toEqual([30_000]);
  api.registerCustomResource(MyApples);
  api.create('myapples.stable.example.com', { metadata: { name: 'a', namespace: 'shop' } });
  clock.flush();
  await until(() => events.some((e) => e.type === 'started'), 'myapples to start');
  const started = events.find((e) => e.type === 'started')!;
  expect(started.type === 'started' && started.resource.plural).toBe('myapples');
  // The factory waits for what the watch runs, not for the CRD watch.
  await expect(dynamic.factory.waitForCacheSync(undefined, { timeoutMs: 20_000 })).resolves.toBe(true);
  expect(dynamic.factory.informers().map((i) => i.resource.plural)).toEqual(['myapples']);
  // And goes on every 30 s while the CRD watch has no list.
  await until(() => clock.actions.length > 0, 'the next discovery to be scheduled');
  expect(clock.actions.map((a) => a.delay - clock.now())).toEqual([30_000]);
});
