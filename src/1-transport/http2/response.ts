import type { IncomingHttpHeaders } from 'node:http';
import type { ClientHttp2Stream, IncomingHttpHeaders as Http2Headers } from 'node:http2';
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
  private readonly onRead: () => void;

  constructor(stream: ClientHttp2Stream, headers: Http2Headers, onRead: () => void) {
    const status = headers[':status'];
    const plain: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) if (!name.startsWith(':')) (plain as Record<string, unknown>)[name] = value;
    super({ statusCode: typeof status === 'number' ? status : undefined, headers: plain }, stream);
    this.onRead = onRead;
    // Not a 'data' listener: that would start the flow before the reader is there.
    stream.once('end', () => (this.ended = true));
  }

  /**
   * The server ended the stream (END_STREAM). A stream reset by either side,
   * or lost with its connection (GOAWAY with an error, failed PING), never is.
   */
  get complete(): boolean {
    return this.ended;
  }

  protected seen(): void {
    this.onRead();
  }
}
