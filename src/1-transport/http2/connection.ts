import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { asyncScheduler } from 'rxjs';
import { DEFAULT_IDLE_CONNECTION_MS, PingHealth, type Http2Options } from './health.ts';
import { timerMs } from '../../util/scheduleAfter.ts';
import { Http2Error } from './response.ts';
import { limitHandshake } from '../tlsHandshake.ts';

/** What a request waits for before its response headers (as http/request.ts's `AwaitingStage`). */
export type ConnectStage = 'connection' | 'TLS handshake' | 'response headers';

/** Streams assumed allowed before the server's SETTINGS say (RFC 9113 recommends at least 100). */
export const ASSUMED_MAX_STREAMS = 100;
/** The stream's flow-control window, as Go's HTTP/2 client (`transportDefaultStreamFlow`, 4 MiB): a large list is not bound by round trips. */
const STREAM_WINDOW = 4 * 1024 * 1024;
/**
 * The connection's window: our own choice, not Go's (its client's `transportDefaultConnFlow` is 1 GiB). It bounds the
 * bytes in flight on the connection (throughput), not memory: Node's HTTP/2 gives connection credit back as DATA arrives,
 * not as a stream is read (Go gives it back on read), so what a server may send ahead of unread streams is bounded by
 * the 4 MiB stream window each (four unread streams hold 16 MiB; a stalled stream never starves the others'). Our
 * transport reads every stream as data arrives (paused only behind gunzip, which drains at once), so unread bytes
 * build up only while the event loop is blocked. (audit31 measured it: 6 unread streams held 24 MiB, a 7th flowed.)
 */
const CONNECTION_WINDOW = 16 * 1024 * 1024;

const notOffered = () =>
  Object.assign(new Error('the server does not offer HTTP/2 (ALPN h2); protocol h2 was forced'), { code: 'ERR_HTTP2_NOT_OFFERED' });

/**
 * A server whose first SETTINGS allow no stream at all: a fault of this connection (reported as a `ProtocolError`,
 * backed off and retried), not a reason to dial another (that server would allow none on it either).
 */
const noStreams = () =>
  new Http2Error(
    'the API server allows no HTTP/2 stream on a new connection (SETTINGS_MAX_CONCURRENT_STREAMS 0); the connection was closed',
    'ERR_HTTP2_NO_STREAMS',
    true,
    undefined,
  );

/** How a connection attempt ended: an HTTP/2 session, or a TLS socket whose server chose HTTP/1.1 (ALPN). */
export type Negotiated = { readonly h2: true } | { readonly h2: false; readonly socket: tls.TLSSocket };

/**
 * One TCP (or TLS) connection that speaks HTTP/2, shared by every request of
 * a process to one server with one set of TLS material. Counts the streams
 * it carries (`reserved`, for the server's concurrency limit), runs the PING
 * rule ({@link PingHealth}) while it carries one, and takes no new stream
 * once the server sent GOAWAY or it closed. Once it carries none for
 * `idleTimeoutMs` (90 s, client-go's `IdleConnTimeout`), it is closed.
 */
export class Http2Connection {
  session: http2.ClientHttp2Session | undefined;
  health: PingHealth | undefined;
  /** Streams handed out (open or about to be). */
  reserved = 0;
  /** Streams open. */
  active = 0;
  maxStreams = ASSUMED_MAX_STREAMS;
  /** The server's `SETTINGS_MAX_CONCURRENT_STREAMS`, once its SETTINGS came (`maxStreams` assumes 100 until then). */
  advertised: number | undefined;
  /** No new stream: GOAWAY received, closing, closed, or retired. */
  closed = false;
  stage: ConnectStage = 'connection';
  readonly ready: Promise<Negotiated>;
  private readonly stageListeners = new Set<(stage: ConnectStage) => void>();
  private fallbackTaken = false;
  private socket: net.Socket | undefined;
  private opened = false;
  /** Cancels the idle timer, while one runs. */
  private cancelIdle: (() => void) | undefined;

  private readonly options: Http2Options;
  private readonly onClosed: (connection: Http2Connection) => void;

  constructor(
    url: URL,
    tlsOptions: tls.ConnectionOptions,
    forceH2: boolean,
    options: Http2Options,
    onClosed: (connection: Http2Connection) => void,
    handshakeTimeoutMs?: number,
  ) {
    this.options = options;
    this.onClosed = onClosed;
    this.ready = this.connect(url, tlsOptions, forceH2, handshakeTimeoutMs);
    this.ready.catch(() => undefined);
  }

  get usable(): boolean {
    return !this.closed && this.reserved < this.maxStreams;
  }

  onStage(listener: (stage: ConnectStage) => void): () => void {
    listener(this.stage);
    this.stageListeners.add(listener);
    return () => this.stageListeners.delete(listener);
  }

  /**
   * The TLS socket of a server that chose HTTP/1.1, for the first request that
   * asks: it goes on over HTTP/1.1 on this socket, so that asking costs no connection.
   */
  takeFallbackSocket(negotiated: Negotiated): tls.TLSSocket | undefined {
    if (negotiated.h2 || this.fallbackTaken) return undefined;
    this.fallbackTaken = true;
    return negotiated.socket;
  }

  /** A stream is handed out on this connection: it is no longer idle. */
  reserve(): void {
    this.reserved++;
    this.cancelIdle?.();
    this.cancelIdle = undefined;
  }

  /** A stream of this connection opened or closed. */
  streamOpened(): void {
    this.active++;
    this.session?.ref();
    this.health?.streams(1);
  }

  streamClosed(): void {
    this.active--;
    this.health?.streams(-1);
    this.unreserve();
  }

  /** A reserved stream that will not be opened (or was closed). */
  unreserve(): void {
    this.reserved = Math.max(0, this.reserved - 1);
    // An idle connection keeps no process alive (as an idle keep-alive socket of an HTTP/1.1 agent).
    if (this.reserved === 0) this.session?.unref();
    // Retired while it opened (no session to close then): closed once the streams it was opened for are done.
    if (this.reserved === 0 && this.closed) this.session?.close();
    this.armIdle();
  }

  /**
   * With no stream and an open session: closes it after `idleTimeoutMs` unless a stream is reserved first. The timer
   * runs on `options.scheduler` when one other than `asyncScheduler` is given (a virtual-time one: tests), else on an
   * unref'd Node timer (it keeps no process alive).
   */
  private armIdle(): void {
    if (this.reserved > 0 || this.closed || !this.opened || !this.session || this.cancelIdle) return;
    const ms = timerMs(this.options.idleTimeoutMs, DEFAULT_IDLE_CONNECTION_MS);
    if (ms === undefined) return;
    const close = () => {
      this.cancelIdle = undefined;
      if (this.reserved === 0) this.retire();
    };
    const scheduler = this.options.scheduler;
    // asyncScheduler given as such is the default's clock: an unref'd Node timer still (its own timers hold the process).
    if (scheduler && scheduler !== asyncScheduler) {
      const action = scheduler.schedule(close, ms);
      this.cancelIdle = () => action.unsubscribe();
    } else {
      const timer = setTimeout(close, ms);
      timer.unref();
      this.cancelIdle = () => clearTimeout(timer);
    }
  }

  /** Every request waiting for this connection to open gave up: stop opening it. */
  abandonIfUnused(): void {
    if (this.reserved > 0 || this.opened) return;
    this.markClosed();
    this.socket?.destroy();
  }

  /** Retired (TLS material changed): streams in flight finish, then it closes. */
  retire(): void {
    this.markClosed();
    this.session?.close();
  }

  private setStage(stage: ConnectStage): void {
    this.stage = stage;
    for (const listener of this.stageListeners) listener(stage);
  }

  private markClosed(): void {
    this.cancelIdle?.();
    this.cancelIdle = undefined;
    if (this.closed) return;
    this.closed = true;
    this.onClosed(this);
  }

  private connect(url: URL, tlsOptions: tls.ConnectionOptions, forceH2: boolean, handshakeMs: number | undefined): Promise<Negotiated> {
    return new Promise<Negotiated>((resolve, reject) => {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const port = Number(url.port) || (url.protocol === 'http:' ? 80 : 443);
      const secure = url.protocol === 'https:';
      const socket: net.Socket = secure
        ? tls.connect({ ...tlsOptions, host, port, ALPNProtocols: forceH2 ? ['h2'] : ['h2', 'http/1.1'] })
        : net.connect({ host, port });
      this.socket = socket;
      const failed = (error: NodeJS.ErrnoException) => {
        this.markClosed();
        this.health?.stop();
        if (forceH2 && error.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL') return reject(notOffered());
        reject(error);
      };
      socket.once('error', failed);
      socket.once('connect', () => this.setStage(secure ? 'TLS handshake' : 'response headers'));
      // Bounded once per connection (as Go's transport does): a stalled handshake fails every request waiting for it.
      if (socket instanceof tls.TLSSocket) limitHandshake(socket, handshakeMs);
      const start = () => {
        if (socket instanceof tls.TLSSocket && socket.alpnProtocol !== 'h2') {
          socket.off('error', failed);
          this.opened = true;
          this.markClosed();
          if (!forceH2) return resolve({ h2: false, socket });
          socket.destroy();
          return reject(notOffered());
        }
        this.setStage('response headers');
        const session = http2.connect(url.origin, {
          createConnection: () => socket,
          settings: { enablePush: false, initialWindowSize: STREAM_WINDOW },
        });
        this.session = session;
        // Dead by PING: out of the pool first, so no request picks the session being destroyed.
        const health = new PingHealth(session, this.options, (error) => {
          this.markClosed();
          session.destroy(error);
        });
        this.health = health;
        session.on('error', () => undefined); // reported by the streams it fails
        session.on('remoteSettings', (settings) => {
          health.read();
          this.maxStreams = this.advertised = settings.maxConcurrentStreams ?? 2 ** 32 - 1;
        });
        session.on('ping', () => health.read());
        session.on('goaway', () => this.markClosed());
        session.on('close', () => {
          health.stop();
          this.markClosed();
        });
        // Ready once the server's SETTINGS arrived: requests then know its concurrency limit.
        session.once('remoteSettings', (settings) => {
          socket.off('error', failed);
          // Its first SETTINGS allow no stream: nothing can be sent on it, and dialing again would meet the same.
          if (settings.maxConcurrentStreams === 0) {
            this.markClosed();
            health.stop();
            session.destroy();
            return reject(noStreams());
          }
          try {
            session.setLocalWindowSize(CONNECTION_WINDOW);
          } catch {
            // Not fatal: the default window is smaller, that is all.
          }
          if (this.reserved === 0) session.unref();
          this.opened = true;
          this.armIdle();
          resolve({ h2: true });
        });
        session.once('close', () => reject(Object.assign(new Error('the HTTP/2 connection closed while opening'), { code: 'ECONNRESET' })));
      };
      if (socket instanceof tls.TLSSocket) socket.once('secureConnect', start);
      else socket.once('connect', start);
    });
  }
}
