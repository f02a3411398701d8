/**
 * How many HTTP/2 connections a server can make a process hold (src/1-transport/http2/pool.ts, connection.ts), at
 * the default options, in virtual time (vi fake timers drive the client's and the emulator's timers; sockets stay
 * real):
 *
 * - a connection that carries no stream for 90 s (client-go's `IdleConnTimeout`) is closed, a KubeConfig made per
 *   call included;
 * - a server whose SETTINGS allow 0 streams costs one connection per request, closed at once, and the request fails
 *   as a `ProtocolError` (was: 9 connections per request, each kept open for good);
 * - at most `http2.maxConnections` (8) are open per pool slot: a request that finds all full fails as a
 *   `ProtocolError` instead of dialing a 9th.
 */
import { asyncScheduler, firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, type InformerError } from '../../src/index.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { DEFAULT_IDLE_CONNECTION_MS, DEFAULT_MAX_CONNECTIONS } from '../../src/1-transport/http2/health.ts';
import { http2Connections } from '../../src/1-transport/http2/pool.ts';
import { http2StreamCapacity } from '../../src/1-transport/http/agents.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { waitReal } from '../support/realIo.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  vi.useRealTimers();
  await api?.close();
  api = undefined;
});

/** One list of ConfigMaps with `kc`, awaited with real I/O while virtual time stands still: its error, if any. */
async function listOnce(kc: KubeConfig): Promise<InformerError | undefined> {
  let outcome: { error?: InformerError } | undefined;
  void firstValueFrom(httpListWatch(kc, { resource: ConfigMap, namespace: 'default' }, { protocol: 'h2' }).list({})).then(
    () => (outcome = {}),
    (error: unknown) => (outcome = { error: error as InformerError }),
  );
  await waitReal('the list', () => outcome !== undefined);
  return outcome?.error;
}

async function start(http2: true | { maxConcurrentStreams: number }) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  api = await startApiServer({ http2 });
  const kc = new KubeConfig();
  kc.loadFromString(api.kubeConfig.exportConfig());
  return { api, kc, h2: api.http2! };
}

describe('idle HTTP/2 connections', () => {
  it("are closed after 90 s without a stream (client-go's IdleConnTimeout); a request meanwhile keeps the connection and restarts the wait", async () => {
    expect(DEFAULT_IDLE_CONNECTION_MS).toBe(90_000);
    const { api, kc, h2 } = await start(true);
    expect(await listOnce(kc)).toBeUndefined();
    const [connection] = http2Connections(kc);
    expect(connection).toBeDefined();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await listOnce(kc)).toBeUndefined(); // the same connection, idle again from now
    expect([http2Connections(kc), h2.acceptedConnections]).toEqual([[connection], 1]);
    await vi.advanceTimersByTimeAsync(DEFAULT_IDLE_CONNECTION_MS - 1);
    expect(http2Connections(kc)).toEqual([connection]);
    await vi.advanceTimersByTimeAsync(1);
    expect(http2Connections(kc)).toEqual([]);
    await waitReal('the server to see the connection closed', () => h2.openConnections === 0);
  });

  it('a KubeConfig made per call holds its connection only until it has been idle 90 s', async () => {
    const { api, h2 } = await start(true);
    for (let i = 0; i < 5; i++) {
      const kc = new KubeConfig();
      kc.loadFromString(api.kubeConfig.exportConfig());
      expect(await listOnce(kc)).toBeUndefined();
    }
    expect(h2.openConnections).toBe(5);
    await vi.advanceTimersByTimeAsync(DEFAULT_IDLE_CONNECTION_MS);
    await waitReal('the server to see every connection closed', () => h2.openConnections === 0);
  });
});

describe('a server that allows too few streams', () => {
  it('SETTINGS_MAX_CONCURRENT_STREAMS 0 is a ProtocolError of that connection: one connection per request, closed at once', async () => {
    const { api, kc, h2 } = await start({ maxConcurrentStreams: 0 });
    for (let i = 1; i <= 3; i++) {
      const error = await listOnce(kc);
      expect([error?.reason, error?.message]).toEqual([
        'ProtocolError',
        'list /api/v1/namespaces/default/configmaps: the API server allows no HTTP/2 stream on a new connection (SETTINGS_MAX_CONCURRENT_STREAMS 0); the connection was closed',
      ]);
      expect(h2.acceptedConnections).toBe(i);
      expect(http2Connections(kc)).toEqual([]);
    }
    await waitReal('the server to see every connection closed', () => h2.openConnections === 0);
  });

  it(`at most ${DEFAULT_MAX_CONNECTIONS} connections per server and KubeConfig: a request that finds them all full fails, it dials no more`, async () => {
    const { api, kc, h2 } = await start({ maxConcurrentStreams: 1 });
    const lw = httpListWatch(kc, { resource: ConfigMap, namespace: 'default' }, { protocol: 'h2' });
    const errors: InformerError[] = [];
    // Watches hold their stream: one per connection at this server's limit.
    for (let i = 0; i < DEFAULT_MAX_CONNECTIONS; i++) {
      subscriptions.push(lw.watch({ resourceVersion: '1' }).subscribe({ error: (e: InformerError) => errors.push(e) }));
      await waitReal(`watch ${i + 1}`, () => api.activeWatches === i + 1);
    }
    expect([h2.acceptedConnections, errors]).toEqual([DEFAULT_MAX_CONNECTIONS, []]);
    const error = await listOnce(kc);
    expect(error?.reason).toBe('ProtocolError');
    expect(error?.message).toContain(`every HTTP/2 connection to the API server is full (${DEFAULT_MAX_CONNECTIONS} open`);
    expect(h2.acceptedConnections).toBe(DEFAULT_MAX_CONNECTIONS);
    // One stream ends: its connection takes the next request.
    subscriptions.shift()?.unsubscribe();
    await waitReal('the watch to end', () => api.activeWatches === DEFAULT_MAX_CONNECTIONS - 1);
    expect(await listOnce(kc)).toBeUndefined();
    expect(h2.acceptedConnections).toBe(DEFAULT_MAX_CONNECTIONS);
  });
});

describe('the streams a pool slot carries (what the per-namespace fallback takes turns within)', () => {
  it("http2.maxConnections × the server's SETTINGS_MAX_CONCURRENT_STREAMS: 100 assumed until it says, then what it said", async () => {
    const { kc } = await start({ maxConcurrentStreams: 3 });
    expect(http2StreamCapacity(kc)).toBe(DEFAULT_MAX_CONNECTIONS * 100);
    expect(await listOnce(kc)).toBeUndefined();
    expect(http2StreamCapacity(kc)).toBe(DEFAULT_MAX_CONNECTIONS * 3);
    expect(http2StreamCapacity(kc, { maxConnections: 2 })).toBe(6);
    // Its connection closed (idle): what the server said last still counts.
    await vi.advanceTimersByTimeAsync(DEFAULT_IDLE_CONNECTION_MS);
    expect(http2Connections(kc)).toEqual([]);
    expect(http2StreamCapacity(kc)).toBe(DEFAULT_MAX_CONNECTIONS * 3);
  });
});

describe('the idle close keeps no process alive', () => {
  it("also when asyncScheduler is given as http2.scheduler (the default clock): an unref'd Node timer, not a scheduled action", async () => {
    api = await startApiServer({ http2: true });
    const kc = new KubeConfig();
    kc.loadFromString(api.kubeConfig.exportConfig());
    const timers: { ms: number | undefined; timer: NodeJS.Timeout }[] = [];
    const real = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      const timer = real(fn, ms);
      timers.push({ ms, timer });
      return timer;
    }) as typeof setTimeout);
    try {
      const error = await firstValueFrom(
        httpListWatch(kc, { resource: ConfigMap, namespace: 'default' }, { protocol: 'h2', http2: { scheduler: asyncScheduler } }).list({}),
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeUndefined();
      await waitReal('the connection to be idle', () => timers.some((t) => t.ms === DEFAULT_IDLE_CONNECTION_MS));
      const idle = timers.filter((t) => t.ms === DEFAULT_IDLE_CONNECTION_MS);
      expect(idle.map((t) => t.timer.hasRef())).toEqual([false]);
    } finally {
      spy.mockRestore();
      for (const connection of http2Connections(kc)) connection.retire();
    }
  });
});
