/**
 * Idle HTTP/1.1 keep-alive connections (src/1-transport/http/agents.ts), at the default options, in virtual time
 * (vi fake timers drive the client's timers; sockets stay real): a pooled connection that carries no request for
 * 90 s (client-go's `IdleConnTimeout`, as `http2.idleTimeoutMs`) is closed, a KubeConfig made per call included.
 */
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, type InformerError } from '../../src/index.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { DEFAULT_IDLE_CONNECTION_MS } from '../../src/1-transport/http2/health.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { io, waitReal } from '../support/realIo.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await api?.close();
  api = undefined;
});

/** One list of ConfigMaps with `kc` over HTTP/1.1, awaited with real I/O while virtual time stands still: its error, if any. */
async function listOnce(kc: KubeConfig): Promise<InformerError | undefined> {
  let outcome: { error?: InformerError } | undefined;
  void firstValueFrom(httpListWatch(kc, { resource: ConfigMap, namespace: 'default' }).list({})).then(
    () => (outcome = {}),
    (error: unknown) => (outcome = { error: error as InformerError }),
  );
  await waitReal('the list', () => outcome !== undefined);
  return outcome?.error;
}

async function start() {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  // A server that keeps idle connections open for good (Node's server closes them after 5 s of real time).
  api = await startApiServer({ keepAliveTimeoutMs: 0 });
  expect(api.kubeConfig.getCurrentCluster()?.server).toMatch(/^http:\/\/127\.0\.0\.1:/);
  return api;
}

function kubeConfigOf(server: ApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeConfig.exportConfig());
  return kc;
}

describe('idle HTTP/1.1 keep-alive connections', () => {
  it("are closed after 90 s without a request (client-go's IdleConnTimeout); a request meanwhile reuses the connection and restarts the wait", async () => {
    expect(DEFAULT_IDLE_CONNECTION_MS).toBe(90_000);
    const server = await start();
    const kc = kubeConfigOf(server);
    expect(await listOnce(kc)).toBeUndefined();
    await io();
    expect([server.openConnections, server.acceptedConnections]).toEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await listOnce(kc)).toBeUndefined(); // the same connection, idle again from now
    await io();
    expect([server.openConnections, server.acceptedConnections]).toEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(DEFAULT_IDLE_CONNECTION_MS - 1);
    await io();
    expect(server.openConnections).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await waitReal('the server to see the connection closed', () => server.openConnections === 0);
  });

  it('a KubeConfig made per call holds its connection only until it has been idle 90 s', async () => {
    const server = await start();
    for (let i = 0; i < 5; i++) expect(await listOnce(kubeConfigOf(server))).toBeUndefined();
    await io();
    expect(server.openConnections).toBe(5);
    await vi.advanceTimersByTimeAsync(DEFAULT_IDLE_CONNECTION_MS);
    await waitReal('the server to see every connection closed', () => server.openConnections === 0);
  });
});
