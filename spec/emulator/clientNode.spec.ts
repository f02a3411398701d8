import { ApiException, AppsV1Api, CoreV1Api, CustomObjectsApi, makeInformer, type V1Pod, Watch } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { call, fixture, sleep } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const POD = { metadata: { name: 'pod-1', labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } };

describe('@kubernetes/client-node against the emulator', () => {
  it('CoreV1Api: create, list (with selectors and paging), patch (JSON patch), replace conflict, read 404, delete', async () => {
    api = await startApiServer({ token: 'admintoken' });
    const core = api.kubeConfig.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedPod({ namespace: 'default', body: POD });
    expect(created.metadata?.uid).toBeDefined();
    expect(created.spec?.containers[0]?.imagePullPolicy).toBe('Always');
    await core.createNamespacedPod({ namespace: 'default', body: { ...POD, metadata: { name: 'pod-2', labels: { app: 'db' } } } });

    const list = await core.listNamespacedPod({ namespace: 'default' });
    expect(list.kind).toBe('PodList');
    expect(list.metadata?.resourceVersion).toBe(api.resourceVersion);
    expect(list.items.map((p: V1Pod) => p.metadata?.name)).toEqual(['pod-1', 'pod-2']);
    const selected = await core.listNamespacedPod({
      namespace: 'default',
      labelSelector: 'app in (web)',
      fieldSelector: 'status.phase=Pending',
    });
    expect(selected.items.map((p) => p.metadata?.name)).toEqual(['pod-1']);
    const page = await core.listNamespacedPod({ namespace: 'default', limit: 1 });
    expect(page.metadata?.remainingItemCount).toBe(1);
    const page2 = await core.listNamespacedPod({ namespace: 'default', limit: 1, _continue: page.metadata!._continue! });
    expect(page2.items.map((p) => p.metadata?.name)).toEqual(['pod-2']);

    // client-node's default patch content type is application/json-patch+json
    const patched = await core.patchNamespacedPod({
      namespace: 'default',
      name: 'pod-1',
      body: [{ op: 'add', path: '/metadata/labels/tier', value: 'frontend' }],
    });
    expect(patched.metadata?.labels).toEqual({ app: 'web', tier: 'frontend' });
    expect(api.requests.at(-1)).toMatchObject({ method: 'PATCH', status: 200, name: 'pod-1' });

    const stale = { ...created, metadata: { ...created.metadata, labels: { app: 'stale' } } };
    const conflict = await core.replaceNamespacedPod({ namespace: 'default', name: 'pod-1', body: stale }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ApiException);
    expect((conflict as ApiException<string>).code).toBe(409);

    const missing = await core.readNamespacedConfigMap({ namespace: 'default', name: 'nope' }).catch((e: unknown) => e);
    expect((missing as ApiException<string>).code).toBe(404);
    expect(JSON.parse((missing as ApiException<string>).body)).toEqual({
      ...fixture('06a').response.body,
      message: 'configmaps "nope" not found',
      details: { name: 'nope', kind: 'configmaps' },
    });

    const cm = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' }, data: { a: 'b' } } });
    const status = await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'c' });
    expect(status.status).toBe('Success');
    expect(status.details?.uid).toBe(cm.metadata?.uid);
    const deletedPod = await core.deleteNamespacedPod({ namespace: 'default', name: 'pod-2' });
    expect(deletedPod.metadata?.name).toBe('pod-2');

    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.status?.phase)).toEqual(['Active']);
  });

  it('AppsV1Api and CustomObjectsApi', async () => {
    api = await startApiServer();
    api.create('deployments', { metadata: { name: 'd', namespace: 'x' }, spec: { selector: { matchLabels: { a: 'b' } }, template: {} } });
    const apps = api.kubeConfig.makeApiClient(AppsV1Api);
    const deployments = await apps.listDeploymentForAllNamespaces();
    expect(deployments.items.map((d) => [d.metadata?.namespace, d.metadata?.name, d.metadata?.generation])).toEqual([['x', 'd', 1]]);

    api.registerCustomResource({ group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple', shortNames: ['ma'] });
    const custom = api.kubeConfig.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: 'stable.example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'myapples',
      body: { apiVersion: 'stable.example.com/v1', kind: 'MyApple', metadata: { name: 'a1' }, spec: { color: 'red' } },
    });
    const apples = await custom.listNamespacedCustomObject({
      group: 'stable.example.com',
      version: 'v1',
      namespace: 'default',
      plural: 'myapples',
    });
    expect(apples.kind).toBe('MyAppleList');
    expect(apples.items[0].kind).toBe('MyApple');
    expect(apples.metadata.continue).toBe('');
  });

  it('Watch receives events and bookmarks, and sees the server end the stream', async () => {
    api = await startApiServer({ bookmarkIntervalMs: 30 });
    const first = api.create('configmaps', { metadata: { name: 'w', namespace: 'default' } });
    const seen: [string, string | undefined][] = [];
    let doneErr: unknown = 'not called';
    const finished = new Promise<void>((resolve) => {
      void new Watch(api!.kubeConfig).watch(
        '/api/v1/namespaces/default/configmaps',
        { resourceVersion: first.metadata!.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 0.3 },
        (type, obj) => seen.push([type, obj?.metadata?.resourceVersion]),
        (err) => {
          doneErr = err;
          resolve();
        },
      );
    });
    await api.waitForRequest((r) => r.watch);
    const m = api.patch('configmaps', 'default', 'w', { data: { x: 'y' } });
    api.delete('configmaps', 'default', 'w');
    await finished;
    expect(doneErr).toBeNull();
    const events = seen.filter(([t]) => t !== 'BOOKMARK');
    expect(events).toEqual([
      ['MODIFIED', m.metadata!.resourceVersion],
      ['DELETED', String(Number(m.metadata!.resourceVersion) + 1)],
    ]);
    expect(seen.some(([t]) => t === 'BOOKMARK')).toBe(true);
  });

  it("client-node's informer lists and watches the emulator", async () => {
    api = await startApiServer();
    api.create('pods', { ...POD, metadata: { ...POD.metadata, namespace: 'default' } });
    const core = api.kubeConfig.makeApiClient(CoreV1Api);
    const informer = makeInformer(api.kubeConfig, '/api/v1/namespaces/default/pods', () =>
      core.listNamespacedPod({ namespace: 'default' }),
    );
    const added: string[] = [];
    informer.on('add', (p) => added.push(p.metadata!.name!));
    await informer.start();
    await api.waitForRequest((r) => r.watch && r.resource === 'pods', 20_000);
    api.create('pods', { ...POD, metadata: { name: 'pod-2', namespace: 'default' } });
    for (let i = 0; i < 1500 && added.length < 2; i++) await sleep(10); // a deadline for a hung test only (≥ 15 s)
    await informer.stop();
    expect(added).toEqual(['pod-1', 'pod-2']);
    expect(
      informer
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['pod-1', 'pod-2']);
  });

  it('works over TLS with a token: the kubeConfig carries the CA and keeps verification on', async () => {
    api = await startApiServer({ tls: true, token: 's3cret' });
    expect(api.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const cluster = api.kubeConfig.getCurrentCluster()!;
    expect(cluster.skipTLSVerify).toBe(false);
    expect(Buffer.from(cluster.caData!, 'base64').toString()).toBe(api.caPem);
    const core = api.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'tls' } } });
    const list = await core.listNamespacedConfigMap({ namespace: 'default' });
    expect(list.items.map((c) => c.metadata?.name)).toEqual(['tls']);
    // without the CA the certificate is rejected; with it but no token → 401 exactly as 06d
    await expect(call(api, 'GET', '/api')).rejects.toThrow(/self-signed|certificate/i);
    const unauth = await call(
      api,
      'GET',
      '/api/v1/namespaces/fixtures/configmaps',
      undefined,
      { Authorization: 'Bearer not-a-valid-token' },
      { ca: api.caPem! },
    );
    expect(unauth.status).toBe(401);
    expect(unauth.raw).toBe(`${JSON.stringify(fixture('06d').response.body)}\n`);
    expect(unauth.headers['x-kubernetes-pf-flowschema-uid']).toBeUndefined();
  });
});
