/**
 * HTTP/2 for the emulator: TLS with ALPN `h2` and `http/1.1` (`allowHTTP1`),
 * behind a gate per TCP connection so that a test can black-hole one (the
 * socket stays open, nothing is read or written, PINGs included: a NAT or
 * load balancer that forgot the connection).
 */
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { Duplex } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the HTTP/2 front counts and can do. */
export interface Http2Front {
  /** TCP connections accepted since the start. */
  readonly acceptedConnections: number;
  /** TCP connections open now. */
  readonly openConnections: number;
  /** HTTP/2 sessions opened since the start (the rest of the connections spoke HTTP/1.1). */
  readonly sessions: number;
  /** HTTP/2 streams (requests) opened since the start, and open now. */
  readonly streams: number;
  readonly openStreams: number;
  /** PINGs received from clients (and answered, unless black-holed). */
  readonly pings: number;
  /** Black-holes every open connection: nothing is read from or written to them from now on. Returns how many. */
  blackhole(): number;
  /**
   * Sends GOAWAY on every open HTTP/2 session (graceful: streams in flight carry on, no new one is
   * accepted, the session closes when they end). Returns how many.
   */
  goaway(): number;
  /** Destroys every connection. */
  destroyAll(): void;
}

/** One TCP connection, passed through unless black-holed. */
class Gate extends Duplex {
  private holed = false;
  private readonly raw: net.Socket;

  constructor(raw: net.Socket) {
    super();
    this.raw = raw;
    raw.on('data', (chunk: Buffer) => {
      if (!this.holed && !this.push(chunk)) raw.pause();
    });
    raw.on('end', () => this.push(null));
    raw.on('error', () => this.destroy());
    raw.on('close', () => this.destroy());
  }

  blackhole(): void {
    this.holed = true;
    this.raw.pause();
  }

  override _read(): void {
    if (!this.holed) this.raw.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.holed || this.raw.destroyed) return done();
    if (this.raw.write(chunk)) done();
    else this.raw.once('drain', () => done());
  }

  override _final(done: (error?: Error | null) => void): void {
    if (!this.holed) this.raw.end();
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.raw.destroy();
    done(error);
  }
}

/** Starts the HTTP/2 (and HTTP/1.1) TLS server on 127.0.0.1. */
export async function listenHttp2(
  tls: { cert: string; key: string; clientCa?: string | undefined },
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  port: number,
  settings: { maxConcurrentStreams?: number } = {},
): Promise<{ front: Http2Front; port: number; listener: net.Server; close(): Promise<void> }> {
  const secure = http2.createSecureServer(
    {
      cert: tls.cert,
      key: tls.key,
      allowHTTP1: true,
      settings,
      ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
    },
    listener as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  );
  const gates = new Set<Gate>();
  const sessions = new Set<http2.ServerHttp2Session>();
  let accepted = 0;
  let sessionCount = 0;
  let streams = 0;
  let openStreams = 0;
  let pings = 0;
  secure.on('session', (session) => {
    sessionCount++;
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    session.on('error', () => undefined);
    session.on('ping', () => pings++);
  });
  secure.on('stream', (stream) => {
    streams++;
    openStreams++;
    stream.on('close', () => openStreams--);
  });
  secure.on('tlsClientError', () => undefined);
  const tcp = net.createServer((raw) => {
    accepted++;
    // As Go's net (kube-apiserver) does for every TCP connection. Node's HTTP/2 session turns Nagle off on the
    // socket it is given, but here that is the gate, not this socket: without it, small frames (a watch event) wait
    // in the send buffer for the client's delayed ACK (tens of ms), or until the client writes (a PING, 5 s later).
    raw.setNoDelay(true);
    const gate = new Gate(raw);
    gates.add(gate);
    gate.on('close', () => gates.delete(gate));
    gate.on('error', () => undefined);
    secure.emit('connection', gate);
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, '127.0.0.1', () => {
      tcp.off('error', reject);
      resolve();
    });
  });
  const front: Http2Front = {
    get acceptedConnections() {
      return accepted;
    },
    get openConnections() {
      return gates.size;
    },
    get sessions() {
      return sessionCount;
    },
    get streams() {
      return streams;
    },
    get openStreams() {
      return openStreams;
    },
    get pings() {
      return pings;
    },
    blackhole() {
      for (const gate of gates) gate.blackhole();
      return gates.size;
    },
    goaway() {
      const open = [...sessions].filter((session) => !session.closed);
      for (const session of open) session.close();
      return open.length;
    },
    destroyAll() {
      for (const session of sessions) session.destroy();
      for (const gate of gates) gate.destroy();
    },
  };
  return {
    front,
    port: (tcp.address() as net.AddressInfo).port,
    listener: tcp,
    close: async () => {
      front.destroyAll();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/**
 * Resets an HTTP/2 response's stream once `data` went out (the `dropWatch`
 * fault): over HTTP/2 only that request fails, not the connection it shares.
 * `code`: the RST_STREAM's error code. Returns false for an HTTP/1.1 response.
 */
export function resetStream(res: ServerResponse, data: string | Buffer, code: 'INTERNAL_ERROR' | 'NO_ERROR' = 'INTERNAL_ERROR'): boolean {
  const stream = (res as unknown as { stream?: http2.ServerHttp2Stream }).stream;
  if (!stream) return false;
  const reset = () => {
    if (stream.closed) return;
    // NO_ERROR: `close(NGHTTP2_NO_ERROR)` ends the writable side first (END_STREAM, a clean end); destroying an open
    // stream without an error sends RST_STREAM NO_ERROR alone (Node; spec/1-transport/http2.spec.ts sees it so).
    if (code === 'NO_ERROR') stream.destroy();
    else stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
  };
  if (data && !res.destroyed && !res.writableEnded) res.write(data, reset);
  else reset();
  return true;
}
