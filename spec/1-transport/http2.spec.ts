/**
 * The HTTP/2 transport against the emulator's HTTP/2 mode (TLS, ALPN h2 and
 * http/1.1): every informer of a process on one connection, GOAWAY handled,
 * HTTP/1.1-only servers still served, and unsubscribing frees the stream and
 * the PING timers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, toArray, take } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, informerFactory, type InformerError } from '../../src/index.ts';
import { getJson, httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { http2Connections } from '../../src/1-transport/http2/pool.ts';
import { httpLeaseClients } from '../../src/leaderelection/httpLeaseClient.ts';
import {
  startApiServer,
  TEST_TLS_CERT,
  TEST_TLS_CERT_B,
  TEST_TLS_CERT_C,
  TEST_TLS_KEY,
  TEST_TLS_KEY_B,
  type ApiServer,
} from 'rx-informer-emulator';
import { contents, waitFor } from '../resilience/harness/live.ts';

let api: ApiServer | undefined;
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await api?.close();
  api = undefined;
});

const cm = (namespace: string, name: string, data: Record<string, string> = {}) => ({ metadata: { name, namespace }, data });
const NAMESPACES = Array.from({ length: 10 }, (_, i) => `ns${i}`);

/** The emulator's KubeConfig copied, so that each test has its own connections. */
function freshKubeConfig(server: ApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeConfig.exportConfig());
  return kc;
}

/** Ten informers of one factory (one per namespace), with their errors. */
function tenInformers(kc: KubeConfig) {
  const factory = informerFactory(kc, { backoff: { initialMs: 10, maxMs: 50 } });
  const errors: InformerError[] = [];
  const informers = NAMESPACES.map((namespace) => factory.informer(ConfigMap, { namespace }));
  for (const i of informers) {
    const subscription = i.errors$.subscribe((e) => errors.push(e));
    const store = i.store$.subscribe();
    stops.push(
      () => subscription.unsubscribe(),
      () => store.unsubscribe(),
    );
  }
  /** Whether every informer's cache equals the server's. */
  const converged = async () => {
    for (const [n, i] of informers.entries()) {
      const store = await firstValueFrom(i.store$);
      const want = contents({ list: () => api!.list('configmaps', NAMESPACES[n]) } as never);
      if (JSON.stringify(contents(store as never)) !== JSON.stringify(want)) return false;
    }
    return true;
  };
  return { factory, informers, errors, converged };
}

async function waitConverged(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('HTTP/2: one connection for every request of a process', () => {
  it('a factory of 10 informers lists and watches over one TCP connection (HTTP/2 streams)', async () => {
    api = await startApiServer({ http2: true, namespaces: NAMESPACES });
    for (const ns of NAMESPACES) api.create('configmaps', cm(ns, 'before'));
    const kc = freshKubeConfig(api);
    const { factory, errors, converged } = tenInformers(kc);
    await factory.waitForCacheSync(undefined, { timeoutMs: 10_000 });
    await waitFor('ten watches', () => api!.activeWatches === 10);
    for (const ns of NAMESPACES) api.create('configmaps', cm(ns, 'after'));
    await waitConverged(converged, 'every informer to see the writes');
    expect(api.acceptedConnections).toBe(1);
    expect(api.http2!.sessions).toBe(1);
    expect(api.http2!.openStreams).toBe(10);
    expect(api.http2!.streams).toBeGreaterThanOrEqual(20); // ten lists and ten watches
    expect(errors).toEqual([]);
    // Discovery goes on the same connection.
    await firstValueFrom(getJson(kc, '/api'));
    expect(api.acceptedConnections).toBe(1);
    // Unsubscribing every informer resets every stream and stops the connection's PING timers.
    for (const stop of stops.splice(0)) stop();
    await waitFor('every stream to close', () => api!.http2!.openStreams === 0 && api!.activeWatches === 0);
    const [connection] = http2Connections(kc);
    expect(connection!.active).toBe(0);
    expect(connection!.health!.timers).toBe(0);
  });

  it("Lease requests (leader election) share the informers' connection", async () => {
    api = await startApiServer({ http2: true });
    const kc = freshKubeConfig(api);
    const watch = httpListWatch(kc, { resource: ConfigMap }).watch({}).subscribe();
    stops.push(() => watch.unsubscribe());
    await waitFor('the watch', () => api!.activeWatches === 1);
    const lease = httpLeaseClients(kc, { namespace: 'default' }).lease('leader');
    expect(await firstValueFrom(lease.get())).toBeNull();
    const record = { holderIdentity: 'me', leaseDurationSeconds: 15, leaseTransitions: 0 };
    const created = await firstValueFrom(lease.create(record));
    expect(created.record.holderIdentity).toBe('me');
    const updated = await firstValueFrom(lease.update(created.resourceVersion, { ...record, holderIdentity: 'you' }));
    expect(updated.record.holderIdentity).toBe('you');
    expect(api.acceptedConnections).toBe(1);
    expect(api.http2!.streams).toBe(4);
  });

  it("a second connection opens only when the server's SETTINGS_MAX_CONCURRENT_STREAMS is reached", async () => {
    api = await startApiServer({ http2: { maxConcurrentStreams: 3 } });
    const kc = freshKubeConfig(api);
    const lw = httpListWatch(kc, { resource: ConfigMap });
    // Five watches asked for at once, before the server's SETTINGS are known.
    const subscriptions = Array.from({ length: 5 }, () => lw.watch({}).subscribe());
    stops.push(() => subscriptions.forEach((s) => s.unsubscribe()));
    await waitFor('five watches', () => api!.activeWatches === 5);
    expect(api.acceptedConnections).toBe(2);
    expect(
      http2Connections(kc)
        .map((c) => c.active)
        .sort(),
    ).toEqual([2, 3]);
    // A sixth fits on the second connection.
    subscriptions.push(lw.watch({}).subscribe());
    await waitFor('six watches', () => api!.activeWatches === 6);
    expect(api.acceptedConnections).toBe(2);
  });

  it('http1 forces HTTP/1.1 on the same server: one connection per watch', async () => {
    api = await startApiServer({ http2: true });
    const kc = freshKubeConfig(api);
    const subscriptions = [0, 1].map(() => httpListWatch(kc, { resource: ConfigMap }, { protocol: 'http1' }).watch({}).subscribe());
    stops.push(() => subscriptions.forEach((s) => s.unsubscribe()));
    await waitFor('two watches', () => api!.activeWatches === 2);
    expect(api.acceptedConnections).toBe(2);
    expect(api.http2!.sessions).toBe(0);
  });

  it('a server without HTTP/2 is served over HTTP/1.1, on the connection that asked (no extra one)', async () => {
    api = await startApiServer({ tls: true });
    const kc = freshKubeConfig(api);
    const lw = httpListWatch(kc, { resource: ConfigMap });
    api.create('configmaps', cm('default', 'a'));
    for (let i = 0; i < 3; i++) expect((await firstValueFrom(lw.list({}))).items).toHaveLength(1);
    const frames = firstValueFrom(lw.watch({ resourceVersion: '1' }).pipe(take(1)));
    expect((await frames) as { type: string }).toMatchObject({ type: 'ADDED' });
    expect(api.acceptedConnections).toBe(1);
    expect(http2Connections(kc)).toEqual([]);
  });

  it('h2 forced against a server without HTTP/2: a NetworkError that says so', async () => {
    api = await startApiServer({ tls: true });
    const lw = httpListWatch(freshKubeConfig(api), { resource: ConfigMap }, { protocol: 'h2' });
    const error = await firstValueFrom(lw.list({})).catch((e: unknown) => e as InformerError);
    expect(error).toMatchObject({ reason: 'NetworkError', phase: 'list' });
    expect((error as InformerError).message).toMatch(/does not offer HTTP\/2/);
  });

  it('GOAWAY mid-watch: watches in flight carry on, new requests open a new connection, nothing is lost', async () => {
    api = await startApiServer({ http2: true, namespaces: NAMESPACES });
    const kc = freshKubeConfig(api);
    const { factory, errors, converged } = tenInformers(kc);
    await factory.waitForCacheSync(undefined, { timeoutMs: 10_000 });
    await waitFor('ten watches', () => api!.activeWatches === 10);
    expect(api.http2!.goaway()).toBe(1);
    for (const ns of NAMESPACES) api.create('configmaps', cm(ns, 'during'));
    await waitConverged(converged, 'the events sent on the old connection');
    // A request after the GOAWAY goes to a new connection.
    await firstValueFrom(getJson(kc, '/api'));
    await waitFor('a second connection', () => api!.http2!.sessions === 2);
    // The server ends the old watches: each informer watches again on the new connection.
    api.closeWatches();
    for (const ns of NAMESPACES) api.create('configmaps', cm(ns, 'after'));
    await waitConverged(converged, 'every informer on the new connection');
    await waitFor('the old connection to close', () => api!.openConnections === 1);
    expect(api.http2!.sessions).toBe(2);
    expect(errors.filter((e) => e.reason !== 'VeryShortWatch')).toEqual([]);
  });

  it('a stream reset by the server (dropWatch) fails only that watch, not the connection', async () => {
    api = await startApiServer({ http2: true });
    const kc = freshKubeConfig(api);
    const lw = httpListWatch(kc, { resource: ConfigMap });
    api.faults.add({ match: { watch: true }, fault: { type: 'dropWatch', afterEvents: 1 }, times: 1 });
    const failed = new Promise<unknown>((resolve) => lw.watch({ resourceVersion: '1' }).subscribe({ error: resolve }));
    await waitFor('the watch that will fail', () => api!.activeWatches === 1);
    const otherErrors: unknown[] = [];
    const other = lw.watch({ resourceVersion: '1' }).subscribe({ error: (e: unknown) => otherErrors.push(e) });
    stops.push(() => other.unsubscribe());
    await waitFor('two watches', () => api!.activeWatches === 2);
    api.create('configmaps', cm('default', 'a'));
    expect(await failed).toMatchObject({ reason: 'NetworkError', phase: 'watch' });
    expect(api.acceptedConnections).toBe(1);
    expect(api.http2!.openStreams).toBe(1);
    expect(otherErrors).toEqual([]);
  });

  it('RST_STREAM NO_ERROR before END_STREAM is a reset like any other (as Go reads it): a NetworkError naming it, not a clean end', async () => {
    api = await startApiServer({ http2: true });
    const kc = freshKubeConfig(api);
    const lw = httpListWatch(kc, { resource: ConfigMap });
    api.faults.add({ match: { watch: true }, fault: { type: 'dropWatch', afterEvents: 1, http2Code: 'NO_ERROR' }, times: 1 });
    const frames: unknown[] = [];
    const outcome = new Promise<unknown>((resolve) =>
      lw.watch({ resourceVersion: '1' }).subscribe({ next: (f) => frames.push(f), error: resolve, complete: () => resolve('a clean end') }),
    );
    await waitFor('the watch', () => api!.activeWatches === 1);
    api.create('configmaps', cm('default', 'a'));
    const error = (await outcome) as InformerError;
    expect(frames).toMatchObject([{ type: 'ADDED', object: { metadata: { name: 'a' } } }]);
    expect(error).toMatchObject({ reason: 'NetworkError', phase: 'watch', unreachable: false });
    expect(error.message).toBe(
      'watch /api/v1/configmaps: the API server reset the HTTP/2 stream with NO_ERROR (error code 0) before the end of the response',
    );
    // Only the stream: the connection carries on.
    expect(api.acceptedConnections).toBe(1);
  });

  it('an informer (default options) recovers from RST_STREAM NO_ERROR before END_STREAM exactly as from INTERNAL_ERROR', async () => {
    /** Three watches reset after their first event each, then none: the requests the informer made, and its errors. */
    const run = async (http2Code: 'NO_ERROR' | 'INTERNAL_ERROR') => {
      api = await startApiServer({ http2: true });
      api.faults.add({ match: { watch: true }, fault: { type: 'dropWatch', afterEvents: 1, http2Code }, times: 3 });
      const informer = informerFactory(freshKubeConfig(api)).informer(ConfigMap, { namespace: 'default' });
      const errors: InformerError[] = [];
      let names: string[] = [];
      const subscription = informer.errors$.subscribe((e) => errors.push(e));
      subscription.add(informer.store$.subscribe((store) => (names = [...store.keys()].sort())));
      try {
        await waitFor('the first watch', () => api!.activeWatches === 1);
        for (const name of ['a', 'b', 'c', 'd']) {
          const watches = api.requests.filter((r) => r.watch).length;
          api.create('configmaps', cm('default', name));
          await waitFor(`${name} in the cache`, () => names.includes(`default/${name}`));
          // The next change once a watch is open again (a reset watch is followed by another).
          if (name !== 'd')
            await waitFor('the next watch', () => api!.activeWatches === 1 && api!.requests.filter((r) => r.watch).length > watches);
        }
      } finally {
        subscription.unsubscribe();
      }
      const requests = api.requests.filter((r) => r.resource === 'configmaps').map((r) => (r.watch ? 'watch' : 'list'));
      await api.close();
      api = undefined;
      return { requests, errors: errors.map((e) => `${e.reason} ${e.phase}`) };
    };
    const reset = await run('INTERNAL_ERROR');
    // Resumed twice at once (each watch had progressed), then, the third broken resume, a relist.
    expect(reset).toEqual({
      requests: ['list', 'watch', 'watch', 'watch', 'list', 'watch'],
      errors: ['NetworkError watch', 'NetworkError watch', 'NetworkError watch'],
    });
    expect(await run('NO_ERROR')).toEqual(reset);
  });

  it('a connection the server drops mid-watch is a NetworkError (as over HTTP/1.1), not a clean end', async () => {
    api = await startApiServer({ http2: true });
    const kc = freshKubeConfig(api);
    const lw = httpListWatch(kc, { resource: ConfigMap });
    const outcome = new Promise<unknown>((resolve) =>
      lw.watch({ resourceVersion: '1' }).subscribe({ error: resolve, complete: () => resolve('a clean end') }),
    );
    await waitFor('the watch', () => api!.activeWatches === 1);
    await api.down(); // the connection closed under the stream: no END_STREAM, no RST_STREAM
    const error = (await outcome) as InformerError;
    expect(error).toMatchObject({ reason: 'NetworkError', phase: 'watch', unreachable: false });
    expect(error.message).toMatch(/closed mid-stream/);
  });

  it('a watch the server ends (END_STREAM, as at its timeout) is a clean end, also after a GOAWAY NO_ERROR', async () => {
    api = await startApiServer({ http2: true });
    const kc = freshKubeConfig(api);
    const lw = httpListWatch(kc, { resource: ConfigMap });
    const watchOnce = () =>
      new Promise<unknown>((resolve) =>
        lw.watch({ resourceVersion: '1' }).subscribe({ error: resolve, complete: () => resolve('a clean end') }),
      );
    for (const goaway of [false, true]) {
      const ended = watchOnce();
      await waitFor('the watch', () => api!.activeWatches === 1);
      // Graceful: the stream in flight carries on until the server ends it.
      if (goaway) expect(api.http2!.goaway()).toBe(1);
      expect(api.closeWatches()).toBe(1);
      await expect(ended).resolves.toBe('a clean end');
    }
  });

  it('unsubscribing the last subscriber resets the stream and stops the PING timers', async () => {
    api = await startApiServer({ http2: true });
    const kc = freshKubeConfig(api);
    const subscription = httpListWatch(kc, { resource: ConfigMap }).watch({}).subscribe();
    await waitFor('the watch', () => api!.activeWatches === 1);
    const [connection] = http2Connections(kc);
    expect(connection!.health!.timers).toBe(1);
    subscription.unsubscribe();
    await waitFor('the stream to close on the server', () => api!.http2!.openStreams === 0 && api!.activeWatches === 0);
    expect(connection!.health!.timers).toBe(0);
    expect(api.openConnections).toBe(1); // the connection stays for the next request
    const frames = await firstValueFrom(httpListWatch(kc, { resource: ConfigMap }).list({}).pipe(toArray()));
    expect(frames).toHaveLength(1);
    expect(api.acceptedConnections).toBe(1);
  });
});

describe('HTTP/2 streams refused unprocessed', () => {
  it('a stream the server refuses (REFUSED_STREAM, as after a GOAWAY) is sent again, and the request succeeds', async () => {
    let streams = 0;
    const server = http2.createSecureServer({ cert: TEST_TLS_CERT, key: TEST_TLS_KEY });
    server.on('stream', (stream) => {
      stream.on('error', () => undefined); // the refused one
      if (++streams === 1) return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify({ kind: 'APIVersions', versions: ['v1'] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(() => server.close());
    const kc = new KubeConfig();
    const port = (server.address() as { port: number }).port;
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(TEST_TLS_CERT).toString('base64') }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    expect(await firstValueFrom(getJson(kc, '/api'))).toEqual({ kind: 'APIVersions', versions: ['v1'] });
    expect(streams).toBe(2);
    for (const connection of http2Connections(kc)) connection.session?.destroy();
  });
});

describe('HTTP/2 streams refused unprocessed, every time', () => {
  it('a request is sent at most three times (once, then twice again on other connections), then fails', async () => {
    let streams = 0;
    const server = http2.createSecureServer({ cert: TEST_TLS_CERT, key: TEST_TLS_KEY });
    server.on('stream', (stream) => {
      stream.on('error', () => undefined);
      streams++;
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(() => server.close());
    const kc = new KubeConfig();
    const port = (server.address() as { port: number }).port;
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(TEST_TLS_CERT).toString('base64') }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const outcome = await firstValueFrom(getJson(kc, '/api')).then(
      () => 'answered',
      (error: InformerError) => error.reason,
    );
    expect([outcome, streams]).toEqual(['NetworkError', 3]);
    for (const connection of http2Connections(kc)) connection.session?.destroy();
  });
});

describe('h2c', () => {
  it("protocol 'h2' over http: speaks HTTP/2 with prior knowledge; 'auto' there stays on HTTP/1.1", async () => {
    const seen: string[] = [];
    const server = http2.createServer();
    server.on('stream', (stream, headers) => {
      seen.push(`${String(headers[':method'])} ${String(headers[':path'])} ${String(headers['user-agent'])}`);
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify({ kind: 'APIVersions', versions: ['v1'] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(() => server.close());
    const kc = new KubeConfig();
    const port = (server.address() as { port: number }).port;
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    expect(await firstValueFrom(getJson(kc, '/api', { protocol: 'h2', userAgent: 'h2c-test' }))).toMatchObject({ kind: 'APIVersions' });
    expect(seen).toEqual(['GET /api h2c-test']);
    // An h2c-only server cannot answer HTTP/1.1: `auto` does not ask for HTTP/2 over plain http.
    const error = await firstValueFrom(getJson(kc, '/api', { requestTimeoutMs: 2_000 })).catch((e: unknown) => e as InformerError);
    expect(error).toBeInstanceOf(Error);
    expect(seen).toHaveLength(1);
    for (const connection of http2Connections(kc)) connection.session?.destroy();
  });
});

describe('HTTP/2 and TLS material', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('client certificates: one connection per digest of the material; a rotated CA file moves new requests, the old watch carries on', async () => {
    api = await startApiServer({ http2: true, tls: { cert: TEST_TLS_CERT, key: TEST_TLS_KEY, clientCa: TEST_TLS_CERT_B } });
    dir = mkdtempSync(join(tmpdir(), 'rx-informer-h2-'));
    const [caFile, certFile, keyFile] = ['ca.crt', 'client.crt', 'client.key'].map((name) => join(dir!, name)) as [string, string, string];
    writeFileSync(caFile, TEST_TLS_CERT);
    writeFileSync(certFile, TEST_TLS_CERT_B);
    writeFileSync(keyFile, TEST_TLS_KEY_B);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'emulator', server: api.url, caFile }],
      users: [{ name: 'someone', certFile, keyFile }],
      contexts: [{ name: 'emulator', cluster: 'emulator', user: 'someone' }],
      currentContext: 'emulator',
    });
    const lw = httpListWatch(kc, { resource: ConfigMap });
    const frames: unknown[] = [];
    let ended = false;
    const watch = lw
      .watch({ resourceVersion: api.resourceVersion })
      .subscribe({ next: (f) => frames.push(f), complete: () => (ended = true) });
    stops.push(() => watch.unsubscribe());
    await waitFor('the watch', () => api!.activeWatches === 1);
    for (let i = 0; i < 3; i++) await firstValueFrom(lw.list({}));
    expect(api.acceptedConnections).toBe(1);
    expect(api.http2!.sessions).toBe(1);

    writeFileSync(caFile, TEST_TLS_CERT + TEST_TLS_CERT_C); // still trusts the server, but other bytes
    await firstValueFrom(lw.list({}));
    expect(api.acceptedConnections).toBe(2);
    api.create('configmaps', cm('default', 'a'));
    await waitFor('the event on the old connection', () => frames.length === 1);
    api.closeWatches();
    await waitFor('the watch to end', () => ended);
    await waitFor('the retired connection to close', () => api!.openConnections === 1);
  });
});

describe('HTTP/2 keeps the HTTP/1.1 guarantees', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a status answer is an InformerError with its Status and a capped Retry-After', async () => {
    api = await startApiServer({ http2: true });
    api.faults.add({ match: { watch: false }, fault: { type: 'status', code: 429, retryAfterSeconds: 86_400 }, times: 1 });
    const lw = httpListWatch(freshKubeConfig(api), { resource: ConfigMap });
    const error = await firstValueFrom(lw.list({})).catch((e: unknown) => e as InformerError);
    expect(error).toMatchObject({ reason: 'TooManyRequests', status: 429, phase: 'list', retryAfterSeconds: 300 });
    expect((await firstValueFrom(lw.list({}))).items).toEqual([]);
    expect(api.http2!.sessions).toBe(1);
  });

  it('the pre-header bound holds at its default (30 s, in virtual time): Timeout waiting for response headers', async () => {
    api = await startApiServer({ http2: true });
    const kc = freshKubeConfig(api);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    api.faults.add({ match: { watch: false }, fault: { type: 'delay', ms: 120_000 }, times: 1 });
    let error: InformerError | undefined;
    httpListWatch(kc, { resource: ConfigMap })
      .list({})
      .subscribe({ error: (e: InformerError) => (error = e) });
    const deadline = performance.now() + 10_000;
    while (api.http2!.streams === 0 && performance.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    await vi.advanceTimersByTimeAsync(29_999);
    expect(error).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(error).toMatchObject({ reason: 'Timeout', phase: 'list' });
    expect(error!.message).toMatch(/within 30000 ms \(waiting for: response headers\)/);
    vi.useRealTimers();
    await waitFor('the stream to be reset', () => api!.http2!.openStreams === 0);
    expect(api.openConnections).toBe(1);
  });
});
