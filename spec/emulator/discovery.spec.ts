import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { call, fixture, fixtureText } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const json = (v: unknown): string => JSON.stringify(v);

const MY_APPLES_SCHEMA = fixture('07a').response.body.spec.versions[0].schema.openAPIV3Schema;

describe('discovery', () => {
  it('GET /api is APIVersions like 01a (with our address)', async () => {
    api = await startApiServer();
    const r = await call(api, 'GET', '/api');
    const expected = fixture('01a').response.body;
    expected.serverAddressByClientCIDRs[0].serverAddress = `127.0.0.1:${api.port}`;
    expect(r.raw).toBe(`${json(expected)}\n`);
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.raw)));
  });

  it('pretty-prints for curl with no trailing newline, like 01e', async () => {
    api = await startApiServer();
    const r = await call(api, 'GET', '/api', undefined, { 'User-Agent': 'curl/8.5.0' });
    const transcript = fixtureText('01e', 'http');
    const body = transcript.slice(transcript.indexOf('\n{') + 1);
    expect(r.raw).toBe(body.replace('127.0.0.1:6443', `127.0.0.1:${api.port}`));
  });

  it('GET /api/v1 lists the core resources with the entries of 01b, short names, categories and /status', async () => {
    api = await startApiServer();
    const r = await call(api, 'GET', '/api/v1');
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('APIResourceList');
    expect(r.body.groupVersion).toBe('v1');
    expect(Object.keys(r.body)).toEqual(['kind', 'groupVersion', 'resources']);
    const byName = new Map<string, any>(r.body.resources.map((e: any) => [e.name, e]));
    for (const e of fixture('01b').response.body.resources) expect(json(byName.get(e.name))).toBe(json(e));
    expect(r.body.resources.map((e: any) => e.name)).toEqual([
      'configmaps',
      'events',
      'namespaces',
      'namespaces/status',
      'nodes',
      'nodes/status',
      'pods',
      'pods/status',
      'secrets',
      'services',
      'services/status',
    ]);
    const shortNames = Object.fromEntries(r.body.resources.filter((e: any) => e.shortNames).map((e: any) => [e.name, e.shortNames]));
    expect(shortNames).toEqual({ configmaps: ['cm'], events: ['ev'], namespaces: ['ns'], nodes: ['no'], pods: ['po'], services: ['svc'] });
    expect(byName.get('services').categories).toEqual(['all']);
    // Go's rule: Content-Length when the body fits the 2 KiB buffer, chunked otherwise
    if (Buffer.byteLength(r.raw) > 2048) expect(r.headers['transfer-encoding']).toBe('chunked');
    else expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.raw)));
  });

  it('GET /apis and /apis/<group>/<version> match 01c / 01d', async () => {
    api = await startApiServer();
    const groups = await call(api, 'GET', '/apis');
    expect(groups.body.kind).toBe('APIGroupList');
    expect(groups.body.apiVersion).toBe('v1');
    expect(groups.body.groups.map((g: any) => g.name)).toEqual(['apps', 'apiextensions.k8s.io', 'coordination.k8s.io']);
    const recordedApps = fixture('01c').response.body.groups.find((g: any) => g.name === 'apps');
    expect(json(groups.body.groups[0])).toBe(json(recordedApps));

    const apps = await call(api, 'GET', '/apis/apps/v1');
    expect(Object.keys(apps.body)).toEqual(['kind', 'apiVersion', 'groupVersion', 'resources']);
    const recordedDeploy = fixture('01d').response.body.resources[0];
    expect(json(apps.body.resources[0])).toBe(json(recordedDeploy));
    expect(apps.body.resources.map((e: any) => [e.name, e.shortNames])).toEqual([
      ['deployments', ['deploy']],
      ['deployments/status', undefined],
      ['replicasets', ['rs']],
      ['replicasets/status', undefined],
    ]);
    const leases = await call(api, 'GET', '/apis/coordination.k8s.io/v1');
    expect(leases.body.resources.map((e: any) => e.name)).toEqual(['leases']);
    const group = await call(api, 'GET', '/apis/apps');
    expect(group.body).toEqual({ kind: 'APIGroup', apiVersion: 'v1', ...recordedApps });
    expect((await call(api, 'GET', '/apis/nope/v1')).status).toBe(404);
    expect((await call(api, 'GET', '/version')).body.gitVersion).toMatch(/^v1\.20\.2/);
  });

  it('adds a custom resource to discovery when registered at run time (07b)', async () => {
    api = await startApiServer();
    expect((await call(api, 'GET', '/apis/stable.example.com/v1')).status).toBe(404);
    api.registerCustomResource({
      group: 'stable.example.com',
      version: 'v1',
      plural: 'myapples',
      singular: 'myapple',
      kind: 'MyApple',
      shortNames: ['ma'],
      namespaced: true,
      schema: MY_APPLES_SCHEMA,
    });
    const f = fixture('07b');
    const r = await call(api, 'GET', '/apis/stable.example.com/v1');
    expect(r.raw).toBe(`${json(f.response.body)}\n`);
    expect(r.headers['content-length']).toBe(String(f.response.bodyBytes));
    const groups = await call(api, 'GET', '/apis');
    expect(groups.body.groups.map((g: any) => g.name)).toEqual([
      'apps',
      'apiextensions.k8s.io',
      'coordination.k8s.io',
      'stable.example.com',
    ]);
    // its CRD object is served like 07a (defaults and status filled in)
    const crd = await call(api, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/myapples.stable.example.com');
    const recorded = fixture('07a').response.body;
    expect(crd.body.spec).toEqual(recorded.spec);
    expect(crd.body.status.acceptedNames).toEqual(recorded.status.acceptedNames);
    expect(crd.body.status.conditions.map((c: any) => [c.type, c.status, c.reason])).toEqual(
      recorded.status.conditions.map((c: any) => [c.type, c.status, c.reason]),
    );
    expect(crd.body.status.storedVersions).toEqual(['v1']);
  });

  it('answers an unknown resource path with 404 exactly as 06k', async () => {
    api = await startApiServer();
    const f = fixture('06k');
    const r = await call(api, 'GET', f.request.path);
    expect(r.status).toBe(404);
    expect(r.raw).toBe(`${json(f.response.body)}\n`);
    expect((await call(api, 'GET', '/api/v2/pods')).status).toBe(404);
    expect((await call(api, 'GET', '/api/v1/pods/not-namespaced')).status).toBe(404);
  });
});
