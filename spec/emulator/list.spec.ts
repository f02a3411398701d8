import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeContinue, startApiServer, type ApiServer, type StoredObject } from 'rx-informer-emulator';
import { list } from '../../packages/emulator/src/list.ts';
import { BUILTIN_RESOURCES } from '../../packages/emulator/src/resources.ts';
import { Store } from '../../packages/emulator/src/store.ts';
import { call, fixture, normalize } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const CM = { group: '', version: 'v1', resource: 'configmaps' } as const;

/**
 * Case 2 of the fixtures: namespace `fixtures` at 688, cm-1..cm-5 (odd app=a, even app=b) at 689..693,
 * carrying the managedFields of the recording so whole list bodies can be compared.
 */
async function case2(opts: Parameters<typeof startApiServer>[0] = {}): Promise<ApiServer> {
  const s = await startApiServer({ startResourceVersion: 687, namespaces: ['fixtures'], ...opts });
  const recorded = fixture('02c').response.body.items;
  for (let i = 1; i <= 5; i++) {
    s.create(CM, {
      metadata: {
        name: `cm-${i}`,
        namespace: 'fixtures',
        labels: { app: i % 2 ? 'a' : 'b' },
        managedFields: recorded[i - 1].metadata.managedFields,
      },
      data: { key: `value-${i}` },
    });
  }
  return s;
}

const same = (ours: unknown, theirs: unknown): void => {
  expect(JSON.stringify(normalize(ours))).toBe(JSON.stringify(normalize(theirs)));
};

describe('list', () => {
  it('serves a plain list exactly like 02c (items without kind/apiVersion, chunked above 2 KiB)', async () => {
    api = await case2();
    const f = fixture('02c');
    const r = await call(api, 'GET', f.request.path);
    expect(r.status).toBe(200);
    same(r.body, f.response.body);
    expect(Buffer.byteLength(r.raw)).toBe(f.response.bodyBytes);
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.headers['content-length']).toBeUndefined();
    expect(r.body.items[0].kind).toBeUndefined();
  });

  it('pages with limit/continue exactly like 02d–02f (same tokens, page 1 RV repeated, remainingItemCount)', async () => {
    api = await case2();
    for (const [file, next] of [
      ['02d', '02e'],
      ['02e', '02f'],
      ['02f', undefined],
    ] as const) {
      const f = fixture(file);
      const r = await call(api, 'GET', f.request.path);
      expect(r.status).toBe(200);
      same(r.body, f.response.body);
      expect(r.headers['content-length']).toBe(String(f.response.bodyBytes));
      if (next) expect(fixture(next).request.path).toContain(r.body.metadata.continue);
    }
    // a write between pages does not show up: pages are served at page 1's revision
    const p1 = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?limit=2');
    api.delete(CM, 'fixtures', 'cm-4');
    api.create(CM, { metadata: { name: 'cm-0', namespace: 'fixtures' } });
    const p2 = await call(api, 'GET', `/api/v1/namespaces/fixtures/configmaps?limit=2&continue=${p1.body.metadata.continue}`);
    expect(p2.body.metadata.resourceVersion).toBe('693');
    expect(p2.body.items.map((i: any) => i.metadata.name)).toEqual(['cm-3', 'cm-4']);
  });

  it('ignores limit with resourceVersion=0 (02h) and serves the latest state', async () => {
    api = await case2();
    const r = await call(api, 'GET', fixture('02h').request.path);
    expect(r.body.items).toHaveLength(5);
    expect(r.body.metadata).toEqual({ resourceVersion: '693' });
  });

  it('filters by label selector (02i) and field selector (02j)', async () => {
    api = await case2();
    same((await call(api, 'GET', fixture('02i').request.path)).body, fixture('02i').response.body);
    same((await call(api, 'GET', fixture('02j').request.path)).body, fixture('02j').response.body);
    const names = async (q: string): Promise<string[]> =>
      (await call(api!, 'GET', `/api/v1/namespaces/fixtures/configmaps?${q}`)).body.items.map((i: any) => i.metadata.name);
    expect(await names('labelSelector=app%3D%3Db')).toEqual(['cm-2', 'cm-4']);
    expect(await names('labelSelector=app!%3Da')).toEqual(['cm-2', 'cm-4']);
    expect(await names(`labelSelector=${encodeURIComponent('app in (a, b),app notin (a)')}`)).toEqual(['cm-2', 'cm-4']);
    expect(await names('labelSelector=app')).toHaveLength(5);
    expect(await names(`labelSelector=${encodeURIComponent('!app')}`)).toEqual([]);
    expect(await names(`fieldSelector=${encodeURIComponent('metadata.name!=cm-1,metadata.namespace=fixtures')}`)).toEqual([
      'cm-2',
      'cm-3',
      'cm-4',
      'cm-5',
    ]);
  });

  it('rejects unsupported field selectors (06g) and malformed label selectors (06h) with 400 exactly', async () => {
    api = await case2();
    for (const id of ['06g', '06h']) {
      const f = fixture(id);
      const r = await call(api, 'GET', f.request.path);
      expect(r.status).toBe(400);
      expect(r.raw).toBe(`${JSON.stringify(f.response.body)}\n`);
    }
    const pods = await call(api, 'GET', '/api/v1/pods?fieldSelector=spec.bogus%3Dx');
    expect(pods.status).toBe(400);
    expect(pods.body.message).toBe('field label not supported: spec.bogus');
  });

  it('supports the pod field selectors spec.nodeName and status.phase (08b, 08c), across namespaces', async () => {
    api = await startApiServer();
    api.create('pods', { metadata: { name: 'p1', namespace: 'a' }, spec: { containers: [] } });
    api.create('pods', {
      metadata: { name: 'p2', namespace: 'b' },
      spec: { containers: [], nodeName: 'node-1' },
      status: { phase: 'Running' },
    });
    const names = async (path: string): Promise<string[]> => (await call(api!, 'GET', path)).body.items.map((i: any) => i.metadata.name);
    expect(await names('/api/v1/pods?fieldSelector=spec.nodeName%3D')).toEqual(['p1']);
    expect(await names('/api/v1/pods?fieldSelector=status.phase%3DPending')).toEqual(['p1']);
    expect(await names('/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1')).toEqual(['p2']);
    expect(await names('/api/v1/pods')).toEqual(['p1', 'p2']);
    expect(await names('/api/v1/namespaces/b/pods')).toEqual(['p2']);
    // all-namespace continue tokens carry namespace/name keys
    const page = await call(api, 'GET', '/api/v1/pods?limit=1');
    expect(decodeContinue(page.body.metadata.continue).start).toBe('a/p1\u0000');
    // cluster-scoped
    expect(await names('/api/v1/namespaces')).toEqual(['a', 'b']);
    // a namespace that does not exist lists as empty (06i)
    const empty = await call(api, 'GET', '/api/v1/namespaces/no-such-ns/configmaps');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: api.resourceVersion }, items: [] });
  });

  it('serves Exact lists at older revisions from history', async () => {
    api = await case2();
    api.patch(CM, 'fixtures', 'cm-1', { data: { key: 'changed' } });
    api.delete(CM, 'fixtures', 'cm-2');
    api.create(CM, { metadata: { name: 'cm-6', namespace: 'fixtures' } });
    const old = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?resourceVersion=691&resourceVersionMatch=Exact');
    expect(old.status).toBe(200);
    expect(old.body.metadata.resourceVersion).toBe('691');
    expect(old.body.items.map((i: any) => [i.metadata.name, i.data.key])).toEqual([
      ['cm-1', 'value-1'],
      ['cm-2', 'value-2'],
      ['cm-3', 'value-3'],
    ]);
    const now = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?resourceVersion=691&resourceVersionMatch=NotOlderThan');
    expect(now.body.metadata.resourceVersion).toBe(api.resourceVersion);
    expect(now.body.items.map((i: any) => i.metadata.name)).toEqual(['cm-1', 'cm-3', 'cm-4', 'cm-5', 'cm-6']);
    const future = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?resourceVersion=99999&resourceVersionMatch=NotOlderThan');
    expect(future.status).toBe(504);
    expect(future.body.details.causes[0].reason).toBe('ResourceVersionTooLarge');
  });

  it('after compaction: Exact (04i) and limit+RV (04h) → 410; NotOlderThan (04j) → 200; continue → 410 with an rv -1 token (04f) that works (04g)', async () => {
    api = await case2();
    const page1 = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?limit=1');
    expect(page1.body.metadata.remainingItemCount).toBe(4);
    api.patch(CM, 'fixtures', 'cm-2', { data: { bumped: 'yes' } });
    api.compact();
    const exact = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?resourceVersion=693&resourceVersionMatch=Exact');
    expect(exact.status).toBe(410);
    expect(exact.raw).toBe(`${JSON.stringify(fixture('04i').response.body)}\n`);
    const limited = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?limit=2&resourceVersion=693');
    expect(limited.status).toBe(410);
    expect(limited.raw).toBe(`${JSON.stringify(fixture('04h').response.body)}\n`);
    const nto = await call(
      api,
      'GET',
      '/api/v1/namespaces/fixtures/configmaps?resourceVersion=693&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Dcm-1',
    );
    expect(nto.status).toBe(200);
    expect(nto.body.metadata.resourceVersion).toBe('694');

    const cont = await call(api, 'GET', `/api/v1/namespaces/fixtures/configmaps?limit=1&continue=${page1.body.metadata.continue}`);
    expect(cont.status).toBe(410);
    const f04f = fixture('04f').response.body;
    expect(cont.body.message).toBe(f04f.message);
    expect(Object.keys(cont.body)).toEqual(Object.keys(f04f));
    expect(decodeContinue(cont.body.metadata.continue)).toEqual({ rv: -1, start: 'cm-1\u0000' });
    // 04f's token has the same start key, so it is byte-identical
    expect(cont.body.metadata.continue).toBe(f04f.metadata.continue);
    const resumed = await call(api, 'GET', `/api/v1/namespaces/fixtures/configmaps?limit=1&continue=${cont.body.metadata.continue}`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.metadata.resourceVersion).toBe('694');
    expect(resumed.body.items[0].data).toEqual({ bumped: 'yes', key: 'value-2' });
    expect(resumed.body.metadata.remainingItemCount).toBe(3);
    expect(decodeContinue(resumed.body.metadata.continue)).toEqual({ rv: 694, start: 'cm-2\u0000' });
  });

  it('validates list options: malformed RV → 500 (06f shape), bad continue → 400, match without RV → 422', async () => {
    api = await case2();
    const bad = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?resourceVersion=abc');
    expect(bad.status).toBe(500);
    expect(bad.raw).toBe(`${JSON.stringify(fixture('06f').response.body)}\n`);
    expect((await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?limit=1&continue=garbage')).status).toBe(400);
    const m = await call(api, 'GET', '/api/v1/namespaces/fixtures/configmaps?resourceVersionMatch=Exact');
    expect(m.status).toBe(422);
    expect(m.body.details.kind).toBe('ListOptions');
  });

  it('lists 10 000 objects whole and paged: every page continues where the last ended, counting down what remains', async () => {
    // No page re-sorts the collection: the identity checks below ('sorted keys ... without rebuilding them per page') prove that;
    // how fast it is is a claim for bench/micro/emulator.ts, not for a test.
    api = await startApiServer();
    for (let i = 0; i < 10_000; i++) {
      api.create(CM, {
        metadata: { name: `cm-${String(i).padStart(5, '0')}`, namespace: `ns-${i % 10}`, labels: { i: String(i % 3) } },
        data: { k: 'v'.repeat(50) },
      });
    }
    const whole = await call(api, 'GET', '/api/v1/configmaps');
    expect(whole.body.items).toHaveLength(10_000);
    let pages = 0;
    let count = 0;
    let cont = '';
    const paged: string[] = [];
    do {
      const r = await call(api, 'GET', `/api/v1/configmaps?limit=500${cont ? `&continue=${cont}` : ''}`);
      pages++;
      count += r.body.items.length;
      for (const o of r.body.items as { metadata: { namespace: string; name: string } }[])
        paged.push(`${o.metadata.namespace}/${o.metadata.name}`);
      cont = r.body.metadata.continue ?? '';
      if (cont) expect(r.body.metadata.remainingItemCount).toBe(10_000 - count);
    } while (cont);
    expect(pages).toBe(20);
    expect(count).toBe(10_000);
    expect(paged).toEqual(
      (whole.body.items as { metadata: { namespace: string; name: string } }[]).map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    );
    const selected = await call(api, 'GET', '/api/v1/configmaps?labelSelector=i%3D1');
    expect(selected.body.items).toHaveLength(3333);
  });
});

describe('list: sorted keys and older revisions without rebuilding them per page', () => {
  const configMaps = BUILTIN_RESOURCES.find((d) => d.plural === 'configmaps')!;
  const names = ['a', 'b', 'c', 'd'];
  const op = fc.oneof(
    fc.record({ type: fc.constant('write' as const), ns: fc.constantFrom('n1', 'n2'), name: fc.constantFrom(...names) }),
    fc.record({ type: fc.constant('delete' as const), ns: fc.constantFrom('n1', 'n2'), name: fc.constantFrom(...names) }),
    fc.record({ type: fc.constant('page' as const), limit: fc.integer({ min: 1, max: 4 }), ns: fc.constantFrom(undefined, 'n1', 'n2') }),
  );

  it('paged lists with writes between the pages give the state at the first page, in key order, with remainingItemCount (model)', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const store = new Store({ historyLimit: 10_000, startRevision: 1 });
        const coll = store.collection(configMaps);
        const model = new Map<string, StoredObject>();
        const history = new Map<number, Map<string, StoredObject>>([[store.revision, new Map()]]);
        /** Lists in progress: their revision, namespace, limit, the token and what they read so far. */
        const open: { rv: number; ns: string | undefined; limit: number; token: string; read: string[] }[] = [];
        const expectedAt = (rv: number, ns: string | undefined) =>
          [...history.get(rv)!.keys()].filter((key) => ns === undefined || key.startsWith(`${ns}/`)).sort();
        const page = (ns: string | undefined, limit: number, token: string | undefined) =>
          list(store, coll, {
            namespace: ns,
            labels: [],
            fields: [],
            resourceVersion: undefined,
            resourceVersionMatch: undefined,
            limit,
            continueToken: token,
          });
        for (const o of ops) {
          if (o.type === 'page') {
            // Go on with the oldest list in progress, or start one.
            const going = open.shift();
            const ns = going ? going.ns : o.ns;
            const r = page(ns, going?.limit ?? o.limit, going?.token);
            const rv = going?.rv ?? r.rv;
            expect(r.rv).toBe(rv);
            const read = [...(going?.read ?? []), ...r.items.map((i) => `${i.metadata!.namespace}/${i.metadata!.name}`)];
            for (const item of r.items) expect(item).toBe(history.get(rv)!.get(`${item.metadata!.namespace}/${item.metadata!.name}`));
            const expected = expectedAt(rv, ns);
            if (r.continueToken === undefined) expect(read).toEqual(expected);
            else {
              expect(r.remainingItemCount).toBe(expected.length - read.length);
              open.push({ rv, ns, limit: going?.limit ?? o.limit, token: r.continueToken, read });
            }
          } else {
            const key = `${o.ns}/${o.name}`;
            const prev = model.get(key);
            if (o.type === 'delete' && prev === undefined) continue;
            const rv = store.nextRevision();
            const object: StoredObject = { metadata: { name: o.name, namespace: o.ns, resourceVersion: String(rv) } };
            store.commit(coll, rv, o.type === 'delete' ? 'DELETED' : prev ? 'MODIFIED' : 'ADDED', key, object, prev);
            if (o.type === 'delete') model.delete(key);
            else model.set(key, object);
            history.set(rv, new Map(model));
          }
          // The collection's own order stays right, write by write.
          expect(coll.sortedKeys()).toEqual([...model.keys()].sort());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps its key order through writes, and builds a state at an older revision once for all the pages of a list', () => {
    const store = new Store({ historyLimit: 100, startRevision: 1 });
    const coll = store.collection(configMaps);
    const write = (key: string, type: 'ADDED' | 'DELETED') => {
      const object: StoredObject = { metadata: { name: key, namespace: 'n', resourceVersion: String(store.revision + 1) } };
      store.commit(coll, store.nextRevision(), type, `n/${key}`, object, type === 'DELETED' ? coll.items.get(`n/${key}`) : undefined);
    };
    for (const key of ['c', 'a', 'd']) write(key, 'ADDED');
    const order = coll.sortedKeys();
    write('b', 'ADDED');
    write('c', 'DELETED');
    expect(coll.sortedKeys()).toBe(order); // the same array, kept in order: never sorted again
    expect(order).toEqual(['n/a', 'n/b', 'n/d']);
    const at = store.revision - 2; // before b and the deletion of c
    write('ba', 'ADDED'); // and a key there neither then nor now
    write('ba', 'DELETED');
    const first = store.snapshot(coll, at);
    expect(first.keys).toEqual(['n/a', 'n/c', 'n/d']);
    write('e', 'ADDED');
    expect(store.snapshot(coll, at)).toBe(first); // the next page asks again: the same state, not rebuilt
  });
});
