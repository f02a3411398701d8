/**
 * A body sent a byte at a time ends (src/1-transport/http/progress.ts): a list page, a list's error Status and a
 * document must bring `minBodyBytesPerSecond` (default 4 KiB/s) for each second of every `listIdleTimeoutMs` window
 * (default 60 s: 240 KiB), else `Timeout`. Before, the only bound after the headers was the idle timer, and one byte
 * every 59 s kept a list "listing" forever. Default options; the sockets are real (127.0.0.1), the server's bytes are
 * written by the test, and only `setTimeout` is faked, so nothing depends on the machine's speed. (`requestTimeoutMs`
 * is turned off only so that the one timer left is the body's: its start shows that the headers were read.)
 */
import { createServer, type Server, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { Observable } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigMap, InformerError, metadataOnly } from '../../../src/index.ts';
import { BodyProgress, bodyProgress } from '../../../src/1-transport/http/progress.ts';
import { DEFAULT_MIN_BODY_BYTES_PER_SECOND, getJson, httpListWatch } from '../../../src/1-transport/httpTransport.ts';
import { realSleep, until } from '../realClock.ts';

/** A TCP server on 127.0.0.1 that answers each request with `head` (status line, headers, the body's start), then only what the test writes. */
class Dribbler {
  readonly sockets = new Set<Socket>();
  requests = 0;
  readonly server: Server;
  private constructor(server: Server, head: string) {
    this.server = server;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('data', () => {
        this.requests++;
        socket.write(head);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }
  static async start(status: number, bodyStart: string): Promise<Dribbler> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const head = `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(bodyStart)}`;
    return new Dribbler(server, head);
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }
  /** Writes `bytes` of the body to every open response. */
  drip(bytes: number): void {
    for (const socket of this.sockets) socket.write(chunk(' '.repeat(bytes)));
  }
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

function kubeConfig(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

function record<T>(source: Observable<T>) {
  const seen: { error?: unknown; complete: boolean } = { complete: false };
  const subscription = source.subscribe({ error: (e: unknown) => (seen.error = e), complete: () => (seen.complete = true) });
  return { seen, subscription };
}

const LIST_HEAD = '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[';
const WINDOW_MS = 60_000;
const NO_HEADER_TIMER = { requestTimeoutMs: 0 } as const;

let server: Dribbler | undefined;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

/** Drips one byte just before each window ends, `windows` times; then the window that ends must fail it. */
async function dripUntilTimeout(seen: { error?: unknown }, windows = 1): Promise<InformerError> {
  await until('the headers to be read (the body timer armed)', () => vi.getTimerCount() === 1);
  for (let i = 0; i < windows; i++) {
    server!.drip(1);
    vi.advanceTimersByTime(WINDOW_MS - 1);
    expect(seen.error, `window ${i + 1}, before it ends`).toBeUndefined();
    vi.advanceTimersByTime(1);
  }
  expect(seen.error).toBeInstanceOf(InformerError);
  return seen.error as InformerError;
}

describe('a body sent a byte at a time, at default options', () => {
  it('the default floor is 4 KiB/s: 240 KiB a 60 s window', () => {
    expect(DEFAULT_MIN_BODY_BYTES_PER_SECOND).toBe(4096);
  });

  it('a list page: Timeout at the end of the first 60 s window that brought less than 240 KiB; the request aborted, no timer left', async () => {
    server = await Dribbler.start(200, LIST_HEAD);
    const { seen } = record(httpListWatch(kubeConfig(server.url), { resource: ConfigMap }, NO_HEADER_TIMER).list({}));
    const error = await dripUntilTimeout(seen);
    expect([error.reason, error.phase]).toEqual(['Timeout', 'list']);
    expect(error.message).toMatch(
      /^list \/api\/v1\/configmaps: \d+ bytes in 60000 ms, under the floor of 240 KiB a window; aborted \(options minBodyBytesPerSecond, listIdleTimeoutMs\)$/,
    );
    expect(vi.getTimerCount()).toBe(0);
    await until('the connection to close', () => server!.sockets.size === 0);
  });

  it("a list's 500 error body: Timeout the same way", async () => {
    server = await Dribbler.start(500, '{"kind":"Status","message":"');
    const { seen } = record(httpListWatch(kubeConfig(server.url), { resource: ConfigMap }, NO_HEADER_TIMER).list({}));
    const error = await dripUntilTimeout(seen);
    expect([error.reason, error.phase]).toEqual(['Timeout', 'list']);
    expect(error.message).toMatch(/^list \/api\/v1\/configmaps: \d+ bytes in 60000 ms, under the floor/);
  });

  it("a metadata-only list's 406 body (read before the list is asked again as JSON): Timeout the same way", async () => {
    server = await Dribbler.start(406, '{"kind":"Status","message":"');
    const { seen } = record(httpListWatch(kubeConfig(server.url), { resource: metadataOnly(ConfigMap) }, NO_HEADER_TIMER).list({}));
    const error = await dripUntilTimeout(seen);
    expect([error.reason, error.phase]).toEqual(['Timeout', 'list']);
    expect(error.message).toMatch(/^list \/api\/v1\/configmaps: \d+ bytes in 60000 ms, under the floor/);
    expect(server.requests).toBe(1);
  });

  it('a document (getJson: discovery, /version): Timeout the same way', async () => {
    server = await Dribbler.start(200, '{"kind":"APIVersions","versions":["');
    const { seen } = record(getJson(kubeConfig(server.url), '/api', NO_HEADER_TIMER));
    const error = await dripUntilTimeout(seen);
    expect(error.message).toMatch(/^GET \/api: \d+ bytes in 60000 ms, under the floor/);
  });

  it('unsubscribing while the body comes frees its timer', async () => {
    server = await Dribbler.start(200, LIST_HEAD);
    const { subscription } = record(httpListWatch(kubeConfig(server.url), { resource: ConfigMap }, NO_HEADER_TIMER).list({}));
    await until('the headers to be read (the body timer armed)', () => vi.getTimerCount() === 1);
    subscription.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('BodyProgress: every window must bring its floor', () => {
  it.each([
    { windows: [240 * 1024, 240 * 1024, 0], fails: 3 },
    { windows: [240 * 1024, 240 * 1024 - 1], fails: 2 },
    { windows: [10 * 1024 * 1024, 1], fails: 2 }, // a burst does not pay for a later window
    { windows: [0], fails: 1 },
  ])('bytes a window $windows: Timeout at the end of window $fails', ({ windows, fails }) => {
    const progress = new BodyProgress(WINDOW_MS, 240 * 1024, 'list /x', 'list');
    let bytes = 0;
    const errors: InformerError[] = [];
    progress.start(
      () => bytes,
      (e) => errors.push(e),
    );
    windows.forEach((got, i) => {
      bytes += got;
      vi.advanceTimersByTime(WINDOW_MS);
      expect(errors.length, `after window ${i + 1}`).toBe(i + 1 >= fails ? 1 : 0);
    });
    expect(errors[0]?.message).toBe(
      `list /x: ${windows[fails - 1]} bytes in 60000 ms, under the floor of 240 KiB a window; aborted (options minBodyBytesPerSecond, listIdleTimeoutMs)`,
    );
    expect(vi.getTimerCount()).toBe(0);
  });

  // Found by review: Infinity, which turns the other bounds off (transport.md), made a floor no body reaches.
  it('0 or Infinity turns the rule off, as for the other bounds; a finite rate or the default keeps it', () => {
    expect(bodyProgress({ minBodyBytesPerSecond: 0 }, 'list /x', 'list')).toBeUndefined();
    expect(bodyProgress({ minBodyBytesPerSecond: Infinity }, 'list /x', 'list')).toBeUndefined();
    expect(bodyProgress({ listIdleTimeoutMs: 0 }, 'list /x', 'list')).toBeUndefined();
    expect(bodyProgress({ minBodyBytesPerSecond: 1024 }, 'list /x', 'list')).toBeInstanceOf(BodyProgress);
    expect(bodyProgress({}, 'list /x', 'list')).toBeInstanceOf(BodyProgress);
  });

  it('stop frees the timer', () => {
    const progress = new BodyProgress(WINDOW_MS, 1, 'list /x', 'list');
    progress.start(
      () => 0,
      () => undefined,
    );
    expect(vi.getTimerCount()).toBe(1);
    progress.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
