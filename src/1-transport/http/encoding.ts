import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { createGunzip, type Gunzip } from 'node:zlib';
import { InformerError, type ErrorPhase } from '../../0-model/errors.ts';
import { StreamResponse, type HttpResponse } from '../http2/response.ts';

// Content-Encoding: a gzip body is inflated as it streams in (every reader downstream, and every byte limit,
// sees inflated bytes only), an identity body passes as it is; both are counted, on the wire and decoded.

/** Body bytes this process received over HTTP (lists, watches, discovery, error bodies), per Content-Encoding. */
export interface TransportBytes {
  /** Responses whose body came as it is. */
  readonly identityResponses: number;
  /** Their body bytes (on the wire and decoded alike). */
  readonly identityBytes: number;
  /** Responses whose body came gzipped. */
  readonly gzipResponses: number;
  /** Their body bytes as they came over the wire (compressed). */
  readonly gzipWireBytes: number;
  /** Their body bytes once inflated: `gzipDecodedBytes - gzipWireBytes` is what compression saved. */
  readonly gzipDecodedBytes: number;
}

const counts = { identityResponses: 0, identityBytes: 0, gzipResponses: 0, gzipWireBytes: 0, gzipDecodedBytes: 0 };

/**
 * What the HTTP transport has received since the process started, counted as bytes arrive (a snapshot).
 * Shared by every informer and request of the process; served as `informer_transport_*` by `serve()`.
 */
export function transportBytes(): TransportBytes {
  return { ...counts };
}

/**
 * The response as its readers see it: gzip inflated as it streams in, identity counted on its way, or an
 * error (the response is destroyed) for an encoding nobody asked for, rather than its bytes read as JSON.
 */
export function decodeResponse(response: HttpResponse, what: string, phase: ErrorPhase): HttpResponse | InformerError {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (encoding === '' || encoding === 'identity') {
    counts.identityResponses++;
    return new CountedResponse(response);
  }
  if (encoding === 'gzip' || encoding === 'x-gzip') {
    counts.gzipResponses++;
    return new GunzipResponse(response, what, phase);
  }
  response.on('error', () => undefined);
  response.destroy();
  const shown = encoding.length > 40 ? `${encoding.slice(0, 40)}…` : encoding;
  return new InformerError(
    'MalformedLine',
    `${what}: the response came in Content-Encoding ${JSON.stringify(shown)}, not asked for; aborted`,
    {
      phase,
      status: response.statusCode,
    },
  );
}

/** Frees the memory behind `buffer` now (detached: every view of it reads as empty). */
export function free(buffer: ArrayBuffer): void {
  try {
    (buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer }).transfer?.(0);
  } catch {
    // Not an error of the read: a buffer that cannot be detached (Node's pool) is freed by the collector, as any other.
  }
}

/** Whether `bytes` is all of its memory (not a slice of a larger buffer, such as Node's pool): then ours to free. */
export const ownMemory = (bytes: Buffer): ArrayBuffer | undefined =>
  bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.length === bytes.buffer.byteLength ? bytes.buffer : undefined;

/**
 * The inflater's output buffer (zlib's `chunkSize`). At least half of Node's `Buffer.poolSize` (64 KiB in Node 24),
 * `Buffer.allocUnsafe` gives each one memory of its own rather than a slice of the shared pool, so that a reader may
 * free it (issue #36: the pool's 16 KiB slices were what a gzip sync's mark-compacts collected); and 4× fewer round
 * trips to the thread pool than the default 16 KiB (a gzip sync's inflating: 0.4× the CPU, measured).
 */
export const INFLATE_CHUNK = 64 * 1024;

/**
 * The memory of an inflated chunk when it is ours to free: a slice of one of the inflater's output buffers. Node's
 * zlib (lib/zlib.js, `processCallback`) writes each output buffer from its start on, hands each piece on as a slice of
 * it, and once it is full allocates a new one (`Buffer.allocUnsafe(chunkSize)`) and never writes the old one again: a
 * chunk of another output buffer means it is done with the previous one. Each output buffer is an ArrayBuffer of
 * exactly {@link INFLATE_CHUNK} bytes that it alone views; only if `Buffer.poolSize` was raised past twice the chunk is
 * it a slice of Node's pool, which is then larger. (A pool of that size, as Node 24's, may pass this test when a reader
 * asks about a pooled copy: it is then never the chunk being read, so never freed, and Node's pool cannot be
 * detached anyway.)
 */
const inflatedMemory = (chunk: Buffer): ArrayBuffer | undefined =>
  chunk.buffer instanceof ArrayBuffer && chunk.buffer.byteLength === INFLATE_CHUNK ? chunk.buffer : undefined;

/** Where a response's body chunks come from, for a reader that frees them once read ({@link bodyMemory}). */
export interface BodyMemory {
  /**
   * The HTTP/1.1 socket: each of its reads is memory of its own, which Node's HTTP parser copies the body out of.
   * Undefined over HTTP/2 (DATA frames may be slices of the session's reads: never ours), where only a gzip body's
   * inflater buffers are.
   */
  readonly socket: Socket | undefined;
  /**
   * The memory behind a body chunk when it is ours to free once nothing reads it (undefined when it is not): the
   * HTTP parser's copy of a body piece (identity), or the inflater's output buffer it is a slice of (gzip), which
   * is done with once a chunk of another memory has come (the chunks of one memory come one after another).
   */
  readonly chunkMemory: (chunk: Buffer) => ArrayBuffer | undefined;
  /**
   * The response on the wire (under the inflater, for gzip): once it has ended, the socket's further reads are the next
   * response's (a keep-alive agent hands the socket on at that end, while an inflater may still be at work).
   */
  readonly wire: HttpResponse;
}

/**
 * Where the body of a response comes from, for readers that free its memory once read (`readBody`'s sinks that keep
 * no bytes): over HTTP/1.1 (TCP or TLS) the socket's reads and the body chunks, identity or inflated; over HTTP/2 only
 * a gzip body's inflater buffers (DATA frames may be slices of the session's reads), else undefined.
 */
export function bodyMemory(response: HttpResponse): BodyMemory | undefined {
  if (response instanceof GunzipResponse) return { socket: response.socket, chunkMemory: inflatedMemory, wire: response.wireResponse };
  const socket = response instanceof CountedResponse ? response.socket : undefined;
  return socket === undefined ? undefined : { socket, chunkMemory: ownMemory, wire: (response as CountedResponse).wireResponse };
}

/** The socket of an HTTP/1.1 response (undefined over HTTP/2). */
function socketUnder(response: HttpResponse): Socket | undefined {
  return response instanceof IncomingMessage && response.socket instanceof Socket ? response.socket : undefined;
}

/** An identity response: read as it is, its bytes counted. */
class CountedResponse extends StreamResponse {
  private readonly inner: HttpResponse;

  constructor(inner: HttpResponse) {
    super(inner, inner);
    this.inner = inner;
  }

  get complete(): boolean {
    return this.inner.complete;
  }

  get socket(): Socket | undefined {
    return socketUnder(this.inner);
  }

  /** The response it reads. */
  get wireResponse(): HttpResponse {
    return this.inner;
  }

  /** Why the body under it ended early, when its wire says (an HTTP/2 GOAWAY with an error code, say). */
  get failure(): InformerError | undefined {
    return this.inner.failure;
  }

  protected seen(chunk: Buffer): void {
    counts.identityBytes += chunk.length;
  }
}

/**
 * A gzip response, inflated as it streams in. Reading stops where the reader stops: a reader that
 * destroys it at its byte limit (a compression bomb) destroys the inflater with the request, so no more
 * than one inflated chunk ({@link INFLATE_CHUNK}) past the limit is ever made. The wire is paused while the inflater is
 * behind. A body that does not inflate (corrupt, or cut short inside a response that ended cleanly) is
 * `MalformedLine` ({@link HttpResponse.failure}); `complete` only once the inflater has ended too.
 */
class GunzipResponse extends StreamResponse {
  private readonly inner: HttpResponse;
  private readonly gunzip: Gunzip;
  private inflated = false;
  private closed = false;
  private readonly closeListeners: (() => void)[] = [];
  private inflateFailure: InformerError | undefined;

  constructor(inner: HttpResponse, what: string, phase: ErrorPhase) {
    const gunzip = createGunzip({ chunkSize: INFLATE_CHUNK });
    super(inner, inner, gunzip);
    this.inner = inner;
    this.gunzip = gunzip;
    // Over HTTP/1.1 each compressed piece is the HTTP parser's copy, memory of its own that only the inflater reads:
    // freed once it has read it all (its write's callback: zlib lets go of the input then), not by the collector.
    const http1 = socketUnder(inner) !== undefined;
    let wire = 0;
    inner.on('data', (chunk: Buffer) => {
      wire += chunk.length;
      counts.gzipWireBytes += chunk.length;
      if (gunzip.destroyed) return;
      const own = http1 ? ownMemory(chunk) : undefined;
      const written = own === undefined ? gunzip.write(chunk) : gunzip.write(chunk, (error) => void (error ?? free(own)));
      if (!written) inner.pause();
    });
    gunzip.on('drain', () => inner.resume());
    inner.on('end', () => {
      if (gunzip.destroyed) return;
      if (wire > 0) return void gunzip.end();
      // No body at all (a proxy's empty error page marked gzip): empty, not a gzip stream cut short.
      gunzip.destroy();
      this.inflated = true;
      this.close();
    });
    inner.on('error', () => undefined);
    inner.on('close', () => {
      // Ended cleanly: the inflater finishes what it holds, then this closes.
      if (inner.complete && !gunzip.destroyed) return;
      gunzip.destroy();
      this.close();
    });
    gunzip.on('end', () => {
      this.inflated = true;
      this.close();
    });
    gunzip.on('error', (error: NodeJS.ErrnoException) => {
      const detail =
        error.code === 'Z_BUF_ERROR' ? 'the gzip body ended early' : `the gzip body is corrupt (${error.code ?? error.message})`;
      this.inflateFailure = new InformerError('MalformedLine', `${what}: ${detail}; aborted`, { phase, status: inner.statusCode });
      inner.destroy();
      this.close();
    });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  get socket(): Socket | undefined {
    return socketUnder(this.inner);
  }

  /** The response under the inflater. */
  get wireResponse(): HttpResponse {
    return this.inner;
  }

  /** The body did not inflate, or the response under it failed (an HTTP/2 GOAWAY with an error code, say). */
  get failure(): InformerError | undefined {
    return this.inflateFailure ?? this.inner.failure;
  }

  /** The server ended the response and the whole body inflated. */
  get complete(): boolean {
    return this.inflated && this.inner.complete && this.failure === undefined;
  }

  protected seen(chunk: Buffer): void {
    counts.gzipDecodedBytes += chunk.length;
  }

  /**
   * The wire's idle timer, unless the wire has ended: its socket then carries another response (a keep-alive agent's),
   * and the inflater holds what is left (a response read later than it arrived: a page asked ahead, ./prefetch.ts).
   */
  override setTimeout(ms: number, callback: () => void): this {
    if (!this.inner.complete) super.setTimeout(ms, callback);
    return this;
  }

  /** `close` once the inflater is done (or given up), `end` when it ends, `error` from the wire. */
  protected override listen(event: 'error' | 'close' | 'end', listener: () => void): void {
    if (event === 'close') this.closeListeners.push(listener);
    else if (event === 'end') this.gunzip.on('end', listener);
    else this.inner.on('error', listener);
  }
}
