import type { IncomingHttpHeaders } from 'node:http';
import { createGunzip, type Gunzip } from 'node:zlib';
import { InformerError, type ErrorPhase } from '../../0-model/errors.ts';
import type { HttpResponse } from '../http2/response.ts';

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

/** An identity response: read as it is, its bytes counted. */
class CountedResponse implements HttpResponse {
  private readonly inner: HttpResponse;

  constructor(inner: HttpResponse) {
    this.inner = inner;
  }

  get statusCode(): number | undefined {
    return this.inner.statusCode;
  }

  get headers(): IncomingHttpHeaders {
    return this.inner.headers;
  }

  get complete(): boolean {
    return this.inner.complete;
  }

  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close' | 'end', listener: () => void): this;
  on(event: 'data' | 'error' | 'close' | 'end', listener: ((chunk: Buffer) => void) | ((error: Error) => void) | (() => void)): this {
    if (event === 'data') {
      const read = listener as (chunk: Buffer) => void;
      this.inner.on('data', (chunk: Buffer) => {
        counts.identityBytes += chunk.length;
        read(chunk);
      });
    } else this.inner.on(event as 'close', listener as () => void);
    return this;
  }

  setTimeout(ms: number, callback: () => void): this {
    this.inner.setTimeout(ms, callback);
    return this;
  }

  destroy(error?: Error): this {
    this.inner.destroy(error);
    return this;
  }

  pause(): this {
    this.inner.pause();
    return this;
  }

  resume(): this {
    this.inner.resume();
    return this;
  }
}

/**
 * A gzip response, inflated as it streams in. Reading stops where the reader stops: a reader that
 * destroys it at its byte limit (a compression bomb) destroys the inflater with the request, so no more
 * than one inflated chunk (16 KiB) past the limit is ever made. The wire is paused while the inflater is
 * behind. A body that does not inflate (corrupt, or cut short inside a response that ended cleanly) is
 * `MalformedLine` ({@link HttpResponse.failure}); `complete` only once the inflater has ended too.
 */
class GunzipResponse implements HttpResponse {
  private readonly inner: HttpResponse;
  private readonly gunzip: Gunzip;
  private inflated = false;
  private closed = false;
  private readonly closeListeners: (() => void)[] = [];
  failure: InformerError | undefined;

  constructor(inner: HttpResponse, what: string, phase: ErrorPhase) {
    this.inner = inner;
    const gunzip = (this.gunzip = createGunzip());
    let wire = 0;
    inner.on('data', (chunk: Buffer) => {
      wire += chunk.length;
      counts.gzipWireBytes += chunk.length;
      if (gunzip.destroyed) return;
      if (!gunzip.write(chunk)) inner.pause();
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
      this.failure = new InformerError('MalformedLine', `${what}: ${detail}; aborted`, { phase, status: inner.statusCode });
      inner.destroy();
      this.close();
    });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  get statusCode(): number | undefined {
    return this.inner.statusCode;
  }

  get headers(): IncomingHttpHeaders {
    return this.inner.headers;
  }

  /** The server ended the response and the whole body inflated. */
  get complete(): boolean {
    return this.inflated && this.inner.complete && this.failure === undefined;
  }

  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close' | 'end', listener: () => void): this;
  on(event: 'data' | 'error' | 'close' | 'end', listener: ((chunk: Buffer) => void) | ((error: Error) => void) | (() => void)): this {
    if (event === 'data') {
      const read = listener as (chunk: Buffer) => void;
      this.gunzip.on('data', (chunk: Buffer) => {
        counts.gzipDecodedBytes += chunk.length;
        read(chunk);
      });
    } else if (event === 'close') this.closeListeners.push(listener as () => void);
    else if (event === 'end') this.gunzip.on('end', listener as () => void);
    else this.inner.on('error', listener as (error: Error) => void);
    return this;
  }

  /** Idle on the wire: an inflater busy with a bomb is not the server being silent. */
  setTimeout(ms: number, callback: () => void): this {
    this.inner.setTimeout(ms, callback);
    return this;
  }

  destroy(error?: Error): this {
    this.gunzip.destroy();
    this.inner.destroy(error);
    return this;
  }

  pause(): this {
    this.gunzip.pause();
    return this;
  }

  resume(): this {
    this.gunzip.resume();
    return this;
  }
}
