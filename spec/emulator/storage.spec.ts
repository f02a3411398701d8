import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, startApiServer, type ApiServer } from 'rx-informer-emulator';
import { call, fixture, normalize } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const CM = { group: '', version: 'v1', resource: 'configmaps' } as const;
const withoutManagedFields = (o: any): any => {
  const { managedFields: _m, ...metadata } = o.metadata;
  return { ...o, metadata };
};

/** A server whose revisions line up with case 2 of the fixtures: namespace `fixtures` at 688, cm-1 at 689. */
async function fixturesServer(extra: Parameters<typeof startApiServer>[0] = {}): Promise<ApiServer> {
  return startApiServer({ startResourceVersion: 687, namespaces: ['fixtures'], ...extra });
}

describe('storage: revisions and metadata', () => {
  it('bumps one global revision on every write, whatever the resource', async () => {
    api = await startApiServer();
    expect(api.revision).toBe(1);
    const cm = api.create('configmaps', { metadata: { name: 'a', namespace: 'ns1' }, data: { k: 'v' } });
    // the namespace was auto-created first (revision 2)
    expect(api.get('namespaces', undefined, 'ns1')?.metadata?.resourceVersion).toBe('2');
    expect(cm.metadata?.resourceVersion).toBe('3');
    const pod = api.create('pods', { metadata: { name: 'p', namespace: 'ns1' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    expect(pod.metadata?.resourceVersion).toBe('4');
    const updated = api.update(CM, { ...cm, data: { k: 'v2' } });
    expect(updated.metadata?.resourceVersion).toBe('5');
    const deleted = api.delete(CM, 'ns1', 'a');
    expect(deleted.metadata?.resourceVersion).toBe('6');
    expect(api.resourceVersion).toBe('6');
    expect(api.get(CM, 'ns1', 'a')).toBeUndefined();
  });

  it('fills uid, creationTimestamp, resourceVersion; generation only where kube-apiserver keeps one', async () => {
    api = await startApiServer();
    const cm = api.create(CM, { metadata: { name: 'a', namespace: 'default' } });
    expect(cm.metadata?.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(cm.metadata?.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(cm.metadata?.generation).toBeUndefined(); // like 02b
    const d = api.create('deployments', {
      metadata: { name: 'web', namespace: 'default', labels: { a: '1' } },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } } } },
    });
    expect(d.metadata?.generation).toBe(1);
    expect((d as any).spec.replicas).toBe(1);
    const relabeled = api.patch('deployments', 'default', 'web', { metadata: { labels: { a: '2' } } });
    expect(relabeled.metadata?.generation).toBe(1);
    const scaled = api.patch('deployments', 'default', 'web', { spec: { replicas: 3 } });
    expect(scaled.metadata?.generation).toBe(2);
    const status = api.updateStatus('deployments', { ...scaled, status: { replicas: 3 } });
    expect(status.metadata?.generation).toBe(2);
  });

  it('does not write a no-op update (same revision, no event)', async () => {
    api = await startApiServer();
    const cm = api.create(CM, { metadata: { name: 'a', namespace: 'default' }, data: { k: 'v' } });
    const again = api.update(CM, { ...cm });
    expect(again.metadata?.resourceVersion).toBe(cm.metadata?.resourceVersion);
    expect(api.revision).toBe(Number(cm.metadata?.resourceVersion));
  });

  it('throws ApiError with the Status for programmatic mistakes', async () => {
    api = await startApiServer();
    api.create(CM, { metadata: { name: 'a', namespace: 'default' } });
    const dup = (() => {
      try {
        api!.create(CM, { metadata: { name: 'a', namespace: 'default' } });
      } catch (e) {
        return e;
      }
    })() as ApiError;
    expect(dup).toBeInstanceOf(ApiError);
    expect(dup.code).toBe(409);
    expect(dup.status.reason).toBe('AlreadyExists');
    expect(() => api!.update(CM, { metadata: { name: 'a', namespace: 'default', resourceVersion: '1' } })).toThrow(
      /the object has been modified/,
    );
    expect(() => api!.delete(CM, 'default', 'nope')).toThrow(/configmaps "nope" not found/);
  });
});

describe('storage over HTTP, compared with the fixtures', () => {
  it('POST → 201 shaped like 02b; duplicate → 409 exactly as 06e', async () => {
    api = await fixturesServer();
    const f = fixture('02b');
    const r = await call(api, 'POST', f.request.path, f.request.body);
    expect(r.status).toBe(201);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['cache-control']).toBe('no-cache, private');
    expect(r.headers['x-kubernetes-pf-flowschema-uid']).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.raw.endsWith('}\n')).toBe(true);
    // Byte for byte, apart from uid/timestamps and the managedFields the emulator does not compute.
    expect(JSON.stringify(normalize(r.body))).toBe(JSON.stringify(normalize(withoutManagedFields(f.response.body))));
    const dup = await call(api, 'POST', f.request.path, f.request.body);
    const f06e = fixture('06e');
    expect(dup.status).toBe(409);
    expect(dup.raw).toBe(`${JSON.stringify(f06e.response.body)}\n`);
    expect(dup.headers['content-length']).toBe(String(f06e.response.bodyBytes));
  });

  it('GET of a missing object and DELETE of a missing object → 404 exactly as 06a / 06l', async () => {
    api = await fixturesServer();
    const a = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps/does-not-exist');
    expect(a.status).toBe(404);
    expect(a.raw).toBe(`${JSON.stringify(fixture('06a').response.body)}\n`);
    const l = await call(api, 'DELETE', '/api/v1/namespaces/fixtures/configmaps/does-not-exist');
    expect(l.status).toBe(404);
    expect(l.raw).toBe(`${JSON.stringify(fixture('06l').response.body)}\n`);
  });

  it('PUT with a stale resourceVersion → 409 Conflict exactly as 06b; a current one → 200', async () => {
    api = await fixturesServer();
    const cm2 = api.create(CM, { metadata: { name: 'cm-2', namespace: 'fixtures' }, data: { key: 'value-2' } });
    api.patch(CM, 'fixtures', 'cm-2', { data: { bumped: 'yes' } });
    const stale = { ...cm2, data: { key: 'x' } };
    const r = await call(api, 'PUT', '/api/v1/namespaces/fixtures/configmaps/cm-2', stale);
    expect(r.status).toBe(409);
    expect(r.raw).toBe(`${JSON.stringify(fixture('06b').response.body)}\n`);
    const current = api.get(CM, 'fixtures', 'cm-2')!;
    const ok = await call(api, 'PUT', '/api/v1/namespaces/fixtures/configmaps/cm-2', { ...current, data: { key: 'y' } });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ key: 'y' });
    expect(Number(ok.body.metadata.resourceVersion)).toBe(Number(current.metadata!.resourceVersion) + 1);
    expect(ok.body.metadata.uid).toBe(cm2.metadata!.uid);
    // PUT without a resourceVersion is unconditional
    const { resourceVersion: _rv, ...meta } = ok.body.metadata;
    const blind = await call(api, 'PUT', '/api/v1/namespaces/fixtures/configmaps/cm-2', { ...ok.body, metadata: meta, data: { key: 'z' } });
    expect(blind.status).toBe(200);
    const missing = await call(api, 'PUT', '/api/v1/namespaces/fixtures/configmaps/nope', { metadata: { name: 'nope' } });
    expect(missing.status).toBe(404);
  });

  it('rejects an invalid name with 422 exactly as 06c', async () => {
    api = await fixturesServer();
    const f = fixture('06c');
    const r = await call(api, 'POST', f.request.path, f.request.body);
    expect(r.status).toBe(422);
    expect(r.raw).toBe(`${JSON.stringify(f.response.body)}\n`);
  });

  it('auto-creates namespaces by default (shaped like 02a); with autoCreateNamespaces:false → 404 exactly as 06j', async () => {
    api = await startApiServer();
    const r = await call(api, 'POST', '/api/v1/namespaces/fixtures/configmaps', { metadata: { name: 'x' } });
    expect(r.status).toBe(201);
    const ns = await call(api, 'GET', '/api/v1/namespaces/fixtures');
    const f02a = fixture('02a').response.body;
    expect(JSON.stringify(normalize(ns.body)).replace(/"resourceVersion":"\d+"/, '')).toBe(
      JSON.stringify(normalize(withoutManagedFields(f02a))).replace(/"resourceVersion":"\d+"/, ''),
    );
    await api.close();

    api = await startApiServer({ autoCreateNamespaces: false });
    const f = fixture('06j');
    const denied = await call(api, 'POST', f.request.path, f.request.body);
    expect(denied.status).toBe(404);
    expect(denied.raw).toBe(`${JSON.stringify(f.response.body)}\n`);
  });

  it('DELETE → 200 with a Status Success body like 06m (not the object); the store forgets it', async () => {
    api = await fixturesServer();
    const cm = api.create(CM, { metadata: { name: 'cm-tmp', namespace: 'fixtures' } });
    const r = await call(api, 'DELETE', '/api/v1/namespaces/fixtures/configmaps/cm-tmp');
    expect(r.status).toBe(200);
    const expected = fixture('06m').response.body;
    expected.details.uid = cm.metadata!.uid;
    expect(r.raw).toBe(`${JSON.stringify(expected)}\n`);
    expect(api.get(CM, 'fixtures', 'cm-tmp')).toBeUndefined();
  });

  it('applies pod defaults exactly as 08a, merge-patches like 08d', async () => {
    api = await startApiServer({ startResourceVersion: 716, namespaces: ['fixtures'] });
    const f = fixture('08a');
    const r = await call(api, 'POST', f.request.path, f.request.body);
    expect(r.status).toBe(201);
    expect(JSON.stringify(normalize(r.body))).toBe(JSON.stringify(normalize(withoutManagedFields(f.response.body))));
    // fixture: 1568 bytes with 603 of managedFields (+ the key and comma) → 948 without; Content-Length, not chunked
    expect(Buffer.byteLength(r.raw)).toBe(948);
    expect(r.headers['content-length']).toBe('948');

    const p = fixture('08d');
    const patched = await call(api, 'PATCH', p.request.path, p.request.body, { 'Content-Type': 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    expect(JSON.stringify(normalize(patched.body))).toBe(JSON.stringify(normalize(withoutManagedFields(p.response.body))));
  });

  it('accepts strategic-merge-patch (as merge) and JSON patch; rejects apply-patch with 415', async () => {
    api = await startApiServer();
    api.create(CM, { metadata: { name: 'a', namespace: 'default', labels: { x: '1', y: '2' } }, data: { k: 'v' } });
    const smp = await call(
      api,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/a',
      { metadata: { labels: { y: null, z: '3' } } },
      {
        'Content-Type': 'application/strategic-merge-patch+json',
      },
    );
    expect(smp.status).toBe(200);
    expect(smp.body.metadata.labels).toEqual({ x: '1', z: '3' });
    const jp = await call(
      api,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/a',
      [
        { op: 'replace', path: '/data/k', value: 'w' },
        { op: 'add', path: '/data/n', value: 'm' },
        { op: 'remove', path: '/metadata/labels/x' },
      ],
      { 'Content-Type': 'application/json-patch+json' },
    );
    expect(jp.status).toBe(200);
    expect(jp.body.data).toEqual({ k: 'w', n: 'm' });
    expect(jp.body.metadata.labels).toEqual({ z: '3' });
    const stale = await call(
      api,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/a',
      { metadata: { resourceVersion: '2' }, data: { k: 'q' } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    expect(stale.status).toBe(409);
    const apply = await call(api, 'PATCH', '/api/v1/namespaces/default/configmaps/a', 'x: 1', {
      'Content-Type': 'application/apply-patch+yaml',
    });
    expect(apply.status).toBe(415);
    const missing = await call(
      api,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/zz',
      {},
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(missing.status).toBe(404);
  });

  it('keeps status on a main-resource PUT and spec on a /status PUT (status subresource)', async () => {
    api = await startApiServer();
    const pod = api.create('pods', {
      metadata: { name: 'p', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const put = await call(api, 'PUT', '/api/v1/namespaces/default/pods/p', {
      ...pod,
      metadata: { ...pod.metadata, labels: { a: 'b' } },
      status: { phase: 'Running' },
    });
    expect(put.status).toBe(200);
    expect(put.body.status.phase).toBe('Pending');
    expect(put.body.metadata.labels).toEqual({ a: 'b' });
    const st = await call(api, 'PUT', '/api/v1/namespaces/default/pods/p/status', {
      ...put.body,
      metadata: { ...put.body.metadata, labels: { ignored: 'yes' } },
      status: { phase: 'Running', qosClass: 'BestEffort' },
    });
    expect(st.status).toBe(200);
    expect(st.body.status.phase).toBe('Running');
    expect(st.body.metadata.labels).toEqual({ a: 'b' });
    const unknownSub = await call(api, 'GET', '/api/v1/namespaces/default/pods/p/log');
    expect(unknownSub.status).toBe(404);
    // the programmatic update writes status directly
    const direct = api.update('pods', { ...api.get('pods', 'default', 'p')!, status: { phase: 'Succeeded' } });
    expect((direct as any).status.phase).toBe('Succeeded');
  });

  it('honours finalizers: DELETE marks the object, removing the last finalizer deletes it', async () => {
    api = await startApiServer();
    api.create(CM, { metadata: { name: 'f', namespace: 'default', finalizers: ['example.com/hold'] } });
    const r = await call(api, 'DELETE', '/api/v1/namespaces/default/configmaps/f');
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('ConfigMap');
    expect(r.body.metadata.deletionTimestamp).toMatch(/Z$/);
    expect(api.get(CM, 'default', 'f')).toBeDefined();
    const rvBefore = api.revision;
    api.patch(CM, 'default', 'f', { metadata: { finalizers: null } });
    expect(api.get(CM, 'default', 'f')).toBeUndefined();
    expect(api.revision).toBe(rvBefore + 1);
  });

  it('supports DELETE preconditions, deletecollection, generateName and 405 for unsupported methods', async () => {
    api = await startApiServer();
    const a = api.create(CM, { metadata: { name: 'a', namespace: 'default', labels: { t: 'x' } } });
    api.create(CM, { metadata: { name: 'b', namespace: 'default', labels: { t: 'x' } } });
    api.create(CM, { metadata: { name: 'c', namespace: 'default' } });
    const pre = await call(api, 'DELETE', '/api/v1/namespaces/default/configmaps/a', { preconditions: { uid: 'nope' } });
    expect(pre.status).toBe(409);
    expect(pre.body.message).toContain('Precondition failed: UID in precondition: nope');
    const coll = await call(api, 'DELETE', '/api/v1/namespaces/default/configmaps?labelSelector=t%3Dx');
    expect(coll.status).toBe(200);
    expect(coll.body.kind).toBe('ConfigMapList');
    expect(coll.body.items.map((i: any) => i.metadata.name)).toEqual(['a', 'b']);
    expect(coll.body.items[0].metadata.uid).toBe(a.metadata!.uid);
    expect(api.list(CM, 'default').map((o) => o.metadata?.name)).toEqual(['c']);
    const gen = await call(api, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'gen-' } });
    expect(gen.status).toBe(201);
    expect(gen.body.metadata.name).toMatch(/^gen-[a-z0-9]{5}$/);
    const bad = await call(api, 'POST', '/api/v1/namespaces/default/configmaps/a', {});
    expect(bad.status).toBe(405);
    expect(bad.body.reason).toBe('MethodNotAllowed');
    // dryRun is refused rather than silently persisted
    const dry = await call(api, 'POST', '/api/v1/namespaces/default/configmaps?dryRun=All', { metadata: { name: 'dry' } });
    expect(dry.status).toBe(400);
    expect(api.get(CM, 'default', 'dry')).toBeUndefined();
  });

  it('deleting a namespace deletes what it contains', async () => {
    api = await startApiServer();
    api.create(CM, { metadata: { name: 'a', namespace: 'gone' } });
    api.create('pods', { metadata: { name: 'p', namespace: 'gone' }, spec: { containers: [] } });
    api.create(CM, { metadata: { name: 'a', namespace: 'kept' } });
    api.delete('namespaces', undefined, 'gone');
    expect(api.list(CM).map((o) => o.metadata?.namespace)).toEqual(['kept']);
    expect(api.list('pods')).toEqual([]);
  });
});
