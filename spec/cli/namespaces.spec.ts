/**
 * `rx-informer watch -n` with many namespaces: one informer per resource over all of them, so
 * 1,000 namespaces × 2 resources are 2 lists and 2 watches (one cluster-wide each), not 2,000;
 * and a user who may not list the cluster still gets every namespace (one watch each).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchCommand, type Watching } from '../../src/cli/watch.ts';
import { startApiServer, type ApiServer, type ApiServerOptions } from 'rx-informer-emulator';
import { cli, killAll } from './support.ts';

const SYNCED = /^synced \d+ resources?, \d+ objects? in \d+ ms/;
const WATCHED = Array.from({ length: 1000 }, (_, i) => `team-${String(i).padStart(4, '0')}`);
const OTHERS = Array.from({ length: 50 }, (_, i) => `other-${i}`);
const pod = (namespace: string, name: string) => ({
  metadata: { name, namespace },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});

let api: ApiServer | undefined;
let watching: Watching | undefined;
afterEach(async () => {
  watching?.stop();
  watching = undefined;
  await api?.close();
  api = undefined;
});
afterAll(() => killAll());

/** An emulator with 1,050 namespaces: a configmap in each, a pod in every fifth. */
async function cluster(options: ApiServerOptions): Promise<ApiServer> {
  const server = await startApiServer({ ...options, namespaces: [...WATCHED, ...OTHERS] });
  for (const [i, ns] of [...WATCHED, ...OTHERS].entries()) {
    server.create('configmaps', { metadata: { name: 'settings', namespace: ns }, data: { i: String(i) } });
    if (i % 5 === 0) server.create('pods', pod(ns, 'worker'));
  }
  return server;
}

function collector() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, terminal: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const watchedPods = () => WATCHED.filter((_, i) => i % 5 === 0).length; // 200

/** Writes in a watched and an unwatched namespace: only the watched one is printed. */
async function onlyWatchedChangesShow(server: ApiServer, out: string[]): Promise<void> {
  server.create('configmaps', { metadata: { name: 'late', namespace: OTHERS[0] } });
  server.create('configmaps', { metadata: { name: 'late', namespace: WATCHED[999] } });
  server.create('pods', pod(WATCHED[1]!, 'late'));
  await until(
    () => out.some((l) => l.endsWith(`configmaps ${WATCHED[999]}/late`)) && out.some((l) => l.endsWith(`pods ${WATCHED[1]}/late`)),
  );
  expect(out.filter((l) => l.includes('other-'))).toEqual([]);
}

describe('watch -n with 1,000 namespaces', () => {
  it("HTTP/2: one TCP connection, one cluster-wide list and watch per resource; the counts are the server's", async () => {
    api = await cluster({ http2: true });
    const server = api;
    const t = collector();
    watching = await watchCommand(
      server.kubeConfig,
      { resources: ['configmaps', 'pods'], all: false, output: 'pretty', namespaces: WATCHED },
      t.terminal,
    );
    await watching.synced;
    expect(t.err).toContain('synced configmaps in 1000 namespaces: 1000 objects');
    expect(t.err).toContain(`synced pods in 1000 namespaces: ${watchedPods()} objects`);
    expect(t.err.find((l) => SYNCED.test(l))).toMatch(new RegExp(`^synced 2 resources, ${1000 + watchedPods()} objects`));
    await until(() => server.activeWatches === 2);
    const reads = server.requests.filter((r) => r.resource === 'configmaps' || r.resource === 'pods');
    expect(reads.map((r) => `${r.watch ? 'watch' : 'list'} ${r.path}`).sort()).toEqual([
      'list /api/v1/configmaps',
      'list /api/v1/pods',
      'watch /api/v1/configmaps',
      'watch /api/v1/pods',
    ]);
    await onlyWatchedChangesShow(server, t.out);
    expect(server.acceptedConnections).toBeLessThanOrEqual(2);
    expect(server.http2!.sessions).toBeLessThanOrEqual(2);
    expect(t.err.filter((l) => l.startsWith('!'))).toEqual([]);
  });

  it('HTTP/1.1: two watches (two connections while watching), not 2,000', async () => {
    api = await cluster({ tls: true });
    const server = api;
    const t = collector();
    watching = await watchCommand(
      server.kubeConfig,
      { resources: ['configmaps', 'pods'], all: false, output: 'json', namespaces: WATCHED },
      t.terminal,
    );
    await watching.synced;
    await until(() => server.activeWatches === 2);
    // Lists and discovery reuse kept-alive connections; each watch holds one.
    expect(server.openConnections).toBeLessThanOrEqual(4);
    expect(server.acceptedConnections).toBeLessThanOrEqual(6);
    expect(server.requests.filter((r) => r.resource === 'configmaps' || r.resource === 'pods')).toHaveLength(4);
    expect(t.err.find((l) => SYNCED.test(l))).toMatch(new RegExp(`^synced 2 resources, ${1000 + watchedPods()} objects`));
  });

  it('a user who may not list the cluster (403 on cluster-wide lists): one list and watch per namespace, all synced, no error shown', async () => {
    api = await cluster({ http2: true });
    const server = api;
    const namespaces = WATCHED.slice(0, 40);
    const forbidden = server.faults.add({
      match: { predicate: (q) => (q.resource === 'configmaps' || q.resource === 'pods') && q.namespace === undefined },
      times: Infinity,
      fault: {
        type: 'status',
        code: 403,
        reason: 'Forbidden',
        message: 'forbidden: User "team-lead" cannot list resource at the cluster scope',
      },
    });
    const t = collector();
    watching = await watchCommand(
      server.kubeConfig,
      { resources: ['configmaps', 'pods'], all: false, output: 'pretty', namespaces },
      t.terminal,
    );
    await watching.synced;
    expect(forbidden.hits).toBe(2);
    expect(t.err).toContain('synced configmaps in 40 namespaces: 40 objects');
    expect(t.err).toContain('synced pods in 40 namespaces: 8 objects');
    await until(() => server.activeWatches === 80);
    const lists = server.requests.filter(
      (r) => !r.watch && r.namespace !== undefined && (r.resource === 'configmaps' || r.resource === 'pods'),
    );
    expect(lists).toHaveLength(80);
    server.create('configmaps', { metadata: { name: 'late', namespace: namespaces[39] } });
    server.create('configmaps', { metadata: { name: 'late', namespace: WATCHED[40] } });
    await until(() => t.out.some((l) => l.endsWith(`configmaps ${namespaces[39]}/late`)));
    expect(t.out.filter((l) => l.includes(WATCHED[40]!))).toEqual([]);
    expect(server.acceptedConnections).toBe(1);
    expect(t.err.filter((l) => l.startsWith('!'))).toEqual([]);
  });

  it('--all with 1,000 namespaces: one cluster-wide watch per resource, whatever its scope', async () => {
    api = await cluster({ http2: true });
    const server = api;
    const t = collector();
    watching = await watchCommand(server.kubeConfig, { resources: [], all: true, output: 'pretty', namespaces: WATCHED }, t.terminal);
    await watching.synced;
    const resources = t.err.find((l) => SYNCED.test(l))!.match(/^synced (\d+) resources/)![1]!;
    // One watch per resource, and the dynamic factory's own watch of CRDs.
    await until(() => server.activeWatches === Number(resources) + 1);
    expect(Number(resources)).toBeGreaterThan(10);
    // Every read is cluster-wide (discovery and the CRD watch included): no request names a namespace.
    expect(server.requests.filter((r) => r.namespace !== undefined)).toEqual([]);
    expect(t.err).toContain('synced configmaps in 1000 namespaces: 1000 objects');
    await onlyWatchedChangesShow(server, t.out);
    expect(server.acceptedConnections).toBeLessThanOrEqual(2);
  });

  it('the bin under `ulimit -n 256` over HTTP/1.1: syncs 1,000 namespaces × 2 resources, no EMFILE', async () => {
    api = await cluster({ tls: true });
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-namespaces-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(kubeconfig, api.kubeConfig.exportConfig());
    const c = cli(['watch', 'configmaps,pods', '-n', WATCHED.join(','), '--kubeconfig', kubeconfig], {}, { maxOpenFiles: 256 });
    try {
      const line = await c.line('err', SYNCED, 30_000);
      expect(line).toMatch(new RegExp(`^synced 2 resources, ${1000 + watchedPods()} objects`));
      expect(c.raw()).not.toMatch(/EMFILE/);
      expect(api.activeWatches).toBeLessThanOrEqual(2);
    } finally {
      c.proc.kill('SIGTERM');
      await c.exit;
    }
  }, 60_000);
});

describe('watch --all over HTTP/2', () => {
  it('every resource the server serves is listed and watched over one TCP connection (one HTTP/2 session, a stream each)', async () => {
    api = await startApiServer({ http2: true });
    const server = api;
    server.create('configmaps', { metadata: { name: 'settings', namespace: 'default' } });
    const t = collector();
    watching = await watchCommand(server.kubeConfig, { resources: [], all: true, output: 'pretty' }, t.terminal);
    await watching.synced;
    const watched = new Set(server.requests.filter((r) => r.watch).map((r) => r.path));
    await until(() => server.activeWatches >= Math.max(watched.size, 10));
    // discovery, one list and one watch per resource: all multiplexed on the one connection
    expect(server.activeWatches).toBeGreaterThanOrEqual(10);
    expect(server.http2!.sessions).toBe(1);
    expect(server.acceptedConnections).toBe(1);
    expect(server.http2!.openStreams).toBeGreaterThanOrEqual(server.activeWatches);
    expect(t.err.filter((l) => l.startsWith('!'))).toEqual([]);
  });
});
