import type { IncomingHttpHeaders } from 'node:http';
import { constants, type ClientHttp2Stream, type IncomingHttpHeaders as Http2Headers } from 'node:http2';
import type { InformerError } from '../../0-model/errors.ts';

/**
 * What the transport reads of a response, whatever the HTTP version: an
 * `http.IncomingMessage` is one, and {@link Http2Response} makes an HTTP/2
 * stream look like one, so both go through the same response handling.
 */
export interface HttpResponse {
  readonly statusCode?: number | undefined;
  readonly headers: IncomingHttpHeaders;
  /** True once the whole body arrived (the server ended the response, not the connection). */
  readonly complete: boolean;
  /** Why the body could not be read to its end though the server sent it (a gzip body that does not inflate). */
  readonly failure?: InformerError | undefined;
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close' | 'end', listener: () => void): this;
  /** Calls `callback` once no byte arrived for `ms`. */
  setTimeout(ms: number, callback: () => void): this;
  destroy(error?: Error): this;
  pause(): this;
  resume(): this;
}

/** What a response reads its body from and steers: an HTTP/2 stream, an inflater, another response. */
export interface ResponseBody {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  destroy(error?: Error): unknown;
  pause(): unknown;
  resume(): unknown;
}

/** What a response came over: the body's events other than `data`, the idle timeout and `destroy` go to it. */
export interface ResponseWire extends ResponseBody {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'close' | 'end', listener: () => void): unknown;
  setTimeout(ms: number, callback: () => void): unknown;
}

/**
 * The shape every {@link HttpResponse} made over a stream shares: `data` is read from `body` (each chunk
 * shown to {@link seen} before the reader), `error`/`close`/`end` from `wire` unless {@link listen} says
 * otherwise; `pause`/`resume` steer `body`; `destroy` ends `body` and `wire`; the idle timeout is the wire's
 * (an inflater busy with a bomb is not the server being silent). Status and headers are read from `head`.
 */
export abstract class StreamResponse implements HttpResponse {
  abstract readonly complete: boolean;
  private readonly head: Pick<HttpResponse, 'statusCode' | 'headers'>;
  private readonly wire: ResponseWire;
  private readonly body: ResponseBody;

  protected constructor(head: Pick<HttpResponse, 'statusCode' | 'headers'>, wire: ResponseWire, body: ResponseBody = wire) {
    this.head = head;
    this.wire = wire;
    this.body = body;
  }

  get statusCode(): number | undefined {
    return this.head.statusCode;
  }

  get headers(): IncomingHttpHeaders {
    return this.head.headers;
  }

  /** Called with every body chunk before the reader gets it (to count it, or to note activity). */
  protected abstract seen(chunk: Buffer): void;

  /** Where `error`, `close` and `end` listeners go: the wire. */
  protected listen(event: 'error' | 'close' | 'end', listener: () => void): void {
    this.wire.on(event as 'close', listener);
  }

  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close' | 'end', listener: () => void): this;
  on(event: 'data' | 'error' | 'close' | 'end', listener: ((chunk: Buffer) => void) | ((error: Error) => void) | (() => void)): this {
    if (event === 'data') {
      const read = listener as (chunk: Buffer) => void;
      this.body.on('data', (chunk: Buffer) => {
        this.seen(chunk);
        read(chunk);
      });
    } else this.listen(event, listener as () => void);
    return this;
  }

  setTimeout(ms: number, callback: () => void): this {
    this.wire.setTimeout(ms, callback);
    return this;
  }

  destroy(error?: Error): this {
    if (this.body !== this.wire) this.body.destroy();
    this.wire.destroy(error);
    return this;
  }

  pause(): this {
    this.body.pause();
    return this;
  }

  resume(): this {
    this.body.resume();
    return this;
  }
}

/**
 * The response of one HTTP/2 stream as an {@link HttpResponse}. Reading it
 * reads the stream (no copy, no buffering here); every chunk read counts as
 * activity of the connection (`onRead`), which postpones its next PING.
 */
export class Http2Response extends StreamResponse {
  private ended = false;
  /** Whether the body ended while the stream was open: the server's END_STREAM, not the stream's close. */
  private endStream = false;
  private readonly stream: ClientHttp2Stream;
  private readonly onRead: () => void;
  /** The HTTP/2 failure that ended the body early (a GOAWAY with an error code, a protocol error, a reset), in words. */
  failure: InformerError | undefined;

  /**
   * `flags`: the response HEADERS frame's (the 'response' event's second argument: END_STREAM there is an empty body).
   * `asFailure`: how the request reports an HTTP/2 failure after the headers (its phase and path).
   */
  constructor(
    stream: ClientHttp2Stream,
    headers: Http2Headers,
    onRead: () => void,
    asFailure?: (error: Http2Error) => InformerError,
    flags?: number,
  ) {
    const status = headers[':status'];
    const plain: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) if (!name.startsWith(':')) (plain as Record<string, unknown>)[name] = value;
    super({ statusCode: typeof status === 'number' ? status : undefined, headers: plain }, stream);
    this.stream = stream;
    this.onRead = onRead;
    // Node ends the body (push(null)) when the server's END_STREAM arrives, the stream still open; and, closing a
    // stream the server reset with NO_ERROR before END_STREAM, ends its body too, the stream closed by then, with
    // rstCode 0 as after a clean end, and no 'error'. Only the moment of that end tells the two apart. (END_STREAM on
    // the HEADERS, an empty body, ended it before the 'response' event: its `flags` say so.)
    this.endStream = ((flags ?? 0) & NGHTTP2_FLAG_END_STREAM) !== 0;
    const push = stream.push.bind(stream);
    stream.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
      if (chunk === null && !this.endStream && !stream.closed) this.endStream = true;
      return push(chunk, encoding);
    };
    // Not a 'data' listener: that would start the flow before the reader is there.
    stream.once('end', () => {
      this.ended = true;
      if (!this.endStream && (stream.rstCode ?? NGHTTP2_NO_ERROR) === NGHTTP2_NO_ERROR && asFailure && !this.failure)
        this.failure = asFailure(resetBeforeEnd());
    });
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // Any other error (the connection's PING timeout, a socket's) named too: else the body's end says only
      // "the connection closed before the response was complete", and the cause is lost (audit22).
      const failure = http2Failure(error, stream.rstCode) ?? asHttp2Error(error);
      if (asFailure && !this.failure) this.failure = asFailure(failure);
    });
  }

  /**
   * The server ended the stream (END_STREAM): its body ended while the stream was open, and the stream closed with
   * NO_ERROR. A stream reset by either side (RST_STREAM NO_ERROR before END_STREAM too, as Go's transport reads it:
   * an error, not the end of the body), or lost with its connection (dropped, reset, GOAWAY with an error, failed
   * PING), never is: Node ends the body of a stream whose connection closed under it too ('end' after the socket's
   * close), but closes that stream with CANCEL. (A GOAWAY NO_ERROR after which the server ends the stream is complete.)
   */
  get complete(): boolean {
    return this.ended && this.endStream && (this.stream.rstCode ?? NGHTTP2_NO_ERROR) === NGHTTP2_NO_ERROR;
  }

  protected seen(): void {
    this.onRead();
  }
}

/**
 * Who may have reset a stream: Node gives the same error for the server's RST_STREAM and for its own (a response
 * header list over its limits is reset with ENHANCE_YOUR_CALM; a stream above a GOAWAY's last-stream-id, refused), so
 * the words name both where Node's own is likely (audit22: a 5,000-header answer read as "the API server reset").
 */
function resetWords(rstCode: number): string {
  const name = codeName(rstCode);
  if (rstCode === constants.NGHTTP2_ENHANCE_YOUR_CALM)
    return `the HTTP/2 stream was reset with ${name}, by the API server or by Node for response headers over its limits`;
  if (rstCode === constants.NGHTTP2_REFUSED_STREAM)
    return `the HTTP/2 stream was reset with ${name}: refused by the API server, or left out by its GOAWAY`;
  return `the API server reset the HTTP/2 stream with ${name}`;
}

/** Any other error of a stream after its headers, as an HTTP/2 failure in its own words (a `NetworkError`). */
function asHttp2Error(error: NodeJS.ErrnoException): Http2Error {
  const code = error.code ?? 'ERR_HTTP2_STREAM';
  const message = error.code === undefined || error.message.includes(error.code) ? error.message : `${error.code} ${error.message}`;
  return new Http2Error(message, code, false, error);
}

/** RST_STREAM NO_ERROR before END_STREAM, in words: a reset like any other (a NetworkError), not a protocol error. */
function resetBeforeEnd(): Http2Error {
  const code = 'ERR_HTTP2_STREAM_ERROR';
  return new Http2Error(
    `the API server reset the HTTP/2 stream with ${codeName(NGHTTP2_NO_ERROR)} before the end of the response`,
    code,
    false,
    Object.assign(new Error('Stream closed with error code NGHTTP2_NO_ERROR before END_STREAM'), { code }),
  );
}

const { NGHTTP2_NO_ERROR, NGHTTP2_FLAG_END_STREAM } = constants;

/** HTTP/2 error codes by number (RFC 9113, section 7). */
const ERROR_CODES = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
] as const;

/** Codes that say the protocol itself was broken (by one side or the other), not that a request was reset or refused. */
const PROTOCOL_CODES = new Set([1, 3, 4, 5, 6, 9, 10, 12, 13]);

const codeName = (code: number) => `${ERROR_CODES[code] ?? 'an unknown code'} (error code ${code})`;

/**
 * An HTTP/2 failure in words, with Node's error as its `cause`. `protocol`: the HTTP/2 protocol was broken, or the
 * server ended the connection with an error code (GOAWAY) — reported as `ProtocolError`, not as a network fault.
 */
export class Http2Error extends Error {
  readonly code: string;
  readonly protocol: boolean;

  constructor(message: string, code: string, protocol: boolean, cause: unknown) {
    super(message, { cause });
    this.name = 'Http2Error';
    this.code = code;
    this.protocol = protocol;
  }
}

/**
 * What Node reports when an HTTP/2 session or stream fails, in words that say what happened (Node says
 * "Protocol error" or "Session closed with error code 11"); undefined for any other error (a socket's, a PING timeout).
 *
 * - `ERR_HTTP2_ERROR`: nghttp2 found the server's frames broke the protocol (a frame over the size limit, a header
 *   block that does not decode, DATA on stream 0, …) and closed the connection with a GOAWAY of its own.
 * - `ERR_HTTP2_SESSION_ERROR`: the server closed the connection with a GOAWAY carrying an error code.
 * - `ERR_HTTP2_STREAM_ERROR`: the server reset the stream (`RST_STREAM`) with `rstCode`; a protocol code is a
 *   protocol error, any other (INTERNAL_ERROR, CANCEL, …) a reset, as before.
 */
export function http2Failure(error: NodeJS.ErrnoException, rstCode: number | undefined): Http2Error | undefined {
  switch (error.code) {
    case 'ERR_HTTP2_ERROR':
      return new Http2Error(
        `the API server broke the HTTP/2 protocol (nghttp2: ${error.message}: a malformed frame, header block or window); the connection was closed`,
        error.code,
        true,
        error,
      );
    case 'ERR_HTTP2_SESSION_ERROR': {
      const code = Number(/error code (\d+)/.exec(error.message)?.[1] ?? Number.NaN);
      const name = Number.isInteger(code) ? codeName(code) : `an error code (${error.message})`;
      return new Http2Error(`the API server closed the HTTP/2 connection with GOAWAY ${name}`, error.code, true, error);
    }
    case 'ERR_HTTP2_STREAM_ERROR': {
      if (rstCode === undefined) return undefined;
      return new Http2Error(resetWords(rstCode), error.code, PROTOCOL_CODES.has(rstCode), error);
    }
    default:
      return undefined;
  }
}
