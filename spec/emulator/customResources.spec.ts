import { afterEach, describe, expect, it, vi } from 'vitest';
import { startApiServer, type ApiServer, type CustomResourceDefinitionSpec } from 'rx-informer-emulator';
import { call, fixture, fixtureText, normalize, openWatch } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const MY_APPLES: CustomResourceDefinitionSpec = {
  group: 'stable.example.com',
  version: 'v1',
  plural: 'myapples',
  singular: 'myapple',
  kind: 'MyApple',
  shortNames: ['ma'],
  namespaced: true,
  schema: fixture('07a').response.body.spec.versions[0].schema.openAPIV3Schema,
};
const APPLES = { group: 'stable.example.com', version: 'v1', resource: 'myapples' } as const;
const BASE = '/apis/stable.example.com/v1/namespaces/fixtures/myapples';

const stripManaged = (o: any): any => {
  const c = structuredClone(o);
  const strip = (x: any): void => {
    if (x?.metadata) delete x.metadata.managedFields;
  };
  strip(c);
  strip(c.object);
  c.items?.forEach(strip);
  return normalize(c);
};

/** Case 7: namespace at 709, CRD at 710, apple-1 at 711, apple-2 at 712. */
async function case7(): Promise<ApiServer> {
  const s = await startApiServer({ startResourceVersion: 708, namespaces: ['fixtures'], resources: [MY_APPLES], bookmarkIntervalMs: 40 });
  for (const id of ['07c', '07d']) {
    const f = fixture(id);
    const r = await call(s, 'POST', f.request.path, f.request.body);
    expect(r.status).toBe(201);
    expect(JSON.stringify(stripManaged(r.body))).toBe(JSON.stringify(stripManaged(f.response.body)));
  }
  return s;
}

describe('custom resources', () => {
  it('creates (07c, 07d: sorted keys, generation 1) and lists with kind/apiVersion items and continue "" (07e)', async () => {
    api = await case7();
    const f = fixture('07e');
    const r = await call(api, 'GET', f.request.path);
    expect(JSON.stringify(stripManaged(r.body))).toBe(JSON.stringify(stripManaged(f.response.body)));
    expect(r.raw.startsWith('{"apiVersion":"stable.example.com/v1","items":[{"apiVersion"')).toBe(true);
    const paged = await call(api, 'GET', `${BASE}?limit=1`);
    expect(Object.keys(paged.body.metadata)).toEqual(['continue', 'remainingItemCount', 'resourceVersion']);
  });

  it('replays 07f: PUT bumps generation, /status is 404 (07g) without an event, DELETE → 07h, bookmark shape', async () => {
    api = await case7();
    // No timeout of its own: a loaded machine must not end it before the writes below (it ends once the last bookmark came).
    const w = openWatch(api, `${BASE}?watch=true&resourceVersion=712&allowWatchBookmarks=true`);
    await w.ready;
    const rec = fixture('07f');
    const put = rec.actions[0];
    const r1 = await call(api, 'PUT', put.path, put.requestBody);
    expect(r1.status).toBe(200);
    expect(r1.body.metadata.generation).toBe(2);
    const g = fixture('07g');
    const r2 = await call(api, 'PUT', g.request.path, g.request.body);
    expect(r2.status).toBe(404);
    expect(r2.raw).toBe(`${JSON.stringify(g.response.body)}\n`);
    api.create('configmaps', { metadata: { name: 'filler', namespace: 'fixtures' } }); // revision 714
    const h = fixture('07h');
    const r3 = await call(api, 'DELETE', h.request.path);
    expect(r3.status).toBe(200);
    expect(JSON.stringify(normalize(r3.body))).toBe(JSON.stringify(normalize(h.response.body)));
    expect(api.list(APPLES).map((o) => o.metadata?.name)).toEqual(['apple-1']);
    const recorded = fixtureText('07f', 'ndjson').trimEnd().split('\n');
    // Periodic bookmarks (every 40 ms) carry the revision reached when each is sent: the one after the DELETE is the recorded one.
    await vi.waitFor(() => expect(w.lines.map((l) => l.text)).toContain(recorded[2]), { timeout: 20_000, interval: 5 });
    w.abort();
    const result = await w.done;
    const events = result.lines.filter((l) => l.event.type !== 'BOOKMARK');
    expect(events.map((l) => stripManaged(l.event))).toEqual(recorded.slice(0, 2).map((l) => stripManaged(JSON.parse(l))));
    const bookmarks = result.lines.filter((l) => l.event.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThan(0);
    // Any earlier bookmark (a slow machine may send one between the writes): the same shape, at a revision not yet the last.
    const at = (rv: string) => recorded[2]!.replace(/"resourceVersion":"\d+"/, `"resourceVersion":"${rv}"`);
    const rvs = bookmarks.map((b) => b.event.object.metadata.resourceVersion as string);
    for (const [i, b] of bookmarks.entries()) expect(b.text).toBe(at(rvs[i]!));
    expect(rvs.map(Number)).toEqual(rvs.map(Number).sort((a, b) => a - b));
    expect(bookmarks.at(-1)!.text).toBe(recorded[2]);
  });

  it('enforces the schema: 422 with the causes of 07i, in that order', async () => {
    api = await case7();
    const f = fixture('07i');
    const r = await call(api, 'POST', f.request.path, f.request.body);
    expect(r.status).toBe(422);
    expect(r.raw).toBe(`${JSON.stringify(f.response.body)}\n`);
    const typed = await call(api, 'POST', BASE, { metadata: { name: 'typed' }, spec: { color: 1, size: 'small', quantity: 'many' } });
    expect(typed.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "integer": spec.color in body must be of type string: "integer"',
        field: 'spec.color',
      },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "string": spec.quantity in body must be of type integer: "string"',
        field: 'spec.quantity',
      },
    ]);
    // the programmatic API enforces it too
    expect(() =>
      api!.create(APPLES, { metadata: { name: 'x', namespace: 'fixtures' }, spec: { color: 'red', size: 'tiny', quantity: 1 } }),
    ).toThrow(/Unsupported value: "tiny"/);
  });

  it('prunes unknown fields like a structural schema', async () => {
    api = await case7();
    const r = await call(api, 'POST', BASE, {
      metadata: { name: 'pruned' },
      spec: { color: 'red', size: 'small', quantity: 1, flavour: 'sweet' },
      extra: true,
      status: { available: 2, other: 'x' },
    });
    expect(r.status).toBe(201);
    expect(r.body.spec).toEqual({ color: 'red', quantity: 1, size: 'small' });
    expect(r.body.extra).toBeUndefined();
    expect(r.body.status).toEqual({ available: 2 });
  });

  it('serves a status subresource when enabled; CRDs posted over HTTP register, deleting them unregisters', async () => {
    api = await startApiServer();
    const crd = fixture('07a').response.body;
    const body = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.org' },
      spec: {
        group: 'example.org',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        scope: 'Cluster',
        versions: [{ ...crd.spec.versions[0], subresources: { status: {} } }],
      },
    };
    const created = await call(api, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body);
    expect(created.status).toBe(201);
    expect(created.body.spec.names.listKind).toBe('WidgetList');
    const disco = await call(api, 'GET', '/apis/example.org/v1');
    expect(disco.body.resources.map((e: any) => [e.name, e.namespaced])).toEqual([
      ['widgets', false],
      ['widgets/status', false],
    ]);
    const w = await call(api, 'POST', '/apis/example.org/v1/widgets', {
      metadata: { name: 'w1' },
      spec: { color: 'red', size: 'small', quantity: 1 },
    });
    expect(w.status).toBe(201);
    const st = await call(api, 'PUT', '/apis/example.org/v1/widgets/w1/status', { ...w.body, status: { available: 7 } });
    expect(st.status).toBe(200);
    expect(st.body.status).toEqual({ available: 7 });
    expect(st.body.metadata.generation).toBe(1);
    const main = await call(api, 'PUT', '/apis/example.org/v1/widgets/w1', {
      ...st.body,
      spec: { ...st.body.spec, quantity: 2 },
      status: { available: 0 },
    });
    expect(main.body.status).toEqual({ available: 7 });
    expect(main.body.metadata.generation).toBe(2);
    const watch = openWatch(api, '/apis/example.org/v1/widgets?watch=true');
    await watch.waitLines(1);
    expect((await call(api, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.org')).status).toBe(200);
    const ended = await watch.done;
    expect(ended.lines.map((l) => l.event.type)).toEqual(['ADDED', 'DELETED']);
    expect(ended.how).toBe('end');
    expect((await call(api, 'GET', '/apis/example.org/v1')).status).toBe(404);
    expect((await call(api, 'GET', '/apis/example.org/v1/widgets')).status).toBe(404);
  });
});
