/**
 * The dynamic factory against the emulator, at default options but its scheduler (a VirtualTimeScheduler: the
 * debounce and the update rate limit wait only when the spec flushes it; the informers and HTTP run in real time).
 * audit20: five annotations written on a CRD cost five discovery rounds (30 GETs; hundreds on a real cluster).
 */
import { VirtualTimeScheduler, type Subscription } from 'rxjs';
import { afterEach, expect, it } from 'vitest';
import { dynamicInformerFactory } from '../../src/discovery/index.ts';
import { resourceName } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { until } from '../support/until.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

const Pears = { group: 'fruit.example.com', version: 'v1', plural: 'pears', kind: 'Pear' };
const Apples = { group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple' };
const CRDS = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };

it('annotations written on a CRD schedule no discovery; a change of its spec one, 250 ms later; a CRD created meanwhile starts', async () => {
  api = await startApiServer({ resources: [Pears] });
  const clock = new VirtualTimeScheduler();
  const dynamic = dynamicInformerFactory(api.kubeConfig, { scheduler: clock });
  subscriptions.push(dynamic.errors$.subscribe());
  const started: string[] = [];
  subscriptions.push(dynamic.watch('all').subscribe((e) => e.type === 'started' && started.push(resourceName(e.resource))));
  const crds = dynamic.factory.informers()[0]!;
  const updates: number[] = [];
  subscriptions.push(
    crds.events$.subscribe((e) => e.type === 'updated' && !e.isInInitialList && updates.push(e.object.metadata.generation ?? -1)),
  );
  await until(() => started.includes('pears.fruit.example.com'), 'pears to start');
  await dynamic.factory.waitForCacheSync(undefined, { timeoutMs: 20_000 });
  expect(clock.actions).toEqual([]);

  for (let i = 0; i < 5; i++) api.patch(CRDS, undefined, 'pears.fruit.example.com', { metadata: { annotations: { touched: String(i) } } });
  await until(() => updates.length === 5, 'the five updates');
  await new Promise((r) => setTimeout(r, 0)); // every subscriber of the CRD informer has had them
  expect(updates).toEqual([1, 1, 1, 1, 1]);
  expect(clock.actions).toEqual([]); // no debounce, no rate limit: no round will start

  const rounds = () => api!.requests.filter((r) => r.path === '/apis').length;
  const before = rounds();
  api.patch(CRDS, undefined, 'pears.fruit.example.com', { spec: { names: { shortNames: ['pr'] } } });
  await until(() => updates.length === 6, 'the spec change');
  await new Promise((r) => setTimeout(r, 0));
  expect(updates[5]).toBe(2);
  const due = Math.min(...clock.actions.map((a) => a.delay)) - clock.now();
  expect(due).toBe(250);
  clock.flush();
  await until(() => rounds() === before + 1, 'one discovery round');

  // A CRD created while its neighbour's annotations keep changing: discovered after the debounce.
  api.registerCustomResource(Apples);
  for (let i = 0; i < 5; i++) api.patch(CRDS, undefined, 'pears.fruit.example.com', { metadata: { annotations: { touched: `c${i}` } } });
  await until(() => clock.actions.length > 0, 'the create to be debounced');
  clock.flush();
  await until(() => started.includes('myapples.stable.example.com'), 'myapples to start');
});
