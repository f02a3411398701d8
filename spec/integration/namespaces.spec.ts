/**
 * An informer over several namespaces (`informer(kc, r, { namespaces })`) on the emulator over
 * HTTP/2: above the threshold one cluster-wide list and watch filtered on the client; at or
 * below it, or when the cluster-wide list is Forbidden, one list and watch per namespace merged
 * into one view (synced once all are, every namespace's faults in errors$).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, Node, Pod, informerFactory } from '../../src/index.ts';
import { DEFAULT_MAX_NAMESPACE_WATCHES } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { contents, run, waitFor, type Running } from '../resilience/harness/live.ts';

let api: ApiServer | undefined;
const running: Running<ConfigMap>[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) r.stop();
  await api?.close();
  api = undefined;
});

const ALL = Array.from({ length: 40 }, (_, i) => `ns-${String(i).padStart(2, '0')}`);
const BACKOFF = { initialMs: 10, maxMs: 50 };

/** The emulator's KubeConfig copied, so that each test has its own connections. */
function freshKubeConfig(server: ApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeConfig.exportConfig());
  return kc;
}

/** The server's configmaps of `namespaces`, as `contents` shows a store. */
function serverOf(server: ApiServer, namespaces: readonly string[]): string[] {
  const wanted = new Set(namespaces);
  return server
    .list('configmaps')
    .filter((o) => wanted.has(o.metadata!.namespace!))
    .map((o) => `${o.metadata!.namespace}/${o.metadata!.name}@${o.metadata!.resourceVersion}`)
    .sort();
}

async function seeded(): Promise<ApiServer> {
  const server = await startApiServer({ http2: true, namespaces: ALL });
  for (const ns of ALL)
    for (let i = 0; i < 3; i++) server.create('configmaps', { metadata: { name: `cm-${i}`, namespace: ns }, data: { i: String(i) } });
  return server;
}

function start(server: ApiServer, namespaces: readonly string[]): Running<ConfigMap> {
  const r = run(server, ConfigMap, { namespaces, backoff: BACKOFF }, freshKubeConfig(server));
  running.push(r);
  return r;
}

/** Writes in watched and unwatched namespaces; the informer must see exactly the watched ones. */
async function writesConverge(server: ApiServer, r: Running<ConfigMap>, namespaces: readonly string[]): Promise<void> {
  const before = r.events.length;
  for (const ns of ALL.slice(0, 30)) server.create('configmaps', { metadata: { name: 'later', namespace: ns } });
  server.delete('configmaps', namespaces[0], 'cm-0');
  server.patch('configmaps', namespaces[1], 'cm-1', { data: { i: 'changed' } });
  const want = serverOf(server, namespaces);
  await waitFor('the writes to reach the cache', () => JSON.stringify(contents(r.store())) === JSON.stringify(want), 10_000);
  const wanted = new Set(namespaces);
  // No event, and no cached object, of a namespace not asked for.
  expect(r.events.slice(before).every((e) => wanted.has(e.object.metadata.namespace!))).toBe(true);
  expect(
    r
      .store()!
      .list()
      .every((o) => wanted.has(o.metadata.namespace!)),
  ).toBe(true);
}

describe('informer over several namespaces', () => {
  it(`more than ${DEFAULT_MAX_NAMESPACE_WATCHES} namespaces: one cluster-wide list and one watch, other namespaces dropped`, async () => {
    api = await seeded();
    const namespaces = ALL.filter((_, i) => i % 2 === 0); // 20 of 40
    const r = start(api, namespaces);
    await waitFor('sync', () => r.synced(), 10_000);
    expect(contents(r.store())).toEqual(serverOf(api, namespaces));
    expect(r.store()!.size).toBe(60);
    await waitFor('the watch', () => r.watches().length === 1);
    expect(r.lists().map((q) => q.path)).toEqual(['/api/v1/configmaps']);
    expect(r.watches().map((q) => q.path)).toEqual(['/api/v1/configmaps']);
    expect(r.events.every((e) => e.type === 'added' && e.isInInitialList)).toBe(true);
    await writesConverge(api, r, namespaces);
    // Still one watch: dropped events moved the resourceVersion on, nothing was relisted.
    expect(r.lists()).toHaveLength(1);
    expect(r.errors).toEqual([]);
    expect(api.acceptedConnections).toBe(1);
  });

  it('a 403 on the cluster-wide list (namespace-scoped credentials): one list and watch per namespace, synced once all are, the 403 not reported', async () => {
    api = await seeded();
    // A user whose RBAC allows the namespaces, not the cluster: every cluster-wide request is Forbidden.
    const forbidden = api.faults.add({
      match: { resource: 'configmaps', predicate: (q) => q.namespace === undefined },
      times: Infinity,
      fault: {
        type: 'status',
        code: 403,
        reason: 'Forbidden',
        message: 'configmaps is forbidden: User "ns-admin" cannot list resource "configmaps" at the cluster scope',
      },
    });
    const namespaces = ALL.slice(0, 20);
    const r = start(api, namespaces);
    await waitFor('sync', () => r.synced(), 10_000);
    expect(forbidden.hits).toBe(1);
    expect(contents(r.store())).toEqual(serverOf(api, namespaces));
    const namespacedLists = r.lists().filter((q) => q.namespace !== undefined);
    expect(namespacedLists.map((q) => q.namespace).sort()).toEqual([...namespaces].sort());
    await waitFor('20 watches', () => r.watches().filter((q) => q.namespace !== undefined).length === 20);
    // The first list is one batch: every object of every namespace, once, as in the initial list.
    expect(r.events).toHaveLength(60);
    expect(r.events.every((e) => e.type === 'added' && e.isInInitialList)).toBe(true);
    await writesConverge(api, r, namespaces);
    expect(r.errors).toEqual([]);
    expect(forbidden.hits).toBe(1);
    expect(api.acceptedConnections).toBe(1);
  });

  for (const mode of ['cluster-wide', 'per-namespace (403)'] as const) {
    it(`${mode}: changes missed while the watches were down (410, relist) reach the merged view`, async () => {
      api = await seeded();
      const server = api;
      if (mode !== 'cluster-wide') {
        server.faults.add({
          match: { resource: 'configmaps', predicate: (q) => q.namespace === undefined },
          times: Infinity,
          fault: { type: 'status', code: 403 },
        });
      }
      const namespaces = ALL.slice(0, 20);
      const r = start(server, namespaces);
      await waitFor('sync', () => r.synced(), 10_000);
      await waitFor('the watches', () => server.activeWatches === (mode === 'cluster-wide' ? 1 : 20));
      // The watches go down and stay down while the cluster changes; the history is compacted.
      const down = server.faults.add({
        match: { resource: 'configmaps', watch: true },
        times: Infinity,
        fault: { type: 'status', code: 503 },
      });
      server.closeWatches({ clean: false });
      server.delete('configmaps', namespaces[3], 'cm-2');
      server.delete('configmaps', ALL[30], 'cm-2');
      server.patch('configmaps', namespaces[4], 'cm-0', { data: { i: 'missed' } });
      server.create('configmaps', { metadata: { name: 'missed', namespace: namespaces[5] } });
      server.compact();
      const before = r.events.length;
      down.remove();
      const want = serverOf(server, namespaces);
      await waitFor('the relist to reach the cache', () => JSON.stringify(contents(r.store())) === JSON.stringify(want), 10_000);
      const seen = r.events.slice(before);
      expect(seen.filter((e) => e.type === 'deleted').map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual([
        `${namespaces[3]}/cm-2`,
      ]);
      expect(seen.filter((e) => e.type === 'added').map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual([
        `${namespaces[5]}/missed`,
      ]);
      expect(seen.every((e) => namespaces.includes(e.object.metadata.namespace!))).toBe(true);
      expect(r.errors.some((e) => e.reason === 'Forbidden')).toBe(false);
    });
  }

  it(`at most ${DEFAULT_MAX_NAMESPACE_WATCHES} namespaces: one list and watch each; synced$ waits for all, errors$ carries each namespace's faults`, async () => {
    api = await seeded();
    const namespaces = ['ns-01', 'ns-02', 'ns-03'];
    // ns-02's list fails twice (two 500s) before it is served.
    const failing = api.faults.add({
      match: { resource: 'configmaps', namespace: 'ns-02', watch: false },
      times: 2,
      fault: { type: 'status', code: 500 },
    });
    const syncedAt: number[] = [];
    const r = start(api, namespaces);
    const watching = r.informer.synced$.subscribe((synced) => void (synced && syncedAt.push(r.lists().length)));
    await waitFor('sync', () => r.synced(), 10_000);
    expect(failing.hits).toBe(2);
    // Synced only once ns-02's third list was served: 2 + 3 list requests by then.
    expect(syncedAt).toEqual([5]);
    expect(r.lists().every((q) => q.namespace !== undefined)).toBe(true);
    expect(r.errors.map((e) => [e.reason, e.phase])).toEqual([
      ['ServerError', 'list'],
      ['ServerError', 'list'],
    ]);
    expect(contents(r.store())).toEqual(serverOf(api, namespaces));
    await writesConverge(api, r, namespaces);
    watching.unsubscribe();
  });

  it('per-namespace: a deletion only a relist saw is `deleted` with finalStateUnknown, as in a single-namespace informer', async () => {
    api = await seeded();
    const server = api;
    const namespaces = ['ns-01', 'ns-02'];
    const r = start(server, namespaces);
    await waitFor('sync', () => r.synced(), 10_000);
    await waitFor('a watch of each namespace', () => server.activeWatches >= 2, 10_000);
    // The watches go down and stay down (503) while ns-01/cm-0 is deleted and the history compacted: the watches
    // resume into a 410, and ns-01's relist is what finds cm-0 gone.
    const down = server.faults.add({
      match: { resource: 'configmaps', watch: true },
      times: Infinity,
      fault: { type: 'status', code: 503 },
    });
    server.closeWatches({ clean: false });
    server.delete('configmaps', 'ns-01', 'cm-0');
    // Compaction keeps the revision it is at (etcd's, emulator's e396351): one more write, elsewhere, puts the deletion
    // below it.
    server.create('secrets', { metadata: { name: 'bump', namespace: 'ns-09' } });
    server.compact();
    const before = r.events.length;
    down.remove();
    await waitFor('the deletion', () => r.events.slice(before).some((e) => e.type === 'deleted'), 10_000);
    const deleted = r.events.slice(before).filter((e) => e.type === 'deleted');
    expect(deleted.map((e) => [`${e.object.metadata.namespace}/${e.object.metadata.name}`, e.finalStateUnknown])).toEqual([
      ['ns-01/cm-0', true],
    ]);
    expect(contents(r.store())).toEqual(serverOf(server, namespaces));
  });

  it('a factory shares one informer per set of namespaces, in any order; one namespace is `namespace`; cluster-scoped ignore them', () => {
    const factory = informerFactory(new KubeConfig());
    const ab = factory.informer(ConfigMap, { namespaces: ['a', 'b'] });
    expect(factory.informer(ConfigMap, { namespaces: ['b', 'a', 'b'] })).toBe(ab);
    expect(factory.informer(ConfigMap, { namespaces: ['a', 'b', 'c'] })).not.toBe(ab);
    expect(factory.informer(ConfigMap, { namespaces: ['a'] })).toBe(factory.informer(ConfigMap, { namespace: 'a' }));
    expect(factory.informer(Pod, { namespaces: ['a', 'b'] })).not.toBe(ab);
    expect(factory.informer(Node, { namespaces: ['a', 'b'] })).toBe(factory.informer(Node));
    expect(factory.informers()).toHaveLength(5);
  });
});
