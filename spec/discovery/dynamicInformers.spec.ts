import { VirtualTimeScheduler, filter, firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DiscoveryError, dynamicInformerFactory, type DynamicEvent } from '../../src/discovery/index.ts';
import { Pod, customResource, informerFactory, type InformerEvent, type KubeObject } from '../../src/index.ts';
import { resourceName } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { ServerRequestTracker } from '../resilience/harness/probes.ts';
import { until } from '../support/until.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
const trackers: ServerRequestTracker[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  for (const t of trackers.splice(0)) t.stop();
  await api?.close();
  api = undefined;
});

const MyApples = {
  group: 'stable.example.com',
  version: 'v1',
  plural: 'myapples',
  singular: 'myapple',
  kind: 'MyApple',
  shortNames: ['ma'],
};

/** Follows a dynamic watch: its lifecycle events, and every informer event of every informer it starts. */
function follow<T extends KubeObject>(events$: import('rxjs').Observable<DynamicEvent<T>>) {
  const lifecycle: DynamicEvent<T>[] = [];
  const objects = new Map<string, InformerEvent<T>[]>();
  const completed = new Set<string>();
  subscriptions.push(
    events$.subscribe((e) => {
      lifecycle.push(e);
      if (e.type !== 'started') return;
      const name = resourceName(e.resource);
      objects.set(name, []);
      subscriptions.push(e.informer.events$.subscribe({ next: (x) => objects.get(name)!.push(x), complete: () => completed.add(name) }));
    }),
  );
  const named = (type: DynamicEvent<T>['type']) =>
    lifecycle.filter((e) => e.type === type).map((e) => ('resource' in e ? resourceName(e.resource) : e.name));
  return { lifecycle, objects, completed, named };
}

/** Fast backoff: were the informer of a deleted resource retrying, its requests would pile up within the test's wait. */
const fast = { factoryOptions: { backoff: { initialMs: 5, maxMs: 20 } }, debounceMs: 20 };

describe('dynamicInformerFactory', () => {
  it("watch('all') starts an informer for a CRD created while it runs, with its objects", async () => {
    api = await startApiServer();
    api.create('pods', { metadata: { name: 'web-1', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const seen = follow(dynamic.watch('all'));
    await until(() => seen.named('started').includes('pods'), 'pods to start');
    expect(seen.named('started')).toContain('customresourcedefinitions.apiextensions.k8s.io');
    expect(seen.named('started')).not.toContain('myapples.stable.example.com');
    await until(() => (seen.objects.get('pods') ?? []).length === 1, 'the pod');

    api.registerCustomResource(MyApples);
    api.create('myapples.stable.example.com', { metadata: { name: 'apple-1', namespace: 'shop' }, spec: { color: 'red' } });
    await until(() => seen.named('started').includes('myapples.stable.example.com'), 'myapples to start');
    await until(() => (seen.objects.get('myapples.stable.example.com') ?? []).length === 1, 'apple-1');
    const apple = seen.objects.get('myapples.stable.example.com')![0]!;
    expect(apple.object.metadata.name).toBe('apple-1');
    expect(apple.object['spec']).toEqual({ color: 'red' });
    api.create('myapples.stable.example.com', { metadata: { name: 'apple-2', namespace: 'shop' }, spec: { color: 'green' } });
    await until(() => seen.objects.get('myapples.stable.example.com')!.length === 2, 'apple-2');
    expect(seen.named('ended')).toEqual([]);
  });

  it('deleting the CRD ends its informer with one clear event, completes its streams, and sends no more requests', async () => {
    api = await startApiServer({ resources: [MyApples] });
    api.create('myapples.stable.example.com', { metadata: { name: 'apple-1', namespace: 'shop' }, spec: { color: 'red' } });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const seen = follow(dynamic.watch('all'));
    await until(() => (seen.objects.get('myapples.stable.example.com') ?? []).length === 1, 'apple-1');
    await until(() => api!.requests.some((r) => r.resource === 'myapples' && r.watch), 'the myapples watch');

    api.delete('customresourcedefinitions', undefined, 'myapples.stable.example.com');
    await until(() => seen.named('ended').length > 0, 'the end');
    const ended = seen.lifecycle.filter((e) => e.type === 'ended');
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ reason: 'CRDDeleted', message: 'customresourcedefinition myapples.stable.example.com was deleted' });
    await until(() => seen.completed.has('myapples.stable.example.com'), 'its events$ to complete');

    // By path: once the resource is gone, the log cannot name it.
    const mine = () => api!.requests.filter((r) => r.path.includes('/myapples'));
    const requestsAtEnd = mine().length;
    // A control in the state a leftover informer of myapples would be in: from the same factory (5–20 ms backoff), for a
    // resource that is not served, so each list gets a 404 and is tried again. While it tries ten times, a leftover would
    // try about as often: the comparison holds however fast or loaded the machine is, where a fixed wait would not.
    const control = dynamic.factory.informer(
      customResource({ group: 'control.example.com', version: 'v1', plural: 'ghosts', kind: 'Ghost', namespaced: true }),
    );
    const controlTries = () => api!.requests.filter((r) => r.path.includes('/ghosts') && r.status === 404).length;
    subscriptions.push(control.errors$.subscribe());
    await until(() => controlTries() >= 10, 'ten tries of the control');
    const after = mine();
    expect(after.length).toBe(requestsAtEnd);
    expect(after.filter((r) => r.status === 404).length).toBeLessThanOrEqual(1);
    expect(after.filter((r) => r.watch).every((r) => r.ended !== undefined)).toBe(true);
    // Still one event: rediscovery agrees, and says nothing more.
    expect(seen.lifecycle.filter((e) => e.type === 'ended')).toHaveLength(1);
    expect(seen.named('started').filter((n) => n === 'myapples.stable.example.com')).toHaveLength(1);

    // Installed again, it comes back as a new start.
    api.registerCustomResource(MyApples);
    await until(() => seen.named('started').filter((n) => n === 'myapples.stable.example.com').length === 2, 'the second start');
  });

  it('a group version discovery cannot read (503) on a later discovery keeps its informers running', async () => {
    api = await startApiServer({ resources: [MyApples] });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const seen = follow(dynamic.watch('all'));
    const found: number[] = [];
    subscriptions.push(dynamic.discovery$.subscribe((d) => found.push(d.failures.length)));
    await until(() => seen.named('started').includes('myapples.stable.example.com'), 'myapples to start');
    api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 }, times: 1000 });
    // Another CRD makes the factory discover again.
    api.registerCustomResource({ group: 'other.example.com', version: 'v1', plural: 'pears', kind: 'Pear' });
    await until(() => seen.named('started').includes('pears.other.example.com'), 'pears to start');
    expect(found.at(-1)).toBe(1);
    expect(seen.named('ended')).toEqual([]);
  });

  it('errors$ reports a failing group version once while it lasts, on any discovery; again when it fails after reading well', async () => {
    api = await startApiServer({ resources: [MyApples] });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const errors: unknown[] = [];
    subscriptions.push(dynamic.errors$.subscribe((e) => errors.push(e)));
    const seen = follow(dynamic.watch('all'));
    await until(() => seen.named('started').includes('myapples.stable.example.com'), 'myapples to start');
    const discoveryErrors = () => errors.filter((e): e is DiscoveryError => e instanceof DiscoveryError);
    const crd = (plural: string, kind: string) => ({ group: 'other.example.com', version: 'v1', plural, kind });
    const discoveryRequests = () => api!.requests.filter((r) => r.path === '/apis/stable.example.com/v1').length;

    const fault = api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 }, times: 1000 });
    // Three later discoveries (one per CRD installed), each failing to read stable.example.com/v1: one report.
    for (const [plural, kind] of [
      ['pears', 'Pear'],
      ['plums', 'Plum'],
      ['figs', 'Fig'],
    ] as const) {
      const before = discoveryRequests();
      api.registerCustomResource(crd(plural, kind));
      await until(() => seen.named('started').includes(`${plural}.other.example.com`), `${plural} to start`);
      expect(discoveryRequests()).toBeGreaterThan(before);
    }
    expect(discoveryErrors()).toHaveLength(1);
    expect(discoveryErrors()[0]).toMatchObject({ groupVersion: 'stable.example.com/v1', reason: 'ServerError', status: 503 });
    expect(seen.named('ended')).toEqual([]);

    // Read well once, then failing again: reported again.
    fault.remove();
    api.registerCustomResource(crd('kiwis', 'Kiwi'));
    await until(() => seen.named('started').includes('kiwis.other.example.com'), 'kiwis to start');
    api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 }, times: 1000 });
    api.registerCustomResource(crd('limes', 'Lime'));
    await until(() => seen.named('started').includes('limes.other.example.com'), 'limes to start');
    expect(discoveryErrors().map((e) => e.groupVersion)).toEqual(['stable.example.com/v1', 'stable.example.com/v1']);
  });

  it('errors$ reports discovery failing as a whole (/apis) once per reason, without a group version', async () => {
    api = await startApiServer();
    const tracker = new ServerRequestTracker(api.port);
    trackers.push(tracker);
    // The discoveries after a CRD change start when the test flushes this scheduler (their debounce), and so does the
    // retry after a failed one: each flush starts at least one discovery (a CRD change coming during a round, the retry
    // round say, runs one more after it: a round in flight is not cancelled).
    const debounce = new VirtualTimeScheduler();
    const dynamic = dynamicInformerFactory(api.kubeConfig, { ...fast, scheduler: debounce });
    const errors: unknown[] = [];
    subscriptions.push(dynamic.errors$.subscribe((e) => errors.push(e)));
    const seen = follow(dynamic.watch('all'));
    await until(() => seen.named('started').includes('pods'), 'pods to start');
    // The CRD watch has its list (the discovery that follows it has started), and no discovery reads /api or /apis now.
    await dynamic.factory.waitForCacheSync(undefined, { timeoutMs: 20_000 });
    const top = (path: string) => tracker.requests.filter((r) => new URL(r.url, 'http://x').pathname === path);
    await until(() => [...top('/api'), ...top('/apis')].every((r) => r.closeAt !== undefined), 'the first discoveries');

    api.faults.add({ match: { path: '/apis' }, fault: { type: 'status', code: 500 }, times: Infinity });
    // /api is held, and a discovery that fails on /apis lets it go, which the server sees as its close. It lets it go
    // after handing the failure to errors$ (in the same synchronous step): once /api has closed, the failure was handled.
    api.faults.add({ match: { path: '/api' }, fault: { type: 'delay', ms: 600_000 }, times: Infinity });
    const held = top('/api').length;
    const crds = [MyApples, { group: 'other.example.com', version: 'v1', plural: 'pears', kind: 'Pear' }];
    for (const [i, crd] of crds.entries()) {
      api.registerCustomResource(crd);
      await until(() => debounce.actions.length > 0, `the change of CRD ${crd.plural}`);
      debounce.flush();
      await until(
        () =>
          top('/api')
            .slice(held)
            .filter((r) => r.closeAt !== undefined).length >=
          i + 1,
        `failed discovery ${i + 1}`,
      );
    }
    expect(api.requests.filter((r) => r.path === '/apis' && r.status === 500).length).toBeGreaterThanOrEqual(2);
    const whole = errors.filter((e): e is DiscoveryError => e instanceof DiscoveryError);
    expect(whole).toHaveLength(1);
    expect(whole[0]).toMatchObject({ groupVersion: undefined, reason: 'ServerError', status: 500 });
  });

  it('by name: reports a name it cannot resolve yet, then starts it when its CRD is installed', async () => {
    api = await startApiServer();
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const seen = follow(dynamic.watch(['ma', 'deploy']));
    await until(() => seen.named('started').length === 1 && seen.named('unresolved').length === 1, 'deploy and the unresolved name');
    expect(seen.named('started')).toEqual(['deployments.apps']);
    const unresolved = seen.lifecycle.find((e) => e.type === 'unresolved')!;
    expect(unresolved).toMatchObject({ name: 'ma', error: { reason: 'Unknown' } });

    api.registerCustomResource(MyApples);
    await until(() => seen.named('started').length === 2, 'ma to start');
    expect(seen.named('started')).toEqual(['deployments.apps', 'myapples.stable.example.com']);
    expect(seen.named('unresolved')).toEqual(['ma']);
  });

  it('metadata-only dynamic informers hold no spec or status', async () => {
    api = await startApiServer();
    api.create('pods', { metadata: { name: 'web-1', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const seen = follow(dynamic.watch(['pods'], { metadataOnly: true }));
    await until(() => (seen.objects.get('pods') ?? []).length === 1, 'the pod');
    const pod = seen.objects.get('pods')![0]!.object;
    expect(pod.kind).toBe('PartialObjectMetadata');
    expect(Object.keys(pod).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
  });

  it('discovery$ emits again when a CRD is installed, and only when what is served changed', async () => {
    api = await startApiServer();
    // apps/v1 cannot be read throughout (its resources are never served): the marker that a discovery has run, below.
    const unreadable = api.faults.add({ match: { path: '/apis/apps/v1' }, fault: { type: 'status', code: 503 }, times: Infinity });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const reported: string[] = [];
    subscriptions.push(dynamic.errors$.subscribe((e) => e instanceof DiscoveryError && reported.push(`${e.groupVersion} ${e.reason}`)));
    const found: string[][] = [];
    subscriptions.push(
      dynamic.discovery$.subscribe((d) => found.push(d.resources.filter((r) => r.group === 'stable.example.com').map(resourceName))),
    );
    await until(() => found.length === 1, 'the first discovery');
    expect(found).toEqual([[]]);
    api.registerCustomResource(MyApples);
    await firstValueFrom(dynamic.discovery$.pipe(filter((d) => d.resources.some((r) => r.plural === 'myapples'))));
    // Nothing in between. A round in flight when the CRD was created (a retry: apps/v1 fails) finishes and may serve
    // myapples already; the round the creation started is emitted too (a CRD was created since the last one started).
    const distinct = found.filter((f, i) => i === 0 || JSON.stringify(f) !== JSON.stringify(found[i - 1]));
    expect(distinct).toEqual([[], ['myapples.stable.example.com']]);
    expect(reported).toEqual(['apps/v1 ServerError']);
    // A change to the CRD that serves nothing new re-discovers, and emits nothing. That discovery finds apps/v1
    // failing for another reason, which errors$ reports before discovery$ decides, in the same synchronous step,
    // whether to emit: once the report is in, the decision is made (no wall-clock wait for "nothing").
    unreadable.remove();
    api.faults.add({ match: { path: '/apis/apps/v1' }, fault: { type: 'status', code: 403 }, times: Infinity });
    api.patch('customresourcedefinitions', undefined, 'myapples.stable.example.com', { metadata: { labels: { touched: 'yes' } } });
    await until(() => reported.length === 2, 'the discovery after the change');
    expect(reported).toEqual(['apps/v1 ServerError', 'apps/v1 Forbidden']);
    // Served the same throughout (at most the one repeat above, after the creation): nothing more emitted.
    expect(found.filter((f, i) => i === 0 || JSON.stringify(f) !== JSON.stringify(found[i - 1]))).toEqual(distinct);
    expect(found.length).toBeLessThanOrEqual(3);
  });

  it('an ended informer leaves the factory: waitForCacheSync() resolves, and the CRD created again gets a fresh informer that works', async () => {
    api = await startApiServer({ resources: [MyApples] });
    api.create('myapples.stable.example.com', { metadata: { name: 'apple-1', namespace: 'shop' }, spec: { color: 'red' } });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const { factory } = dynamic;
    const apples = () => factory.informers().filter((i) => i.resource.plural === 'myapples');
    const seen = follow(dynamic.watch('all'));
    await until(() => (seen.objects.get('myapples.stable.example.com') ?? []).length === 1, 'apple-1');
    const [first] = apples();
    expect(apples()).toHaveLength(1);
    await expect(factory.waitForCacheSync(undefined, { timeoutMs: 20_000 })).resolves.toBe(true);

    api.delete('customresourcedefinitions', undefined, 'myapples.stable.example.com');
    await until(() => seen.named('ended').length === 1, 'the end');
    // Gone from the factory when the end is heard; before, this waited on a 404 forever (here: a Timeout).
    expect(apples()).toEqual([]);
    expect(factory.informers().length).toBeGreaterThan(0);
    await expect(factory.waitForCacheSync(undefined, { timeoutMs: 20_000 })).resolves.toBe(true);

    api.registerCustomResource(MyApples);
    api.create('myapples.stable.example.com', { metadata: { name: 'apple-2', namespace: 'shop' }, spec: { color: 'green' } });
    await until(() => seen.named('started').filter((n) => n === 'myapples.stable.example.com').length === 2, 'the second start');
    await until(() => (seen.objects.get('myapples.stable.example.com') ?? []).some((e) => e.object.metadata.name === 'apple-2'), 'apple-2');
    expect(apples()).toHaveLength(1);
    expect(apples()[0]).not.toBe(first);
    await expect(factory.waitForCacheSync(undefined, { timeoutMs: 20_000 })).resolves.toBe(true);
    const store = await firstValueFrom(apples()[0]!.store$);
    expect(store.list().map((a) => a.metadata.name)).toEqual(['apple-2']);
  });

  it('an informer another watch still runs stays in the factory when one watch ends it as NotServed, and leaves with that watch', async () => {
    api = await startApiServer({ resources: [MyApples] });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const { factory } = dynamic;
    const apples = () => factory.informers().filter((i) => i.resource.plural === 'myapples');
    let wanted = true;
    const byPredicate = follow(dynamic.watch((r) => wanted && r.plural === 'myapples'));
    const byName = follow(dynamic.watch(['myapples']));
    await until(() => byPredicate.named('started').length === 1 && byName.named('started').length === 1, 'both to start');
    expect(apples()).toHaveLength(1);

    // The predicate lets go of myapples at the next discovery (a new CRD makes one).
    wanted = false;
    api.registerCustomResource({ ...MyApples, plural: 'mypears', singular: 'mypear', kind: 'MyPear', shortNames: [] });
    await until(() => byPredicate.named('ended').length === 1, 'the predicate watch to end myapples');
    expect(byPredicate.lifecycle.find((e) => e.type === 'ended')).toMatchObject({ reason: 'NotServed' });
    // The watch by name still runs it: it stays in the factory.
    expect(byName.named('ended')).toEqual([]);
    expect(apples()).toHaveLength(1);
    await expect(factory.waitForCacheSync(undefined, { timeoutMs: 20_000 })).resolves.toBe(true);

    // That watch lets go too: nobody runs what a watch ended, so it leaves the factory.
    subscriptions.splice(0).forEach((s) => s.unsubscribe());
    expect(apples()).toEqual([]);
  });

  it('two dynamic factories over one factory: one ending an informer as NotServed leaves it there while the other runs it', async () => {
    api = await startApiServer({ resources: [MyApples] });
    const factory = informerFactory(api.kubeConfig);
    const a = dynamicInformerFactory(api.kubeConfig, { factory });
    const b = dynamicInformerFactory(api.kubeConfig, { factory });
    subscriptions.push(a.errors$.subscribe(), b.errors$.subscribe());
    const apples = () => factory.informers().filter((i) => i.resource.plural === 'myapples');
    let wanted = true;
    const byPredicate = follow(a.watch((r) => wanted && r.plural === 'myapples'));
    const byName = follow(b.watch(['myapples']));
    await until(() => byPredicate.named('started').length === 1 && byName.named('started').length === 1, 'both to start');
    expect(apples()).toHaveLength(1);

    // A's watch lets go of myapples at its next discovery; B's still runs it: it stays in the shared factory (a second
    // factory.informer() for it would otherwise open a second list and watch next to B's).
    wanted = false;
    api.registerCustomResource({ ...MyApples, plural: 'mypears', singular: 'mypear', kind: 'MyPear', shortNames: [] });
    await until(() => byPredicate.named('ended').length === 1, 'A to end myapples');
    expect(byName.named('ended')).toEqual([]);
    expect(apples()).toHaveLength(1);

    // B lets go too: it leaves the factory.
    subscriptions.splice(0).forEach((s) => s.unsubscribe());
    expect(apples()).toEqual([]);
  });

  it('a CRD deleted and created again at once (no discovery in between) starts again', async () => {
    api = await startApiServer({ resources: [MyApples] });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const seen = follow(dynamic.watch(['myapples']));
    await until(() => seen.named('started').length === 1, 'the first start');
    api.delete('customresourcedefinitions', undefined, 'myapples.stable.example.com');
    await until(() => seen.named('ended').length === 1, 'the end');
    api.registerCustomResource(MyApples);
    api.create('myapples.stable.example.com', { metadata: { name: 'apple-2', namespace: 'shop' }, spec: { color: 'green' } });
    await until(() => seen.named('started').length === 2, 'the second start');
    await until(() => (seen.objects.get('myapples.stable.example.com') ?? []).some((e) => e.object.metadata.name === 'apple-2'), 'apple-2');
  });
});

describe('dynamicInformerFactory: watches whose options conflict on a shared informer', () => {
  it("a second watch asking another resyncPeriod for a resource the first runs ends with the factory's Config error; the first runs on", async () => {
    api = await startApiServer();
    api.create('pods', { metadata: { name: 'web-1', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const first = follow(dynamic.watch(['pods'], { resyncPeriod: 60_000 }));
    await until(() => (first.objects.get('pods') ?? []).length === 1, 'the pod');
    let failed: unknown;
    const lifecycle: string[] = [];
    subscriptions.push(
      dynamic.watch(['pods', 'configmaps'], { resyncPeriod: 30_000 }).subscribe({
        next: (e) => lifecycle.push(e.type),
        error: (error: unknown) => (failed = error),
      }),
    );
    await until(() => failed !== undefined, 'the second watch to fail');
    expect(failed).toMatchObject({ reason: 'Config' });
    expect((failed as Error).message).toMatch(
      /pods in all namespaces was made with resyncPeriod 60000; a later request for it asks for 30000/,
    );
    expect(lifecycle).toEqual([]);
    // Nothing of the failed watch is held: the factory has the first watch's informer only, which still runs.
    expect(dynamic.factory.informers().map((i) => resourceName(i.resource))).toEqual([
      'customresourcedefinitions.apiextensions.k8s.io',
      'pods',
    ]);
    api.create('pods', { metadata: { name: 'web-2', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    await until(() => first.objects.get('pods')!.length === 2, 'the second pod');
    // The same options share it.
    const same = follow(dynamic.watch(['pods'], { resyncPeriod: 60_000 }));
    await until(() => same.named('started').length === 1, 'the third watch');
    expect(same.lifecycle[0]).toMatchObject({ type: 'started' });
  });
});

describe('InformerFactory.forget', () => {
  it('drops that very informer: informer() then makes a fresh one, and forgetting a stale one drops nothing', async () => {
    api = await startApiServer();
    const factory = informerFactory(api.kubeConfig);
    const first = factory.informer(Pod);
    expect(factory.informer(Pod)).toBe(first);
    expect(factory.forget(first)).toBe(true);
    expect(factory.informers()).toEqual([]);
    expect(factory.forget(first)).toBe(false);
    const second = factory.informer(Pod);
    expect(second).not.toBe(first);
    expect(factory.forget(first)).toBe(false);
    expect(factory.informers()).toEqual([second]);
    await expect(factory.waitForCacheSync(undefined, { timeoutMs: 20_000 })).resolves.toBe(true);
    // A forgotten informer still works for whoever holds it.
    const kept = first.synced$.subscribe();
    subscriptions.push(kept);
    await firstValueFrom(first.synced$.pipe(filter(Boolean)));
  });
});

describe("a dynamic watch's informers report the faults nobody observes", () => {
  /** A watch of configmaps whose handler throws for `a`, then hears `b`; what was warned by then. */
  async function handled(options: Parameters<typeof dynamicInformerFactory>[1] = {}): Promise<string[]> {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      api = await startApiServer({ namespaces: ['shop'] });
      for (const name of ['a', 'b']) api.create('configmaps', { metadata: { name, namespace: 'shop' } });
      const dynamic = dynamicInformerFactory(api.kubeConfig, options);
      let heard!: () => void;
      const b = new Promise<void>((resolve) => (heard = resolve));
      subscriptions.push(
        dynamic.watch(['configmaps'], { namespace: 'shop' }).subscribe((e) => {
          if (e.type !== 'started') return;
          subscriptions.push(
            e.informer.on((event) => {
              if (event.object.metadata.name === 'a') throw new Error('handler bug');
              heard();
            }),
          );
        }),
      );
      await b;
      return warn.mock.calls.filter(([, o]) => (o as { type?: string }).type === 'RxInformerWarning').map(([message]) => String(message));
    } finally {
      warn.mockRestore();
    }
  }

  it('a handler that throws, errors$ unobserved: warned as a typed informer is', async () => {
    expect(await handled()).toEqual(['informer configmaps: HandlerError: the added handler threw for shop/a: handler bug']);
  });

  it("none with the factory's reportUnobservedErrors: false", async () => {
    expect(await handled({ factoryOptions: { reportUnobservedErrors: false } })).toEqual([]);
  });
});

describe("a dynamic factory's discovery faults nobody observes", () => {
  /** Discovery with the group version of MyApples failing (503); what was warned once it emitted. */
  async function discovered(options: Parameters<typeof dynamicInformerFactory>[1] = {}, observe = false): Promise<string[]> {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      api = await startApiServer({ resources: [MyApples] });
      api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 }, times: 1000 });
      const dynamic = dynamicInformerFactory(api.kubeConfig, options);
      if (observe) subscriptions.push(dynamic.errors$.subscribe());
      await firstValueFrom(dynamic.discovery$);
      return warn.mock.calls.filter(([, o]) => (o as { type?: string }).type === 'RxInformerWarning').map(([message]) => String(message));
    } finally {
      warn.mockRestore();
    }
  }

  it('are warned, naming the request; none while errors$ has a subscriber, none with reportUnobservedErrors: false', async () => {
    expect(await discovered()).toEqual([
      'discovery: ServerError: the server is currently unable to handle the request (GET /apis/stable.example.com/v1)',
    ]);
    await api!.close();
    expect(await discovered({}, true)).toEqual([]);
    await api!.close();
    expect(await discovered({ reportUnobservedErrors: false })).toEqual([]);
  });
});
