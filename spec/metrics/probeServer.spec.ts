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
  it('is configured with its limits: headers 10 s (checked by Node every 1 s, not 30 s), 8 KiB, 64 connections', () => {
    // Node sets both from the options; its types do not list them.
    const server = probeServer(ok) as Server & { readonly connectionsCheckingInterval: number; readonly maxHeaderSize: number };
    expect(PROBE_SERVER_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      checkIntervalMs: 1_000,
      maxHeaderBytes: 8_192,
      maxConnections: 64,
    });
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(10_000);
    expect(server.connectionsCheckingInterval).toBe(1_000);
    expect(server.maxHeaderSize).toBe(8_192);
    expect(server.maxConnections).toBe(64);
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

  it('closes connections beyond its cap as they arrive', async () => {
    const server = probeServer(ok, { ...PROBE_SERVER_LIMITS, maxConnections: 2 });
    const port = await listening(server);
    const first = await open(server, port);
    const second = await open(server, port);
    const dropped = new Promise<void>((resolve) => server.once('drop', () => resolve()));
    const third = connect(port, '127.0.0.1');
    sockets.push(third);
    third.on('error', () => undefined);
    await dropped;
    await new Promise<void>((resolve) => third.once('close', () => resolve()));
    expect(first.accepted.destroyed).toBe(false);
    expect(second.accepted.destroyed).toBe(false);
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
