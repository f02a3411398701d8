import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { call, fixture, openWatch } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const OBJECT_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/** cm-1..cm-3 of case 10, created with the recorded labels, data and managedFields. */
async function caseTen(): Promise<ApiServer> {
  const server = await startApiServer({ namespaces: ['fixtures'] });
  for (const item of fixture('10a').response.body.items) {
    const { name, namespace, labels, managedFields } = item.metadata;
    server.create('configmaps', { metadata: { name, namespace, labels, managedFields }, data: { key: 'value' } });
  }
  return server;
}

/** The recorded body with the volatile values (uid, resourceVersion, creationTimestamp, continue) of `actual` put in. */
function recorded(expected: any, actual: any): string {
  const copy = structuredClone(expected);
  copy.metadata.resourceVersion = actual.metadata.resourceVersion;
  if (copy.metadata.continue !== undefined) copy.metadata.continue = actual.metadata.continue;
  copy.items.forEach((item: any, i: number) => {
    for (const k of ['uid', 'resourceVersion', 'creationTimestamp']) item.metadata[k] = actual.items[i].metadata[k];
  });
  return `${JSON.stringify(copy)}\n`;
}

describe('metadata-only answers (case 10)', () => {
  it('lists a PartialObjectMetadataList byte for byte like 10a', async () => {
    api = await caseTen();
    const r = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps', undefined, { Accept: LIST_ACCEPT });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.raw).toBe(recorded(fixture('10a').response.body, r.body));
    expect(r.raw).not.toContain('"data"');
  });

  it('pages like 10d: continue in the list metadata, no remainingItemCount (v1.20 copies only resourceVersion and continue)', async () => {
    api = await caseTen();
    const r = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?limit=2', undefined, { Accept: LIST_ACCEPT });
    expect(r.raw).toBe(recorded(fixture('10d').response.body, r.body));
    expect(Object.keys(r.body.metadata)).toEqual(['resourceVersion', 'continue']);
    const next = await call(api, 'GET', `/api/v1/namespaces/fixtures/configmaps?limit=2&continue=${r.body.metadata.continue}`, undefined, {
      Accept: LIST_ACCEPT,
    });
    expect(next.body.items.map((i: any) => i.metadata.name)).toEqual(['cm-3']);
    expect(next.body.metadata).toEqual({ resourceVersion: r.body.metadata.resourceVersion });
  });

  it('answers one object as a PartialObjectMetadata like 10b', async () => {
    api = await caseTen();
    const r = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps/cm-1', undefined, { Accept: OBJECT_ACCEPT });
    const expected = structuredClone(fixture('10b').response.body);
    for (const k of ['uid', 'resourceVersion', 'creationTimestamp']) expected.metadata[k] = r.body.metadata[k];
    expect(r.raw).toBe(`${JSON.stringify(expected)}\n`);
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.raw)));
  });

  it('answers 406 NotAcceptable like 10c when nothing in Accept can be served', async () => {
    api = await caseTen();
    const expected = fixture('10c').response;
    // (Protobuf alone is served for a ConfigMap since issue #36: spec/emulator/protobuf.spec.ts.)
    for (const accept of [fixture('10c').request.headers.Accept, 'application/yaml;as=Table', OBJECT_ACCEPT]) {
      const r = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps', undefined, { Accept: accept });
      expect([accept, r.status]).toEqual([accept, 406]);
      expect(r.body).toEqual(expected.body);
    }
    // A list-shaped Accept for one object is not servable either.
    expect(
      (
        await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps/cm-1', undefined, {
          Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
        })
      ).status,
    ).toBe(406);
    // Skipped clauses fall through to the next one: full objects.
    const r = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps', undefined, {
      Accept: 'application/json;as=Table;g=meta.k8s.io;v=v1,application/json',
    });
    expect(r.body.kind).toBe('ConfigMapList');
  });

  it('watches like 10e: every event a PartialObjectMetadata, a data-only change still a MODIFIED, bookmarks too', async () => {
    api = await caseTen();
    const list = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps', undefined, { Accept: LIST_ACCEPT });
    const rv = list.body.metadata.resourceVersion;
    const w = openWatch(
      api,
      `/api/v1/namespaces/fixtures/configmaps?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=0.3`,
      {
        Accept: fixture('10e').request.headers.Accept,
      },
    );
    await w.ready;
    api.patch('configmaps', 'fixtures', 'cm-1', { metadata: { labels: { meta: 'watched' } } });
    api.patch('configmaps', 'fixtures', 'cm-1', { data: { key: 'changed' } });
    const result = await w.done;
    const recordedLines = fixture('10e').lines;
    expect(result.lines.map((l) => l.event.type)).toEqual(['MODIFIED', 'MODIFIED', 'BOOKMARK']);
    for (const [i, line] of result.lines.entries()) {
      expect(Object.keys(line.event.object)).toEqual(Object.keys(recordedLines[i].event.object));
      expect(Object.keys(line.event.object.metadata)).toEqual(Object.keys(recordedLines[i].event.object.metadata));
    }
    expect(result.lines[0]!.event.object.metadata.labels).toEqual({ app: 'a', meta: 'watched' });
    expect(result.lines[1]!.text).not.toContain('changed');
    const bookmark = result.lines[2]!;
    const expectedBookmark = structuredClone(recordedLines[2].event);
    expectedBookmark.object.metadata.resourceVersion = result.lines[1]!.event.object.metadata.resourceVersion;
    expect(bookmark.text).toBe(JSON.stringify(expectedBookmark));
  });

  it('serves custom resources and the initial events of a streaming list metadata-only, metadata in ObjectMeta order', async () => {
    api = await startApiServer({ resources: [{ group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple' }] });
    api.create('myapples.stable.example.com', {
      metadata: { name: 'apple-1', labels: { a: 'b' }, finalizers: ['x/y'] },
      spec: { color: 'red' },
    });
    const r = await call(api, 'GET', '/apis/stable.example.com/v1/namespaces/default/myapples', undefined, { Accept: LIST_ACCEPT });
    expect(r.body.kind).toBe('PartialObjectMetadataList');
    expect(Object.keys(r.body.metadata)).toEqual(['resourceVersion']);
    expect(Object.keys(r.body.items[0].metadata)).toEqual([
      'name',
      'namespace',
      'uid',
      'resourceVersion',
      'generation',
      'creationTimestamp',
      'labels',
      'finalizers',
    ]);
    expect(r.raw).not.toContain('spec');
    const w = openWatch(
      api,
      '/apis/stable.example.com/v1/myapples?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=0.2',
      {
        Accept: `${OBJECT_ACCEPT},application/json`,
      },
    );
    const done = await w.done;
    expect(done.lines.map((l) => [l.event.type, l.event.object.kind])).toEqual([
      ['ADDED', 'PartialObjectMetadata'],
      ['BOOKMARK', 'PartialObjectMetadata'],
    ]);
    expect(done.lines[1]!.event.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
  });

  it('plays a server without PartialObjectMetadata: full objects with a fallback, 406 without', async () => {
    api = await startApiServer({ partialObjectMetadata: false });
    api.create('configmaps', { metadata: { name: 'cm-1' }, data: { key: 'v' } });
    const withFallback = await call(api, 'GET', '/api/v1/namespaces/default/configmaps', undefined, { Accept: LIST_ACCEPT });
    expect(withFallback.body.kind).toBe('ConfigMapList');
    expect(withFallback.body.items[0].data).toEqual({ key: 'v' });
    const without = await call(api, 'GET', '/api/v1/namespaces/default/configmaps', undefined, {
      Accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    });
    expect(without.status).toBe(406);
  });
});
