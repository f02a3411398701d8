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

/**
 * The response of one HTTP/2 stream as an {@link HttpResponse}. Reading it
 * reads the stream (no copy, no buffering here); every chunk read counts as
 * activity of the connection (`onRead`), which postpones its next PING.
 */
export class Http2Response implements HttpResponse {
  readonly statusCode: number | undefined;
  readonly headers: IncomingHttpHeaders;
  private ended = false;
  private readonly stream: ClientHttp2Stream;
  private readonly onRead: () => void;

  constructor(stream: ClientHttp2Stream, headers: Http2Headers, onRead: () => void) {
    this.stream = stream;
    this.onRead = onRead;
    const status = headers[':status'];
    this.statusCode = typeof status === 'number' ? status : undefined;
    const plain: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) if (!name.startsWith(':')) (plain as Record<string, unknown>)[name] = value;
    this.headers = plain;
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

  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'close' | 'end', listener: () => void): this;
  on(event: 'data' | 'error' | 'close' | 'end', listener: ((chunk: Buffer) => void) | ((error: Error) => void) | (() => void)): this {
    if (event === 'data') {
      const read = listener as (chunk: Buffer) => void;
      this.stream.on('data', (chunk: Buffer) => {
        this.onRead();
        read(chunk);
      });
    } else this.stream.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  setTimeout(ms: number, callback: () => void): this {
    this.stream.setTimeout(ms, callback);
    return this;
  }

  destroy(error?: Error): this {
    this.stream.destroy(error);
    return this;
  }

  pause(): this {
    this.stream.pause();
    return this;
  }

  resume(): this {
    this.stream.resume();
    return this;
  }
}
