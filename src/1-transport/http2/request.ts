import * as http2 from 'node:http2';
import type * as https from 'node:https';
import type * as tls from 'node:tls';
import type { ConnectStage } from './connection.ts';
import type { Http2Options } from './health.ts';
import { reserveStream } from './pool.ts';
import type { Http2Connection } from './connection.ts';
import { Http2Error, Http2Response, http2Failure, type HttpResponse } from './response.ts';
import type { InformerError } from '../../0-model/errors.ts';

/**
 * Which HTTP version a request uses: `auto` asks for HTTP/2 over TLS (ALPN)
 * and falls back to HTTP/1.1 when the server does not offer it, `h2` insists
 * (also over `http:`, as h2c with prior knowledge), `http1` never asks.
 */
export type HttpProtocol = 'auto' | 'h2' | 'http1';

/** The callbacks of one request (http/request.ts's `get`). */
export interface Http2Exchange {
  readonly signal: AbortSignal;
  stage(stage: ConnectStage): void;
  response(response: HttpResponse): void;
  /** The request failed before its response headers (an HTTP/2 failure comes as an {@link Http2Error}). */
  error(error: NodeJS.ErrnoException): void;
  /** An HTTP/2 failure after the headers, as the request reports it (the response's `failure`). */
  failure?(error: Http2Error): InformerError;
}

/** A request sent over HTTP/2 (`sent`: cancel it), or one to send over HTTP/1.1 (on `socket`, when ALPN gave one). */
export type Http2Outcome = { readonly sent: { destroy(): void } } | { readonly sent?: undefined; readonly socket?: tls.TLSSocket };

/** Connections a request tries (GOAWAY, or full) before it opens its stream wherever it is. */
const MAX_ATTEMPTS = 8;

/** Times a request refused unprocessed is sent again. */
const MAX_REFUSED = 2;

/** What an aborted request resolves to: nothing to cancel. */
const NOTHING_SENT: Http2Outcome = { sent: { destroy: () => undefined } };

/**
 * Every connection a pool slot may open is open, and each is full or refused this request's stream: the request fails
 * (a `ProtocolError`, backed off) rather than dial another. The message says which.
 */
const tooManyConnections = ({ open, refused }: { readonly open: number; readonly refused: number }) =>
  new Http2Error(
    refused === 0
      ? `every HTTP/2 connection to the API server is full (${open} open, the most http2.maxConnections allows; ` +
          `the server's SETTINGS_MAX_CONCURRENT_STREAMS reached on each)`
      : `the API server refused the HTTP/2 stream (REFUSED_STREAM) on ${refused === 1 ? '1 connection' : `${refused} connections`}, ` +
          `and no other may be opened (${open} open, the most http2.maxConnections allows` +
          (open > refused ? `; the server's SETTINGS_MAX_CONCURRENT_STREAMS reached on the other ${open - refused})` : ')'),
    'ERR_HTTP2_TOO_MANY_CONNECTIONS',
    true,
    undefined,
  );

/** Headers HTTP/2 forbids (RFC 9113, 8.2.2); Node throws on them. */
const CONNECTION_HEADERS = new Set(['connection', 'host', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** What decides the route of one request. */
export interface Http2Route {
  /** The KubeConfig: connections are kept per KubeConfig, as HTTP/1.1 agents are. */
  readonly owner: object;
  /** Cluster, user and server (the agents' slot key). */
  readonly slotKey: string;
  /** Digest of the TLS material (the agents' digest). */
  readonly digest: string;
  readonly tlsOptions: tls.ConnectionOptions;
  /** A proxy is configured for the cluster: HTTP/1.1 through it (see docs/transport.md). */
  readonly proxied: boolean;
  readonly protocol: HttpProtocol;
  readonly options: Http2Options;
  /** A new connection's TLS handshake bound (`tlsHandshakeTimeoutMs`); undefined: none of its own. */
  readonly handshakeTimeoutMs?: number;
}

/**
 * Sends a request (a GET, or `options.method` with `body`) over HTTP/2 when the route allows: resolves `{ sent }` once the
 * stream is open (its response and errors then reach `exchange`), or `{}` (with
 * the ALPN socket when there is one) when this request is to go over HTTP/1.1.
 * Request headers (credentials included) are the ones the KubeConfig put on
 * `options` for this very request, so rotating tokens work as over HTTP/1.1.
 */
export function http2Get(
  url: URL,
  options: https.RequestOptions,
  route: Http2Route,
  exchange: Http2Exchange,
  body?: Buffer,
): Promise<Http2Outcome> {
  return send(url, options, route, exchange, body, 0, new Set());
}

async function send(
  url: URL,
  options: https.RequestOptions,
  route: Http2Route,
  exchange: Http2Exchange,
  body: Buffer | undefined,
  refused: number,
  refusedBy: ReadonlySet<Http2Connection>,
): Promise<Http2Outcome> {
  if (!mayUseHttp2(url, route)) return {};
  const forceH2 = route.protocol === 'h2';
  if (route.proxied) {
    throw Object.assign(new Error('HTTP/2 through a proxy is not supported; use protocol "auto" or "http1"'), { code: 'ERR_HTTP2_PROXY' });
  }
  for (let attempt = 0; ; attempt++) {
    const { owner, slotKey, digest, tlsOptions, options: http2Options, handshakeTimeoutMs } = route;
    const reserved = reserveStream(owner, slotKey, digest, url, tlsOptions, forceH2, http2Options, refusedBy, handshakeTimeoutMs);
    const { connection } = reserved;
    if (reserved.full) {
      exchange.error(tooManyConnections(reserved.full));
      return NOTHING_SENT;
    }
    if (!connection) return {};
    const stopStages = connection.onStage((stage) => exchange.stage(stage));
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      connection.unreserve();
    };
    // Given up while the connection opens (timeout, unsubscribe): the last one to give up stops the opening.
    const giveUp = () => {
      release();
      connection.abandonIfUnused();
    };
    exchange.signal.addEventListener('abort', giveUp, { once: true });
    let negotiated;
    try {
      negotiated = await connection.ready;
    } catch (error) {
      release();
      if (!exchange.signal.aborted) exchange.error(error as NodeJS.ErrnoException);
      return NOTHING_SENT;
    } finally {
      stopStages();
      exchange.signal.removeEventListener('abort', giveUp);
    }
    if (!negotiated.h2) {
      release();
      const socket = connection.takeFallbackSocket(negotiated);
      if (exchange.signal.aborted) {
        socket?.destroy();
        return NOTHING_SENT;
      }
      return socket ? { socket } : {};
    }
    if (exchange.signal.aborted) {
      release();
      return NOTHING_SENT;
    }
    // More requests waited for this connection than the server's SETTINGS allow: the rest go to another.
    if (connection.active >= connection.maxStreams && attempt < MAX_ATTEMPTS) {
      release();
      continue;
    }
    const session = connection.session!;
    let stream: http2.ClientHttp2Stream;
    const headers = requestHeaders(url, options);
    try {
      stream = session.request(headers, { endStream: body === undefined });
      if (body !== undefined) stream.end(body);
    } catch (error) {
      // GOAWAY or closing between the reservation and now: once more on another connection.
      release();
      connection.retire();
      if (attempt < MAX_ATTEMPTS) continue;
      exchange.error(error as NodeJS.ErrnoException);
      return NOTHING_SENT;
    }
    // A stream the server refused unprocessed (REFUSED_STREAM, as after a GOAWAY) is sent once more, on another
    // connection: not one that refused it (that one goes on serving other streams).
    const again =
      refused < MAX_REFUSED ? () => send(url, options, route, exchange, body, refused + 1, new Set([...refusedBy, connection])) : undefined;
    return { sent: watchStream(connection, stream, exchange, again, () => headerListBytes(headers)) };
  }
}

/** Whether a request to `url` may go over HTTP/2 at all (when not, it goes over HTTP/1.1 without a pause). */
export function mayUseHttp2(url: URL, route: Pick<Http2Route, 'protocol' | 'proxied'>): boolean {
  if (route.protocol === 'http1') return false;
  return route.protocol === 'h2' || (url.protocol === 'https:' && !route.proxied);
}

/** `options`' headers as HTTP/2's: their values are checked before (../http/headerValues.ts), as Node's HTTP/2 client checks none. */
function requestHeaders(url: URL, options: https.RequestOptions): http2.OutgoingHttpHeaders {
  const headers: http2.OutgoingHttpHeaders = { ':method': options.method ?? 'GET', ':path': url.pathname + url.search };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    const lower = name.toLowerCase();
    if (value !== undefined && !CONNECTION_HEADERS.has(lower)) headers[lower] = value;
  }
  // Basic auth: client-node sets `auth`, which https.request turns into this header.
  if (options.auth && headers['authorization'] === undefined)
    headers['authorization'] = `Basic ${Buffer.from(options.auth).toString('base64')}`;
  return headers;
}

/** A header list's size as HTTP/2 counts it (RFC 9113 6.5.2: each name and value in octets, plus 32). */
function headerListBytes(headers: http2.OutgoingHttpHeaders): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(headers))
    for (const v of Array.isArray(value) ? value : [value]) bytes += Buffer.byteLength(name) + Buffer.byteLength(String(v)) + 32;
  return bytes;
}

/**
 * Node could not send this request's HEADERS (or another frame of it): nghttp2 refuses a header block over the
 * session's `maxSendHeaderBlockLength` (64 KiB, Node's default) before writing it, and closes the stream with
 * REFUSED_STREAM, the code a server's refusal has. Ours, not the server's: it never saw the stream, and sending it
 * again (on another connection) fails alike. A `ProtocolError`, backed off.
 */
function unsentFrame(type: number, code: number, headerBytes: number): Http2Error {
  const frame = FRAME_TYPES[type] ?? `frame type ${type}`;
  const size =
    type === HEADERS_FRAME ? `; ${headerBytes.toLocaleString('en-US')} bytes of request headers, the URL's path and query included` : '';
  return new Http2Error(
    `Node could not send the request's HTTP/2 ${frame} frame (error code ${code}${size}): over its own limits (a header block past ` +
      `maxSendHeaderBlockLength, 64 KiB by default), not sent; the API server never saw the request`,
    'ERR_HTTP2_FRAME_ERROR',
    true,
    undefined,
  );
}

const HEADERS_FRAME = 1;
/** HTTP/2 frame types by number (RFC 9113, section 6). */
const FRAME_TYPES = [
  'DATA',
  'HEADERS',
  'PRIORITY',
  'RST_STREAM',
  'SETTINGS',
  'PUSH_PROMISE',
  'PING',
  'GOAWAY',
  'WINDOW_UPDATE',
  'CONTINUATION',
];

function watchStream(
  connection: NonNullable<ReturnType<typeof reserveStream>['connection']>,
  stream: http2.ClientHttp2Stream,
  exchange: Http2Exchange,
  again: (() => Promise<Http2Outcome>) | undefined,
  headerBytes: () => number,
): { destroy(): void } {
  const health = connection.health!;
  let retried: { destroy(): void } | undefined;
  connection.streamOpened();
  let responded = false;
  let reported = false;
  /** A frame of this request Node could not send (see {@link unsentFrame}): the failure, never a refusal to retry. */
  let unsent: Http2Error | undefined;
  const report = (error: NodeJS.ErrnoException) => {
    if (responded || reported) return;
    reported = true;
    exchange.error(unsent ?? http2Failure(error, stream.rstCode) ?? error);
  };
  // Emitted before the stream's 'error' and 'close' (Node's `frameError`: a frame it failed to send).
  stream.on('frameError', (type: number, code: number) => {
    if (!responded) unsent ??= unsentFrame(type, code, headerBytes());
  });
  stream.on('response', (headers, flags) => {
    health.read();
    responded = true;
    exchange.response(new Http2Response(stream, headers, () => health.read(), exchange.failure?.bind(exchange), flags));
  });
  const refused = () =>
    !responded &&
    unsent === undefined &&
    again !== undefined &&
    stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM &&
    !exchange.signal.aborted;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (!refused()) report(error);
  });
  stream.on('close', () => {
    connection.streamClosed();
    if (!reported && refused() && again) {
      reported = true;
      void again().then((outcome) => {
        if (outcome.sent) retried = outcome.sent;
        else {
          outcome.socket?.destroy();
          exchange.error(Object.assign(new Error('the server refused the HTTP/2 stream (REFUSED_STREAM)'), { code: 'ECONNRESET' }));
        }
      });
      return;
    }
    report(
      Object.assign(new Error(`the HTTP/2 stream closed before the response headers (error code ${stream.rstCode ?? 'none'})`), {
        code: 'ECONNRESET',
      }),
    );
  });
  return {
    destroy: () => {
      retried?.destroy();
      if (!stream.closed && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
    },
  };
}
