import { filter, firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DiscoveryError,
  Pod,
  dynamicInformerFactory,
  informerFactory,
  resourceName,
  type DynamicEvent,
  type InformerEvent,
  type KubeObject,
} from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
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

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    // With a 5–20 ms backoff, an informer still retrying would send a dozen requests in this time.
    await sleep(300);
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
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const errors: unknown[] = [];
    subscriptions.push(dynamic.errors$.subscribe((e) => errors.push(e)));
    const seen = follow(dynamic.watch('all'));
    await until(() => seen.named('started').includes('pods'), 'pods to start');
    api.faults.add({ match: { path: '/apis' }, fault: { type: 'status', code: 500 }, times: 1000 });
    const tries = () => api!.requests.filter((r) => r.path === '/apis' && r.status === 500).length;
    api.registerCustomResource(MyApples);
    await until(() => tries() >= 1, 'a failed discovery');
    api.registerCustomResource({ group: 'other.example.com', version: 'v1', plural: 'pears', kind: 'Pear' });
    await until(() => tries() >= 2, 'a second failed discovery');
    await sleep(50);
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
    const dynamic = dynamicInformerFactory(api.kubeConfig, fast);
    const found: string[][] = [];
    subscriptions.push(
      dynamic.discovery$.subscribe((d) => found.push(d.resources.filter((r) => r.group === 'stable.example.com').map(resourceName))),
    );
    await until(() => found.length === 1, 'the first discovery');
    expect(found).toEqual([[]]);
    api.registerCustomResource(MyApples);
    await firstValueFrom(dynamic.discovery$.pipe(filter((d) => d.resources.some((r) => r.plural === 'myapples'))));
    // Nothing in between: a discovery that served the same would have been emitted before this one.
    expect(found).toEqual([[], ['myapples.stable.example.com']]);
    // A change to the CRD that serves nothing new re-discovers, and emits nothing.
    api.patch('customresourcedefinitions', undefined, 'myapples.stable.example.com', { metadata: { labels: { touched: 'yes' } } });
    await sleep(150);
    expect(found).toEqual([[], ['myapples.stable.example.com']]);
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
