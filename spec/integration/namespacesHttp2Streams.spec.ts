/**
 * The per-namespace fallback over HTTP/2 against the stream budget of current kube-apiservers (audit16): since
 * the CVE-2023-44487 fix (1.29, backported to 1.26–1.28 patches) a connection carries 100 concurrent streams, so
 * our pool (`http2.maxConnections`, 8) carries 800; 820 namespaces need more. Their lists and watches then take
 * turns at the fallback's share of the pool (src/5-informer/connectionTurns.ts, docs/transport.md › Many
 * namespaces); while everything fits (250 streams) nothing takes turns; a hostile server that allows 1 stream
 * still costs at most `http2.maxConnections` connections. Default options throughout.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, Secret } from '../../src/index.ts';
import { DEFAULT_MAX_CONNECTIONS } from '../../src/1-transport/http2/health.ts';
import { DEFAULT_TURN_MS } from '../../src/5-informer/connectionTurns.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { run, waitFor, type Running } from '../resilience/harness/live.ts';

let api: ApiServer | undefined;
const running: { stop(): void }[] = [];
let sampler: ReturnType<typeof setInterval> | undefined;
afterEach(async () => {
  clearInterval(sampler);
  for (const r of running.splice(0)) r.stop();
  await api?.close();
  api = undefined;
});

const namespaces = (n: number) => Array.from({ length: n }, (_, i) => `ns-${i}`);

/** The emulator over HTTP/2 allowing `streams` a connection, a fresh KubeConfig, and the peaks of what it holds open. */
async function serve(streams: number, all: readonly string[]) {
  const server = await startApiServer({ http2: { maxConcurrentStreams: streams }, namespaces: [...all] });
  api = server;
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeConfig.exportConfig());
  const peak = { streams: 0, connections: 0 };
  sampler = setInterval(() => {
    peak.streams = Math.max(peak.streams, server.http2!.openStreams);
    peak.connections = Math.max(peak.connections, server.http2!.openConnections);
  }, 5);
  const start = <T extends ConfigMap | Secret>(r: Running<T>) => (running.push(r), r);
  return { server, kc, peak, start };
}

/** Per-namespace reads (no cluster-wide list, whatever the count), at otherwise default options. */
const perNamespace = (all: readonly string[]) => ({ namespaces: all, maxNamespaceWatches: 10_000 });

const named = (r: Running<ConfigMap>, name: string) =>
  new Set(r.events.filter((e) => e.object.metadata.name === name).map((e) => e.object.metadata.namespace));

describe('the per-namespace fallback over HTTP/2: the stream budget', () => {
  it('820 namespaces, 100 streams a connection (8 × 100 = 800 in the pool): syncs with no error, sees a change in the last namespace, leaves room to others', async () => {
    const all = namespaces(820);
    const { server, kc, peak, start } = await serve(100, all);
    const r = start(run(server, ConfigMap, perNamespace(all), kc));
    await waitFor('sync (or a fault)', () => r.synced() || r.errors.length > 0, 120_000);
    expect(r.errors.map((e) => e.message)).toEqual([]);
    expect(r.synced()).toBe(true);
    // Every namespace listed once: no list failed and was made again.
    expect(new Set(r.lists().map((l) => l.namespace)).size).toBe(820);
    expect(r.lists()).toHaveLength(820);
    // Another informer of the same KubeConfig, not part of the fallback, is not starved by it.
    const other = start(run(server, Secret, {}, kc));
    await waitFor('the other informer to sync', () => other.synced() || other.errors.length > 0, 30_000);
    expect(other.errors.map((e) => e.message)).toEqual([]);
    // A change in the last namespace is seen (in its watch's turn).
    server.create('configmaps', { metadata: { name: 'late', namespace: all.at(-1)! } });
    await waitFor('the change in the last namespace', () => named(r, 'late').has(all.at(-1)), 60_000);
    // Turns were taken (watches shortened to one turn), on the pool's connections. (No request met a full pool: no
    // error above. The server's count of open streams is no exact measure of the turns: a stream the client reset
    // is counted until its close is processed, after the next one's HEADERS.)
    expect(r.watches().some((w) => w.query.timeoutSeconds === String(DEFAULT_TURN_MS / 1000))).toBe(true);
    expect(peak.connections).toBeLessThanOrEqual(DEFAULT_MAX_CONNECTIONS);
    expect(peak.streams).toBeLessThanOrEqual(DEFAULT_MAX_CONNECTIONS * 100);
  }, 240_000);

  it('820 namespaces, 250 streams a connection (everything fits): nothing takes turns, every namespace keeps its one watch', async () => {
    const all = namespaces(820);
    const { server, kc, start } = await serve(250, all);
    const r = start(run(server, ConfigMap, perNamespace(all), kc));
    await waitFor('sync (or a fault)', () => r.synced() || r.errors.length > 0, 120_000);
    expect(r.errors.map((e) => e.message)).toEqual([]);
    server.create('configmaps', { metadata: { name: 'late', namespace: all.at(-1)! } });
    await waitFor('the change in the last namespace', () => named(r, 'late').has(all.at(-1)), 60_000);
    const watches = r.watches();
    // One watch per namespace, none shortened to a turn and none ended: no turns.
    expect(watches).toHaveLength(820);
    expect(new Set(watches.map((w) => w.namespace)).size).toBe(820);
    expect(watches.filter((w) => w.query.timeoutSeconds === String(DEFAULT_TURN_MS / 1000))).toEqual([]);
    expect(server.activeWatches).toBe(820);
  }, 240_000);

  it('a hostile server allowing 1 stream a connection: at most http2.maxConnections connections, and every namespace is synced and watched in turn', async () => {
    const all = namespaces(20);
    const { server, kc, peak, start } = await serve(1, all);
    const r = start(run(server, ConfigMap, perNamespace(all), kc));
    await waitFor('sync', () => r.synced(), 120_000);
    // Before the server's SETTINGS are known, requests may find every connection full: a ProtocolError, retried.
    expect(r.errors.filter((e) => e.reason !== 'ProtocolError').map((e) => e.message)).toEqual([]);
    for (const ns of all) server.create('configmaps', { metadata: { name: 'late', namespace: ns } });
    await waitFor('a change in every namespace', () => named(r, 'late').size === all.length, 120_000);
    expect(peak.connections).toBeLessThanOrEqual(DEFAULT_MAX_CONNECTIONS);
  }, 240_000);
});
