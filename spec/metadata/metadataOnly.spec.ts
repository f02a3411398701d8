import { filter, firstValueFrom, take, toArray, type Subscription } from 'rxjs';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  Pod,
  informer,
  informerFactory,
  metadataOnly,
  stripManagedFields,
  type Informer,
  type InformerEvent,
  type PartialObjectMetadata,
} from '../../src/index.ts';
import { InformerError } from '../../src/0-model/errors.ts';
import { startApiServer, type ApiServer, type ApiServerOptions } from 'rx-informer-emulator';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

const pod = (name: string, labels: Record<string, string> = {}) => ({
  metadata: {
    name,
    namespace: 'shop',
    labels,
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'u-1', controller: true }],
  },
  spec: { containers: [{ name: 'nginx', image: 'nginx', env: [{ name: 'GREETING', value: 'hello' }] }] },
});

async function server(options: ApiServerOptions = {}): Promise<ApiServer> {
  api = await startApiServer({ bookmarkIntervalMs: 50, ...options });
  api.create('pods', pod('web-1', { app: 'web' }));
  api.create('pods', pod('web-2', { app: 'web' }));
  api.create('pods', pod('db-1', { app: 'db' }));
  return api;
}

function start<T>(i: Informer<T>): InformerEvent<T>[] {
  const events: InformerEvent<T>[] = [];
  subscriptions.push(i.events$.subscribe((e) => events.push(e)));
  return events;
}

const synced = (i: { readonly synced$: Informer<unknown>['synced$'] }) => firstValueFrom(i.synced$.pipe(filter(Boolean)));

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Exactly one error, the NotAcceptable notice of the 406, from the request that got it. */
function expectOneNotAcceptable(errors: readonly unknown[], phase: 'list' | 'watch'): void {
  expect(errors).toHaveLength(1);
  const [error] = errors;
  expect(error).toBeInstanceOf(InformerError);
  expect(error).toMatchObject({ reason: 'NotAcceptable', status: 406, phase });
  expect((error as InformerError).message).toMatch(/does not serve PartialObjectMetadata .*full objects/);
}

function expectMetadataOnly(object: PartialObjectMetadata): void {
  expect(Object.keys(object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
  expect(object.kind).toBe('PartialObjectMetadata');
  expect(object.apiVersion).toBe('meta.k8s.io/v1');
  expect(JSON.stringify(object)).not.toMatch(/"(spec|status|containers)"/);
}

describe('metadataOnly(Pod)', () => {
  it('is typed as metadata only', () => {
    const pods = informer(startApiServerKubeConfigPlaceholder(), metadataOnly(Pod));
    expectTypeOf(pods).toEqualTypeOf<Informer<PartialObjectMetadata>>();
    expectTypeOf<PartialObjectMetadata['kind']>().toEqualTypeOf<'PartialObjectMetadata'>();
    const readSpec = (p: PartialObjectMetadata) =>
      // @ts-expect-error a metadata-only pod has no spec
      p.spec;
    expect(readSpec).toBeTypeOf('function');
  });

  it('caches pods without spec or status, with the same events, store and indexers as a full informer', async () => {
    await server();
    const pods = informer(api!.kubeConfig, metadataOnly(Pod), {
      indexers: { app: (p) => [p.metadata.labels?.['app'] ?? ''] },
      transform: stripManagedFields,
    });
    const events = start(pods);
    await synced(pods);
    const store = await firstValueFrom(pods.store$);
    expect(store.size).toBe(3);
    for (const p of store.list()) expectMetadataOnly(p);
    expect(store.get('shop/web-1')!.metadata.ownerReferences?.[0]?.name).toBe('web-1');
    expect(
      store
        .byIndex('app', 'web')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['web-1', 'web-2']);
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['added', 'db-1'],
      ['added', 'web-1'],
      ['added', 'web-2'],
    ]);

    api!.patch('pods', 'shop', 'web-1', { metadata: { labels: { app: 'db' } } });
    api!.patch('pods', 'shop', 'web-2', { metadata: { finalizers: ['example.com/keep'] } });
    api!.delete('pods', 'shop', 'db-1');
    await until(() => events.length === 6);
    expect(events.slice(3).map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['updated', 'web-1'],
      ['updated', 'web-2'],
      ['deleted', 'db-1'],
    ]);
    for (const e of events) expectMetadataOnly(e.object);
    const after = await firstValueFrom(pods.store$);
    expect(after.byIndex('app', 'db').map((p) => p.metadata.name)).toEqual(['web-1']);
    expect(after.get('shop/web-2')!.metadata['finalizers']).toEqual(['example.com/keep']);
  });

  it('falls back to plain JSON when the server answers 406, for the list and for the watch, and still caches metadata only', async () => {
    await server();
    const notAcceptable = {
      type: 'status',
      code: 406,
      reason: 'NotAcceptable',
      message: 'only the following media types are accepted: application/json',
    } as const;
    api!.faults.add({ match: { resource: 'pods', watch: false }, fault: notAcceptable });
    const pods = informer(api!.kubeConfig, metadataOnly(Pod));
    const errors: unknown[] = [];
    subscriptions.push(pods.errors$.subscribe((e) => errors.push(e)));
    const events = start(pods);
    await synced(pods);
    const lists = api!.requests.filter((r) => r.resource === 'pods' && !r.watch).map((r) => r.status);
    expect(lists).toEqual([406, 200]);
    for (const p of (await firstValueFrom(pods.store$)).list()) expectMetadataOnly(p);
    api!.patch('pods', 'shop', 'web-1', { metadata: { labels: { v: '2' } } });
    await until(() => events.length === 4);
    expectMetadataOnly(events[3]!.object);
    expectOneNotAcceptable(errors, 'list');
  });

  it('a watch answered 406 is sent again as plain JSON at once, not after a backoff', async () => {
    await server();
    api!.faults.add({ match: { resource: 'pods', watch: true }, fault: { type: 'status', code: 406, reason: 'NotAcceptable' } });
    const pods = informer(api!.kubeConfig, metadataOnly(Pod), { backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const events = start(pods);
    await synced(pods);
    await until(() => api!.requests.some((r) => r.watch && r.status === 200));
    api!.patch('pods', 'shop', 'web-1', { metadata: { labels: { v: '2' } } });
    await until(() => events.length === 4);
    expect(events[3]!.type).toBe('updated');
    expectMetadataOnly(events[3]!.object);
    expect(api!.requests.filter((r) => r.watch).map((r) => r.status)).toEqual([406, 200]);
  });

  describe('a 406 is reported once, as a NotAcceptable notice', () => {
    const notAcceptable = {
      type: 'status',
      code: 406,
      reason: 'NotAcceptable',
      message: 'only the following media types are accepted: application/json',
    } as const;

    it('on errors$, once, with the store right, and no extra request or backoff (a server without PartialObjectMetadata)', async () => {
      await server({ partialObjectMetadata: false });
      api!.faults.add({ match: { resource: 'pods', watch: false }, fault: notAcceptable });
      // A backoff would show: the first step is a minute.
      const pods = informer(api!.kubeConfig, metadataOnly(Pod), { backoff: { initialMs: 60_000, maxMs: 60_000 } });
      const errors: InformerError[] = [];
      subscriptions.push(pods.errors$.subscribe((e) => errors.push(e)));
      const events = start(pods);
      await synced(pods);
      expectOneNotAcceptable(errors, 'list');
      const store = await firstValueFrom(pods.store$);
      expect(store.keys().sort()).toEqual(['shop/db-1', 'shop/web-1', 'shop/web-2']);
      for (const p of store.list()) expectMetadataOnly(p);

      // The watch goes on (plain JSON from now on); a dropped watch is resumed without a second notice.
      await until(() => api!.requests.some((r) => r.resource === 'pods' && r.watch && r.status === 200));
      api!.patch('pods', 'shop', 'web-1', { metadata: { labels: { v: '2' } } });
      await until(() => events.length === 4);
      expectMetadataOnly(events[3]!.object);
      api!.faults.add({ live: true, match: { resource: 'pods' }, fault: { type: 'dropWatch' } });
      await until(() => api!.requests.filter((r) => r.resource === 'pods' && r.watch).length === 2);
      api!.patch('pods', 'shop', 'web-2', { metadata: { labels: { v: '2' } } });
      await until(() => events.length === 5);
      expectMetadataOnly(events[4]!.object);
      const pods$ = api!.requests.filter((r) => r.resource === 'pods');
      expect(pods$.filter((r) => !r.watch).map((r) => r.status)).toEqual([406, 200]);
      expect(pods$.filter((r) => r.watch).map((r) => r.status)).toEqual([200, 200]);
      expect(errors.filter((e) => e.reason === 'NotAcceptable')).toHaveLength(1);
    });

    it('is kept for the first request that succeeds when the fallback itself fails, and still reported once', async () => {
      await server({ partialObjectMetadata: false });
      api!.faults.add({ match: { resource: 'pods', watch: false }, fault: notAcceptable });
      // Rules fire in order: the first list gets the 406, the second (the plain JSON one) the 500.
      api!.faults.add({ match: { resource: 'pods', watch: false }, fault: { type: 'status', code: 500, message: 'etcd is away' } });
      const pods = informer(api!.kubeConfig, metadataOnly(Pod), { backoff: { initialMs: 10, maxMs: 10 } });
      const errors: InformerError[] = [];
      subscriptions.push(pods.errors$.subscribe((e) => errors.push(e)));
      start(pods);
      await synced(pods);
      expect(api!.requests.filter((r) => r.resource === 'pods' && !r.watch).map((r) => r.status)).toEqual([406, 500, 200]);
      expect(errors.map((e) => e.reason)).toEqual(['ServerError', 'NotAcceptable']);
      for (const p of (await firstValueFrom(pods.store$)).list()) expectMetadataOnly(p);
    });

    it('on a streaming list, from the watch, without ending it', async () => {
      await server({ partialObjectMetadata: false });
      api!.faults.add({ match: { resource: 'pods', watch: true }, fault: notAcceptable });
      const pods = informer(api!.kubeConfig, metadataOnly(Pod), { watchList: true, backoff: { initialMs: 60_000, maxMs: 60_000 } });
      const errors: InformerError[] = [];
      subscriptions.push(pods.errors$.subscribe((e) => errors.push(e)));
      const events = start(pods);
      await synced(pods);
      expectOneNotAcceptable(errors, 'watch');
      expect(api!.requests.filter((r) => r.resource === 'pods').map((r) => [r.watch, r.status])).toEqual([
        [true, 406],
        [true, 200],
      ]);
      for (const p of (await firstValueFrom(pods.store$)).list()) expectMetadataOnly(p);
      api!.patch('pods', 'shop', 'web-1', { metadata: { labels: { v: '2' } } });
      await until(() => events.length === 4);
      expectMetadataOnly(events[3]!.object);
      expect(api!.requests.filter((r) => r.resource === 'pods')).toHaveLength(2);
    });

    it('does not disarm resync (a notice, not a transport fault)', async () => {
      // No bookmarks, no changes: after the notice nothing else would re-arm the resync timer.
      await server({ bookmarkIntervalMs: 600_000 });
      api!.faults.add({ match: { resource: 'pods', watch: true }, fault: notAcceptable });
      const pods = informer(api!.kubeConfig, metadataOnly(Pod), { resyncPeriod: 100 });
      const errors: InformerError[] = [];
      subscriptions.push(pods.errors$.subscribe((e) => errors.push(e)));
      const events = start(pods);
      await synced(pods);
      await until(() => errors.length === 1);
      const resyncs = () => events.filter((e) => e.type === 'updated' && e.resync).length - before;
      const before = events.filter((e) => e.type === 'updated' && e.resync).length;
      await until(() => resyncs() >= 6); // two ticks of three pods
      expectOneNotAcceptable(errors, 'watch');
    });
  });

  it('cuts full objects down to metadata when the server ignores the request (no PartialObjectMetadata support)', async () => {
    await server({ partialObjectMetadata: false });
    const pods = informer(api!.kubeConfig, metadataOnly(Pod));
    const events = start(pods);
    await synced(pods);
    api!.patch('pods', 'shop', 'web-1', { metadata: { labels: { v: '2' } } });
    await until(() => events.length === 4);
    for (const e of events) expectMetadataOnly(e.object);
    for (const p of (await firstValueFrom(pods.store$)).list()) expectMetadataOnly(p);
  });

  it('is its own informer in a factory: the mode is part of the cache key', async () => {
    await server();
    const factory = informerFactory(api!.kubeConfig);
    const full = factory.informer(Pod);
    const meta = factory.informer(metadataOnly(Pod));
    expect(meta).not.toBe(full as unknown);
    expect(factory.informer(metadataOnly(Pod))).toBe(meta);
    expect(factory.informer(Pod)).toBe(full);
    expect(factory.informers()).toHaveLength(2);
    const both = await Promise.all([
      firstValueFrom(full.events$.pipe(take(3), toArray())),
      firstValueFrom(meta.events$.pipe(take(3), toArray())),
    ]);
    expect(JSON.stringify(both[0])).toContain('"containers"');
    for (const e of both[1]) expectMetadataOnly(e.object);
  });
});

/** A KubeConfig that is never used (the typing test builds an informer and never subscribes). */
function startApiServerKubeConfigPlaceholder() {
  return {
    list: () => {
      throw new Error('unused');
    },
    watch: () => {
      throw new Error('unused');
    },
  };
}
