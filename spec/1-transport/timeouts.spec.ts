/**
 * Everything before a response's headers is bounded (issue #13): obtaining
 * credentials (a hung exec plugin), the TLS handshake and waiting for the
 * headers, reported as a `Timeout` saying what was awaited. Sockets are real
 * (127.0.0.1); only `setTimeout` is faked, so no test depends on the machine's speed.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, type Observable } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, InformerError } from '../../src/index.ts';
import { discover } from '../../src/discovery/discovery.ts';
import {
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS,
  getJson,
  httpListWatch,
  type HttpTransportOptions,
} from '../../src/1-transport/httpTransport.ts';
import { http2Connections } from '../../src/1-transport/http2/pool.ts';
import { EXEC_RUN_TIMEOUT_MS } from '../../src/1-transport/http/execAuth.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { realSleep, until } from '../resilience/realClock.ts';

/** A TCP server on 127.0.0.1 that accepts connections, reads what is sent, and never answers. */
class Silent {
  readonly sockets = new Set<Socket>();
  received = 0;
  readonly server: Server;
  private constructor(server: Server) {
    this.server = server;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('data', (chunk: Buffer) => (this.received += chunk.length));
      socket.on('error', () => undefined);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }
  static async start(): Promise<Silent> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new Silent(server);
  }
  get port(): number {
    return (this.server.address() as { port: number }).port;
  }
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * A TCP relay on 127.0.0.1 to `upstream` that holds what each client sends (its ClientHello) until `release()`:
 * a handshake as slow as the test makes it, over real sockets.
 */
class Relay {
  readonly server: Server;
  readonly sockets = new Set<Socket>();
  /** Bytes held from clients, and bytes the upstream sent back. */
  held = 0;
  answered = 0;
  private readonly waiting: (() => void)[] = [];
  private constructor(server: Server, upstream: number) {
    this.server = server;
    server.on('connection', (client) => {
      this.sockets.add(client);
      client.on('error', () => undefined);
      client.on('close', () => this.sockets.delete(client));
      const chunks: Buffer[] = [];
      const hold = (chunk: Buffer) => {
        chunks.push(chunk);
        this.held += chunk.length;
      };
      client.on('data', hold);
      this.waiting.push(() => {
        client.off('data', hold);
        const up = connect(upstream, '127.0.0.1');
        this.sockets.add(up);
        up.on('error', () => client.destroy());
        up.on('close', () => (this.sockets.delete(up), client.destroy()));
        client.on('close', () => up.destroy());
        up.on('data', (chunk: Buffer) => (this.answered += chunk.length));
        for (const chunk of chunks) up.write(chunk);
        client.pipe(up);
        up.pipe(client);
      });
    });
  }
  static async start(upstream: number): Promise<Relay> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new Relay(server, upstream);
  }
  get port(): number {
    return (this.server.address() as { port: number }).port;
  }
  /** Lets every connection made so far through. */
  release(): void {
    for (const go of this.waiting.splice(0)) go();
  }
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/**
 * Two turns of the event loop (`setImmediate` is not faked): what a socket destroyed by a timer has to say (its
 * 'error' on the next tick, a promise's rejection) has been said by then; no real I/O is waited for.
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function kubeConfig(server: string, user: Record<string, unknown> = { name: 'u' }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Subscribes and records the outcome. */
function record<T>(source: Observable<T>) {
  const seen: { values: T[]; error?: unknown; complete: boolean } = { values: [], complete: false };
  const subscription = source.subscribe({
    next: (v) => seen.values.push(v),
    error: (e: unknown) => (seen.error = e),
    complete: () => (seen.complete = true),
  });
  return { seen, subscription };
}

const configmaps = { resource: ConfigMap };

let silent: Silent | undefined;
let relay: Relay | undefined;
let api: ApiServer | undefined;
let dir: string | undefined;
let pluginPid: number | undefined;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(async () => {
  vi.useRealTimers();
  await silent?.close();
  silent = undefined;
  await relay?.close();
  relay = undefined;
  await api?.close();
  api = undefined;
  if (pluginPid !== undefined) {
    // Only if the test failed before the transport killed it.
    try {
      process.kill(pluginPid);
    } catch {
      // already gone
    }
    pluginPid = undefined;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('requestTimeoutMs', () => {
  it('defaults to 30 s: nothing at 29.999 s, a Timeout at 30 s', async () => {
    expect(DEFAULT_REQUEST_TIMEOUT_MS).toBe(30_000);
    silent = await Silent.start();
    const { seen } = record(httpListWatch(kubeConfig(`http://127.0.0.1:${silent.port}`), configmaps).list({}));
    await until('the request to arrive', () => silent!.received > 0);
    vi.advanceTimersByTime(29_999);
    expect(seen.error).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(seen.error).toBeInstanceOf(InformerError);
    expect((seen.error as InformerError).message).toBe(
      'list /api/v1/configmaps: no response headers within 30000 ms (waiting for: response headers)',
    );
  });
});

const short: HttpTransportOptions = { requestTimeoutMs: 250 };

describe('a bound on everything before the response headers', () => {
  it('a server that accepts and never answers: Timeout waiting for response headers; the socket is closed and no timer is left', async () => {
    silent = await Silent.start();
    const { seen } = record(httpListWatch(kubeConfig(`http://127.0.0.1:${silent.port}`), configmaps, short).list({ limit: 10 }));
    await until('the request to arrive', () => silent!.received > 0);
    vi.advanceTimersByTime(249);
    expect(seen.error).toBeUndefined();
    vi.advanceTimersByTime(1);
    const error = seen.error as InformerError;
    expect([error.reason, error.phase, error.message]).toEqual([
      'Timeout',
      'list',
      'list /api/v1/configmaps: no response headers within 250 ms (waiting for: response headers)',
    ]);
    // The server accepted the connection and the request: not a server that cannot be reached.
    expect(error.unreachable).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    await until('the server to see the connection closed', () => silent!.sockets.size === 0);
  });

  it('a TLS server that never completes the handshake: Timeout waiting for the TLS handshake', async () => {
    silent = await Silent.start();
    const { seen } = record(httpListWatch(kubeConfig(`https://127.0.0.1:${silent.port}`), configmaps, short).list({}));
    await until('the ClientHello', () => silent!.received > 0);
    vi.advanceTimersByTime(250);
    expect((seen.error as InformerError).message).toBe(
      'list /api/v1/configmaps: no response headers within 250 ms (waiting for: TLS handshake)',
    );
    // No server answered: the reflector's wait after it may end when the server answers again.
    expect((seen.error as InformerError).unreachable).toBe(true);
    await until('the connection to be closed', () => silent!.sockets.size === 0);
  });

  it('watches are bounded the same way (phase watch)', async () => {
    silent = await Silent.start();
    const { seen } = record(
      httpListWatch(kubeConfig(`http://127.0.0.1:${silent.port}`), configmaps, short).watch({ resourceVersion: '5' }),
    );
    await until('the request to arrive', () => silent!.received > 0);
    vi.advanceTimersByTime(250);
    const error = seen.error as InformerError;
    expect([error.reason, error.phase, error.message]).toEqual([
      'Timeout',
      'watch',
      'watch /api/v1/configmaps: no response headers within 250 ms (waiting for: response headers)',
    ]);
    await until('the connection to be closed', () => silent!.sockets.size === 0);
  });

  it('discovery (getJson and discover) is bounded, by default at 30 s too', async () => {
    silent = await Silent.start();
    const kc = kubeConfig(`http://127.0.0.1:${silent.port}`);
    const one = record(getJson(kc, '/version', short));
    const all = record(discover(kc));
    await until('three requests', () => silent!.sockets.size === 3);
    vi.advanceTimersByTime(250);
    expect((one.seen.error as InformerError).message).toBe(
      'list /version: no response headers within 250 ms (waiting for: response headers)',
    );
    expect(all.seen.error).toBeUndefined();
    vi.advanceTimersByTime(30_000 - 250);
    expect((all.seen.error as InformerError).reason).toBe('Timeout');
    expect((all.seen.error as InformerError).message).toMatch(
      /^list \/apis?: no response headers within 30000 ms \(waiting for: response headers\)$/,
    );
    expect(vi.getTimerCount()).toBe(0);
    await until('every connection to be closed', () => silent!.sockets.size === 0);
  });

  it('unsubscribing before the headers clears the timer and closes the connection', async () => {
    silent = await Silent.start();
    const { seen, subscription } = record(httpListWatch(kubeConfig(`http://127.0.0.1:${silent.port}`), configmaps, short).list({}));
    await until('the request to arrive', () => silent!.received > 0);
    expect(vi.getTimerCount()).toBe(1);
    subscription.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
    await until('the connection to be closed', () => silent!.sockets.size === 0);
    expect(seen.error).toBeUndefined();
  });

  it('a request that is answered clears its timer', async () => {
    api = await startApiServer();
    // Without the idle bound of the pooled connection (a timer of its own, spec/1-transport/http1Idle.spec.ts).
    const page = await firstValueFrom(httpListWatch(api.kubeConfig, configmaps, { http1IdleTimeoutMs: 0 }).list({}));
    expect(page.items).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('0 turns the bound off', async () => {
    silent = await Silent.start();
    const { seen, subscription } = record(
      httpListWatch(kubeConfig(`http://127.0.0.1:${silent.port}`), configmaps, { requestTimeoutMs: 0 }).list({}),
    );
    await until('the request to arrive', () => silent!.received > 0);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10 * 24 * 3600_000);
    expect(seen.error).toBeUndefined();
    subscription.unsubscribe();
  });
});

describe('tlsHandshakeTimeoutMs: the TLS handshake has its own bound (client-go: TLSHandshakeTimeout, 10 s)', () => {
  it('defaults to 10 s over HTTP/1.1: nothing at 9.999 s, then a Timeout from an unreachable server, socket closed, no timer left', async () => {
    expect(DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS).toBe(10_000);
    silent = await Silent.start();
    const lw = httpListWatch(kubeConfig(`https://127.0.0.1:${silent.port}`), configmaps, { protocol: 'http1' });
    const { seen } = record(lw.list({}));
    await until('the ClientHello', () => silent!.received > 0);
    vi.advanceTimersByTime(9_999);
    await settle();
    expect(seen.error).toBeUndefined();
    vi.advanceTimersByTime(1);
    await settle();
    const error = seen.error as InformerError;
    expect([error.reason, error.phase, error.message, error.unreachable]).toEqual([
      'Timeout',
      'list',
      'list /api/v1/configmaps: TLS handshake not done within 10000 ms (tlsHandshakeTimeoutMs)',
      true,
    ]);
    expect(vi.getTimerCount()).toBe(0);
    await until('the connection to be closed', () => silent!.sockets.size === 0);
  });

  it('over HTTP/2 (the default protocol): the shared connection fails at 10 s, and every request waiting for it with it', async () => {
    silent = await Silent.start();
    const kc = kubeConfig(`https://127.0.0.1:${silent.port}`);
    const lw = httpListWatch(kc, configmaps);
    const list = record(lw.list({}));
    const watch = record(lw.watch({ resourceVersion: '5' }));
    await until('the ClientHello', () => silent!.received > 0);
    // One connection for both (HTTP/2 is asked for by ALPN in that very handshake).
    expect(silent.sockets.size).toBe(1);
    expect(http2Connections(kc)).toHaveLength(1);
    vi.advanceTimersByTime(9_999);
    await settle();
    expect([list.seen.error, watch.seen.error]).toEqual([undefined, undefined]);
    vi.advanceTimersByTime(1);
    await settle();
    const errors = [list.seen.error, watch.seen.error] as InformerError[];
    expect(errors.map((e) => [e.reason, e.phase, e.message, e.unreachable])).toEqual([
      ['Timeout', 'list', 'list /api/v1/configmaps: TLS handshake not done within 10000 ms (tlsHandshakeTimeoutMs)', true],
      ['Timeout', 'watch', 'watch /api/v1/configmaps: TLS handshake not done within 10000 ms (tlsHandshakeTimeoutMs)', true],
    ]);
    expect(vi.getTimerCount()).toBe(0);
    expect(http2Connections(kc)).toEqual([]);
    await until('the connection to be closed', () => silent!.sockets.size === 0);
  });

  it('0 turns it off: requestTimeoutMs still bounds the handshake (30 s, waiting for: TLS handshake)', async () => {
    silent = await Silent.start();
    const lw = httpListWatch(kubeConfig(`https://127.0.0.1:${silent.port}`), configmaps, { tlsHandshakeTimeoutMs: 0 });
    const { seen } = record(lw.list({}));
    await until('the ClientHello', () => silent!.received > 0);
    vi.advanceTimersByTime(29_999);
    expect(seen.error).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect((seen.error as InformerError).message).toBe(
      'list /api/v1/configmaps: no response headers within 30000 ms (waiting for: TLS handshake)',
    );
  });

  it.each([
    ['HTTP/1.1', { tls: true }, { protocol: 'http1' }],
    ['HTTP/2', { http2: true }, {}],
  ] as const)(
    'over %s, a handshake done at 9.999 s is not cut, and its connection outlives the 10 s (a watch on it sees an event)',
    async (_name, server, options) => {
      api = await startApiServer(server);
      relay = await Relay.start(api.port);
      const cluster = api.kubeConfig.getCurrentCluster()!;
      const kc = kubeConfig(`https://127.0.0.1:${relay.port}`);
      kc.clusters[0] = { ...cluster, name: 'c', server: `https://127.0.0.1:${relay.port}` };
      const { seen } = record(httpListWatch(kc, configmaps, options).watch({ resourceVersion: '0' }));
      await until('the ClientHello', () => relay!.held > 0);
      vi.advanceTimersByTime(9_999);
      relay.release();
      api.create('configmaps', { metadata: { name: 'a', namespace: 'default' } });
      await until('the first event', () => seen.values.length > 0 || seen.error !== undefined);
      // Past the handshake bound, and far past it: the watch's connection is not destroyed by it.
      vi.advanceTimersByTime(1);
      vi.advanceTimersByTime(20_000);
      await settle();
      api.create('configmaps', { metadata: { name: 'b', namespace: 'default' } });
      await until('the second event', () => seen.values.length > 1 || seen.error !== undefined);
      expect(seen.error).toBeUndefined();
      expect(seen.values.map((frame) => (frame as { object: ConfigMap }).object.metadata?.name)).toEqual(['a', 'b']);
    },
  );
});

describe('obtaining credentials', () => {
  /** A kubeconfig whose exec plugin is a Node script written for the test. */
  function execConfig(server: string, script: string): KubeConfig {
    dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-exec-'));
    const file = join(dir, 'plugin.mjs');
    writeFileSync(file, script);
    chmodSync(file, 0o755);
    return kubeConfig(server, {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: [file],
        env: [{ name: 'PLUGIN_DIR', value: dir }],
        interactiveMode: 'Never',
      },
    });
  }

  it(`a hung exec plugin: Timeout waiting for credentials from it (named); killed at its own deadline (${EXEC_RUN_TIMEOUT_MS / 1000} s)`, async () => {
    silent = await Silent.start();
    const kc = execConfig(
      `http://127.0.0.1:${silent.port}`,
      `import { writeFileSync } from 'node:fs';
       writeFileSync(process.env.PLUGIN_DIR + '/pid', String(process.pid));
       setInterval(() => {}, 1 << 30); // never answers`,
    );
    const { seen } = record(httpListWatch(kc, configmaps, short).list({}));
    const pidFile = join(dir!, 'pid');
    await until('the plugin to start', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    pluginPid = pid;
    vi.advanceTimersByTime(250);
    const error = seen.error as InformerError;
    expect([error.reason, error.phase, error.message]).toEqual([
      'Timeout',
      'list',
      `list /api/v1/configmaps: no response headers within 250 ms (waiting for: credentials from exec plugin ${process.execPath})`,
    ]);
    expect(isAlive(pid)).toBe(true); // the run outlives the request, for the next one
    vi.advanceTimersByTime(EXEC_RUN_TIMEOUT_MS - 250);
    await until('the plugin to be killed', () => !isAlive(pid));
    expect(silent.received).toBe(0);
  });

  it('unsubscribing while a plugin runs clears the timer; the plugin runs on (for the next request) until its deadline', async () => {
    silent = await Silent.start();
    const kc = execConfig(
      `http://127.0.0.1:${silent.port}`,
      `import { writeFileSync } from 'node:fs';
       writeFileSync(process.env.PLUGIN_DIR + '/pid', String(process.pid));
       setInterval(() => {}, 1 << 30);`,
    );
    const { seen, subscription } = record(httpListWatch(kc, configmaps, short).list({}));
    const pidFile = join(dir!, 'pid');
    await until('the plugin to start', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '');
    pluginPid = Number(readFileSync(pidFile, 'utf8'));
    subscription.unsubscribe();
    expect(vi.getTimerCount()).toBe(1); // the run's deadline (unref'd), not the request's timer
    expect(isAlive(pluginPid)).toBe(true);
    vi.advanceTimersByTime(EXEC_RUN_TIMEOUT_MS);
    expect(vi.getTimerCount()).toBe(0);
    await until('the plugin to be killed', () => !isAlive(pluginPid!));
    expect(seen.error).toBeUndefined();
    expect(silent.received).toBe(0);
  });

  it('a plugin that fails is reported as CredentialPlugin (not a bad kubeconfig), with what it said', async () => {
    silent = await Silent.start();
    const kc = execConfig(`http://127.0.0.1:${silent.port}`, `process.stderr.write('no credentials for you'); process.exit(1);`);
    const { seen } = record(httpListWatch(kc, configmaps, short).list({}));
    await until('the error', () => seen.error !== undefined);
    const error = seen.error as InformerError;
    expect([error.reason, error.phase]).toEqual(['CredentialPlugin', 'config']);
    expect(error.message).toBe(`exec plugin ${process.execPath}: failed with exit code 1: no credentials for you`);
    expect(vi.getTimerCount()).toBe(0);
  });
});
