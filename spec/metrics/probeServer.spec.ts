import { afterEach, describe, expect, it, vi } from 'vitest';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { PROBE_SERVER_LIMITS, probeServer } from '../../src/metrics/probeServer.ts';
import { serve } from '../../src/metrics/index.ts';

/** Raw sockets on 127.0.0.1 against the probe server: slow clients, bodies, too many connections. */
const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

async function listening(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A client socket, and the server's end of it once the server has accepted it. */
async function open(server: Server, port: number): Promise<{ client: Socket; accepted: Socket; closed: Promise<void> }> {
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const client = connect(port, '127.0.0.1');
  sockets.push(client);
  client.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  return { client, accepted: await accepted, closed };
}

const ok = (_req: unknown, res: import('node:http').ServerResponse) => res.end('ok\n');

describe('the probe server under slow and hostile clients', () => {
  it('is configured with its limits: headers 10 s (checked by Node every 1 s, not 30 s), 8 KiB, 64 connections, answers 10 s, 100 requests a connection', () => {
    // Node sets both from the options; its types do not list them.
    const server = probeServer(ok) as Server & { readonly connectionsCheckingInterval: number; readonly maxHeaderSize: number };
    expect(PROBE_SERVER_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      checkIntervalMs: 1_000,
      maxHeaderBytes: 8_192,
      maxConnections: 64,
      responseTimeoutMs: 10_000,
      maxRequestsPerSocket: 100,
    });
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(10_000);
    expect(server.connectionsCheckingInterval).toBe(1_000);
    expect(server.maxHeaderSize).toBe(8_192);
    expect(server.maxRequestsPerSocket).toBe(100);
  });

  it('closes a connection whose headers are not in at 10 s (default), by its own timer: a slowloris lives 10 s, not 30–40', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const server = probeServer(ok);
    const port = await listening(server);
    const { client, accepted, closed } = await open(server, port);
    client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'); // and never the blank line
    vi.advanceTimersByTime(PROBE_SERVER_LIMITS.headersTimeoutMs - 1);
    expect(accepted.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(accepted.destroyed).toBe(true);
    await closed;
  });

  it('gives a kept-alive connection 10 s for its next request, and none while a request is being answered', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const server = probeServer(ok);
    const port = await listening(server);
    const { client, accepted, closed } = await open(server, port);
    const answered = new Promise<string>((resolve) => client.once('data', (d) => resolve(d.toString('latin1'))));
    vi.advanceTimersByTime(9_000);
    client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await answered).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok\n$/);
    // The timer starts again from the answer: 9 s later the connection is still open.
    vi.advanceTimersByTime(9_999);
    expect(accepted.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(accepted.destroyed).toBe(true);
    await closed;
  });

  it('answers a request with a body and closes: a 405 does not read a 200 MiB body', async () => {
    const port = await listening(probeServer((_req, res) => res.writeHead(405).end('method not allowed\n')));
    const { client, closed } = await open(probeServerFor(port), port);
    let response = '';
    client.on('data', (d: Buffer) => (response += d.toString('latin1')));
    const total = 200 * 1024 * 1024;
    client.write(`POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: ${total}\r\n\r\n`);
    // Sends as fast as the server takes it; counts what the kernel accepted.
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    let done = false;
    void closed.then(() => (done = true));
    while (!done && sent < total) {
      const more = client.write(chunk);
      sent += chunk.length;
      if (!more) await Promise.race([new Promise((r) => client.once('drain', r)), closed]);
    }
    await closed;
    expect(sent).toBeLessThan(total / 4);
    // The answer is written before the close (a client still sending may see a reset instead).
    if (response !== '') expect(response).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n[\s\S]*Connection: close\r\n/i);
  });

  it('closes a client that does not read its answer 10 s (default) after its request: the answer is not held for good', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const big = Buffer.alloc(16 * 2 ** 20, 'x'); // more than the socket buffers take
    let asked!: () => void;
    const handled = new Promise<void>((resolve) => (asked = resolve));
    const server = probeServer((_req, res) => {
      res.writeHead(200, { 'Content-Length': big.length }).end(big);
      asked();
    });
    const port = await listening(server);
    const { client, accepted, closed } = await open(server, port);
    client.pause(); // and never reads
    client.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    await handled;
    vi.advanceTimersByTime(PROBE_SERVER_LIMITS.responseTimeoutMs - 1);
    expect(accepted.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(accepted.destroyed).toBe(true);
    client.destroy();
    await closed;
  });

  it('answers a kubelet probe when 64 kept-alive clients (the default cap) hold every connection: the one idle the longest makes room', async () => {
    const server = probeServer(ok);
    const port = await listening(server);
    const held: { client: Socket; accepted: Socket }[] = [];
    for (let i = 0; i < PROBE_SERVER_LIMITS.maxConnections; i++) {
      const c = await open(server, port);
      const answered = new Promise<void>((resolve) => c.client.once('data', () => resolve()));
      c.client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered;
      held.push(c);
    }
    // The first again, so that the second is now the one idle the longest.
    const again = new Promise<void>((resolve) => held[0]!.client.once('data', () => resolve()));
    held[0]!.client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await again;
    const probe = await open(server, port);
    let answer = '';
    probe.client.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    probe.client.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await probe.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(held[1]!.accepted.destroyed).toBe(true);
    expect(held.filter((c) => c.accepted.destroyed)).toHaveLength(1);
  });

  it('closes a connection beyond its cap when every one is being answered', async () => {
    const pending: import('node:http').ServerResponse[] = [];
    let asked: () => void = () => undefined;
    const server = probeServer(
      (_req, res) => {
        pending.push(res);
        asked();
      },
      { ...PROBE_SERVER_LIMITS, maxConnections: 2 },
    );
    const port = await listening(server);
    const busy = [await open(server, port), await open(server, port)];
    for (const c of busy) {
      const handled = new Promise<void>((resolve) => (asked = resolve));
      c.client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await handled;
    }
    const third = await open(server, port);
    await third.closed;
    expect(busy.map((c) => c.accepted.destroyed)).toEqual([false, false]);
    for (const res of pending) res.end('ok\n');
  });

  it('answers at most 100 requests (default) on one connection, the last with Connection: close, then closes it', async () => {
    const server = probeServer(ok);
    server.keepAliveTimeout = 600_000;
    const port = await listening(server);
    const { client, closed } = await open(server, port);
    let answers = '';
    client.on('data', (d: Buffer) => (answers += d.toString('latin1')));
    client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(150));
    // Closed once the 100th answer is written: not by a timer (ours are fake here, and Node's idle close is 10 minutes).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await closed;
    const statuses = answers.match(/HTTP\/1\.1 \d+/g) ?? [];
    expect(statuses).toEqual(Array.from({ length: 100 }, () => 'HTTP/1.1 200'));
    const last = answers.split('HTTP/1.1 200 OK').at(-1)!;
    expect(last).toMatch(/\r\nConnection: close\r\n/i);
  });

  it('answers one request at a time on a connection: 100 pipelined in one packet by each of 4 clients are 4 handled, the rest wait', async () => {
    const pending: { socket: Socket; url: string; res: import('node:http').ServerResponse }[] = [];
    let asked: () => void = () => undefined;
    const server = probeServer((req, res) => {
      pending.push({ socket: req.socket, url: req.url ?? '', res });
      asked();
    });
    const port = await listening(server);
    const handled = (n: number) =>
      new Promise<void>((resolve) => {
        asked = () => pending.length >= n && resolve();
        asked();
      });
    const clients = [];
    for (let c = 0; c < 4; c++) {
      const client = await open(server, port);
      client.client.pause(); // reads nothing yet
      client.client.write(Array.from({ length: 100 }, (_, i) => `GET /${c}/${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
      clients.push(client);
    }
    await handled(4);
    // A fifth client's request is read after the four packets (written before it, on this machine's loopback): when it
    // is handled, every request of theirs has been parsed, and one of each handled.
    const fifth = await open(server, port);
    fifth.client.write('GET /fifth HTTP/1.1\r\nHost: x\r\n\r\n');
    await handled(5);
    await new Promise((next) => setImmediate(next));
    expect(pending.map((p) => p.url).sort()).toEqual(['/0/0', '/1/0', '/2/0', '/3/0', '/fifth']);
    // The first client's answer written: its next request is handled, in order; the others' still wait.
    const first = pending.find((p) => p.url === '/0/0')!;
    first.res.end('0\n');
    await handled(6);
    expect(pending[5]).toMatchObject({ url: '/0/1', socket: first.socket });
    for (const p of pending) if (!p.res.writableEnded) p.res.end('ok\n');
  });

  it('answers pipelined requests in order, each after the one before is written; a reading client gets them all', async () => {
    let inFlight = 0;
    let most = 0;
    const server = probeServer((req, res) => {
      most = Math.max(most, ++inFlight);
      res.prependOnceListener('finish', () => inFlight--);
      setImmediate(() => res.end(`${req.url}\n`));
    });
    const port = await listening(server);
    const { client } = await open(server, port);
    let answers = '';
    const all = new Promise<void>((resolve) =>
      client.on('data', (d: Buffer) => {
        answers += d.toString('latin1');
        if ((answers.match(/HTTP\/1\.1 200/g) ?? []).length === 5) resolve();
      }),
    );
    client.write(Array.from({ length: 5 }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
    await all;
    expect(
      answers
        .split('\r\n\r\n')
        .slice(1)
        .map((body) => body.split('\n')[0]),
    ).toEqual(['/0', '/1', '/2', '/3', '/4']);
    expect(most).toBe(1);
  });

  it('closes a client that pipelines 100 requests for a large answer and reads nothing at 10 s (default): one answer made, none after', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const big = Buffer.alloc(16 * 2 ** 20, 'x'); // more than the socket buffers take
    let answers = 0;
    let asked!: () => void;
    const handled = new Promise<void>((resolve) => (asked = resolve));
    const server = probeServer((_req, res) => {
      answers++;
      res.writeHead(200, { 'Content-Length': big.length }).end(big);
      asked();
    });
    const port = await listening(server);
    const { client, accepted, closed } = await open(server, port);
    client.pause();
    client.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(100));
    await handled;
    vi.advanceTimersByTime(PROBE_SERVER_LIMITS.responseTimeoutMs - 1);
    expect(accepted.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(accepted.destroyed).toBe(true);
    client.destroy();
    await closed;
    await new Promise((next) => setImmediate(next));
    expect(answers).toBe(1);
  });

  it('serve() listens on every interface by default, and on the address given', async () => {
    const where = (host?: string) =>
      new Promise<{ host: string; url: string }>((resolve, reject) => {
        const sub = serve([], host === undefined ? {} : { host }).subscribe({
          next: (s) => {
            resolve(s);
            queueMicrotask(() => sub.unsubscribe());
          },
          error: reject,
        });
      });
    expect(['::', '0.0.0.0']).toContain((await where()).host);
    expect(await where('127.0.0.1')).toMatchObject({ host: '127.0.0.1', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
  });
});

/** The server listening on `port` (the last one made). */
function probeServerFor(port: number): Server {
  const server = servers.find((s) => (s.address() as AddressInfo).port === port);
  if (!server) throw new Error(`no server on ${port}`);
  return server;
}
