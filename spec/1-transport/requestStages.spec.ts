/**
 * The request shell's stages over HTTP/1.1 alone (`protocol: 'http1'`): its own socket's TLS handshake is the stage a
 * timer names, which `auto` never shows (its TLS is HTTP/2's connection, ALPN, in timeouts.spec.ts). The rules are
 * requestStep.spec.ts's rows; this is the shell feeding them from a real socket, at the default requestTimeoutMs.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, InformerError } from '../../src/index.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { until } from '../resilience/realClock.ts';

/** A TCP server on 127.0.0.1 that accepts connections and never answers: a TLS client's handshake never ends. */
let server: Server | undefined;
const sockets = new Set<Socket>();
let received = 0;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(async () => {
  vi.useRealTimers();
  for (const socket of sockets) socket.destroy();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
  received = 0;
});

async function silent(): Promise<number> {
  const started = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => started.listen(0, '127.0.0.1', resolve));
  server = started;
  return (started.address() as { port: number }).port;
}

function kubeConfig(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

describe('an HTTP/1.1 request over TLS', () => {
  it('a server that never ends the handshake: the default 30 s timer names the TLS handshake, unreachable', async () => {
    const port = await silent();
    // tlsHandshakeTimeoutMs 0: the handshake is left to requestTimeoutMs (its own 10 s bound would fire first).
    const lw = httpListWatch(
      kubeConfig(`https://127.0.0.1:${port}`),
      { resource: ConfigMap },
      { protocol: 'http1', tlsHandshakeTimeoutMs: 0 },
    );
    let error: unknown;
    lw.list({}).subscribe({ error: (e: unknown) => (error = e) });
    await until('the ClientHello', () => received > 0);
    vi.advanceTimersByTime(29_999);
    expect(error).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(error).toBeInstanceOf(InformerError);
    const failed = error as InformerError;
    expect([failed.reason, failed.message, failed.unreachable]).toEqual([
      'Timeout',
      'list /api/v1/configmaps: no response headers within 30000 ms (waiting for: TLS handshake)',
      true,
    ]);
    await until('the connection to be closed', () => sockets.size === 0);
  });
});
