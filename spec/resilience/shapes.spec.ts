/**
 * Every shape a real server sends is accepted as Kubernetes' own decoders accept
 * it: `"items": null` (kube-apiserver v1.20's empty PartialObjectMetadataList) and
 * a missing `items` are an empty list, a list's `metadata: {}` has no
 * resourceVersion, `null` is an empty map (labels, annotations) or list
 * (ownerReferences). One test per path: full list, metadata-only list (the
 * emulator answers as v1.20), streaming list falling back to a plain list, and
 * the dynamic factory's CRD informer on a cluster without CRDs.
 */
import { firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, informer, metadataOnly, type InformerError, type KubeObject } from '../../src/index.ts';
import { dynamicInformerFactory } from '../../src/discovery/index.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { hostileServer, type Behaviour, type HostileServer } from './hostile/server.ts';
import { waitFor } from './harness/live.ts';

let api: ApiServer | undefined;
let hostile: HostileServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  await hostile?.close();
  api = undefined;
  hostile = undefined;
});

/** Runs an informer; returns what it emitted. */
function follow<T extends KubeObject>(cache: ReturnType<typeof informer<T>>) {
  const errors: InformerError[] = [];
  const state = { synced: false, keys: [] as string[] };
  subscriptions.push(
    cache.errors$.subscribe((e) => errors.push(e)),
    cache.synced$.subscribe((s) => (state.synced = s)),
    cache.store$.subscribe((s) => (state.keys = s.keys().sort())),
  );
  return { errors, state };
}

const raw =
  (body: string): Behaviour =>
  (_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(`${body}\n`);
  };

describe('list shapes a real server sends', () => {
  it('the emulator answers an empty PartialObjectMetadataList with "items": null, as v1.20 does (full lists say [])', async () => {
    api = await startApiServer({ namespaces: ['empty'] });
    const get = (accept: string) =>
      fetch(`${api!.url}/api/v1/namespaces/empty/configmaps`, { headers: { Accept: accept } }).then(
        (r) => r.json() as Promise<Record<string, unknown>>,
      );
    expect((await get('application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json')).items).toBeNull();
    expect((await get('application/json')).items).toEqual([]);
  });

  it('a metadata-only informer syncs on an empty namespace (items: null)', async () => {
    api = await startApiServer({ namespaces: ['empty'] });
    const run = follow(informer(api.kubeConfig, metadataOnly(ConfigMap), { namespace: 'empty' }));
    await waitFor('the metadata-only informer to sync', () => run.state.synced);
    expect(run.errors).toEqual([]);
    expect(run.state.keys).toEqual([]);
  });

  it('a metadata-only streaming list refused by a v1.20 server falls back to a plain list and syncs on items: null', async () => {
    api = await startApiServer({ namespaces: ['empty'], sendInitialEvents: false });
    const run = follow(informer(api.kubeConfig, metadataOnly(ConfigMap), { namespace: 'empty', watchList: true }));
    await waitFor('the fallback list to sync', () => run.state.synced);
    expect(run.errors.filter((e) => e.reason === 'MalformedLine')).toEqual([]);
    expect(api.requests.some((r) => !r.watch && r.path.endsWith('/configmaps'))).toBe(true);
  });

  it("the dynamic factory's CRD informer syncs on a cluster without CRDs", async () => {
    api = await startApiServer();
    const dynamic = dynamicInformerFactory(api.kubeConfig, { debounceMs: 20 });
    const errors: InformerError[] = [];
    subscriptions.push(
      dynamic.errors$.subscribe((e) => errors.push(e)),
      dynamic.watch('all').subscribe(),
    );
    const crds = () => dynamic.factory.informers().find((i) => i.resource.plural === 'customresourcedefinitions');
    await waitFor('the CRD informer', () => crds() !== undefined);
    let synced = false;
    subscriptions.push(crds()!.synced$.subscribe((s) => (synced = s)));
    await waitFor('the CRD informer to sync', () => synced);
    expect(errors).toEqual([]);
  });

  const fullListCases: { name: string; body: string }[] = [
    { name: '"items": null', body: '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":null}' },
    { name: 'no items at all', body: '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"}}' },
    { name: 'metadata: {} without a resourceVersion', body: '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[]}' },
    { name: 'metadata: null and items: null', body: '{"kind":"ConfigMapList","apiVersion":"v1","metadata":null,"items":null}' },
  ];
  for (const [{ name, body }, lazyDecode] of fullListCases.flatMap(
    (c) =>
      [
        [c, false],
        [c, true],
      ] as const,
  )) {
    it(`a full list with ${name} is an empty list: the informer syncs${lazyDecode ? ' (lazy decoding)' : ''}`, async () => {
      hostile = await hostileServer({ list: raw(body) });
      const run = follow(informer(hostile.kc, ConfigMap, { namespace: 'default', http: { lazyDecode } }));
      await waitFor('the informer to sync', () => run.state.synced);
      expect(run.errors).toEqual([]);
      expect(run.state.keys).toEqual([]);
    });
  }

  it('objects with null labels, annotations and ownerReferences are cached as sent', async () => {
    const item = {
      metadata: { name: 'a', namespace: 'default', resourceVersion: '5', labels: null, annotations: null, ownerReferences: null },
      data: {},
    };
    hostile = await hostileServer({
      list: raw(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '5' }, items: [item] })),
    });
    const run = follow(informer(hostile.kc, ConfigMap, { namespace: 'default' }));
    await waitFor('the informer to sync', () => run.state.synced);
    expect(run.errors).toEqual([]);
    expect(run.state.keys).toEqual(['default/a']);
  });

  // A real server's Status has `metadata: {}`: read as a list it would be an empty page, and empty the cache at a relist.
  const REAL_STATUS = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'etcdserver: request timed out',
    reason: 'InternalError',
    code: 500,
  };
  for (const lazyDecode of [false, true]) {
    it(`a failure Status answered 200 is its error (500, ServerError), never an empty list${lazyDecode ? ' (lazy decoding)' : ''}`, async () => {
      hostile = await hostileServer({ list: raw(JSON.stringify(REAL_STATUS)) });
      const lw = httpListWatch(hostile.kc, { resource: ConfigMap, namespace: 'default' }, { lazyDecode });
      const error = await firstValueFrom(lw.list({})).then(
        () => undefined,
        (e: unknown) => e as InformerError,
      );
      expect([error?.reason, error?.status, error?.message]).toEqual(['ServerError', 500, 'etcdserver: request timed out']);
    });
  }

  // isFailureStatus' other shape: no kind, `status: "Failure"` (a proxy's or an aggregated API's). Read as a list, its
  // `metadata: {}` made an empty page, and a relist answered with it deleted every cached object.
  const KINDLESS_FAILURE = '{"metadata":{},"status":"Failure","message":"upstream broken","reason":"ServiceUnavailable","code":503}';
  for (const lazyDecode of [false, true]) {
    it(`a failure Status without kind answered 200 is its error (503), never an empty list${lazyDecode ? ' (lazy decoding)' : ''}`, async () => {
      hostile = await hostileServer({ list: raw(KINDLESS_FAILURE) });
      const lw = httpListWatch(hostile.kc, { resource: ConfigMap, namespace: 'default' }, { lazyDecode });
      const error = await firstValueFrom(lw.list({})).then(
        () => undefined,
        (e: unknown) => e as InformerError,
      );
      expect([error?.reason, error?.status, error?.message]).toEqual(['ServerError', 503, 'upstream broken']);
    });
  }

  it('what is not a list is still refused (a 200 {} or Status must not empty the cache)', async () => {
    for (const body of [
      '{}',
      // no kind: not a list, as apimachinery's "Object 'Kind' is missing" (every list a real server sends names its kind)
      '{"metadata":{}}',
      '{"metadata":{"resourceVersion":"7"},"items":[]}',
      '{"kind":"","metadata":{},"items":null}',
      '{"kind":"Status","status":"Success"}',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}',
      '{"kind":"ConfigMapList","items":{}}',
      'null',
      '[]',
    ]) {
      hostile = await hostileServer({ list: raw(body) });
      const lw = httpListWatch(hostile.kc, { resource: ConfigMap, namespace: 'default' });
      const error = await firstValueFrom(lw.list({})).then(
        () => undefined,
        (e: unknown) => e as InformerError,
      );
      expect(error?.reason, body).toBe('MalformedLine');
      await hostile.close();
      hostile = undefined;
    }
  });
});
