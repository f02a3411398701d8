import { errorFromStatus, InformerError, type ErrorPhase } from '../../0-model/errors.ts';
import { parseRetryAfter } from '../../0-model/retryAfter.ts';
import type { HttpResponse } from '../http2/response.ts';
import { ChunkGatherer, PendingBytes } from '../chunks.ts';
import { decodeObjectBody, isProtobuf } from '../protobuf/decode.ts';
import type { Socket } from 'node:net';
import { bodyMemory, free, ownMemory, type BodyMemory } from './encoding.ts';
import { formatBytes, type HttpTransportOptions, type RequestSettings } from './options.ts';
import type { BodyProgress } from './progress.ts';

// Reading a response: a bounded body (lists, documents, error Status), Retry-After, the error a non-2xx answer is.

/** How much of a response body may be read, and what to call it when it is more. */
export interface BodyLimit {
  readonly maxBytes: number;
  /** `list /api/v1/pods`. */
  readonly what: string;
  /** The option that raises it, named in the error (one of {@link HttpTransportOptions}, or a caller's own name for it). */
  readonly option: string;
  /** The error past it, given what was seen (`123 bytes read`); default: `ResponseTooLarge` naming `option`. */
  readonly tooLarge?: (seen: string) => InformerError;
}

/** The byte limit of a response: the body limit asked for when it succeeded, else the error body limit. */
export function limitFor(response: HttpResponse, success: BodyLimit, settings: RequestSettings): BodyLimit {
  if (response.statusCode === 200) return success;
  return {
    maxBytes: settings.maxErrorBodyBytes,
    what: `${success.what} (HTTP ${response.statusCode ?? 0} error body)`,
    option: 'maxErrorBodyBytes',
  };
}

/** Takes a body as it arrives, instead of whole ({@link readBody}). */
export interface BodySink {
  /** More bytes (the buffer is not reused by the response). */
  chunk(bytes: Buffer): void;
  /** The body has all arrived, complete. */
  end(): void;
  /**
   * True when the sink holds no view of the bytes it was handed once `end` returns (what it made holds copies):
   * the memory of an HTTP/1.1 response's socket reads is then freed right after `end`, rather than by the collector
   * (issue #36: the reads of a sync's list pages, ≈ 90 MB for 30,000 pods, were what ran its mark-compacts).
   */
  readonly keepsNoBytes?: boolean;
  /**
   * With `keepsNoBytes`: how many of the chunks handed to it so far (the first ones: a sink reads them in order) it
   * reads no more. Their memory is then freed before the body ends (issue #36: a sync's reads then never pile up).
   */
  chunksDone?(): number;
  /**
   * True while the sink wants each chunk as it comes rather than gathered into slabs: a list page until its metadata
   * (the continue token, before the items) has been read, so that the next page can be asked at once (./prefetch.ts).
   */
  wantsEachChunk?(): boolean;
}

/**
 * The memory behind a body handed to a sink that keeps no bytes, freed as soon as nothing reads it any more rather
 * than by the collector (issue #36: a sync's ≈ 90 MB of reads were what ran its mark-compacts): the socket's reads,
 * each once the HTTP parser has run over it (a listener after the parser's); the body chunks the parser copied out
 * of them and the gatherer's slabs, each once the sink is done with every chunk of it it was handed (`chunksDone`) and,
 * for a chunk, once a chunk of other memory has come (a read's chunks come one after another); the rest when the body
 * ends. Of a gzip body, the chunks' memory is the inflater's output buffers ({@link BodyMemory.chunkMemory}): one is
 * let go once a chunk of the next has come (zlib writes no more into it then).
 */
class Reads {
  /** Per chunk handed to the sink, in order: the memory it views. */
  private readonly handed: ArrayBufferLike[] = [];
  private done = 0;
  /** Chunks handed on and not done with, per memory they view (ours or not: a read is never freed under a view). */
  private readonly viewed = new Map<ArrayBufferLike, number>();
  /** The memory of the body chunk being handed on (it may hold more chunks to come). */
  private current: ArrayBufferLike | undefined;
  private readonly unfreed = new Set<ArrayBuffer>();
  private readonly socket: Socket | undefined;
  /** The memory of a body chunk, when ours to free (see {@link BodyMemory}). */
  private readonly chunkMemory: (chunk: Buffer) => ArrayBuffer | undefined;
  private readonly onRead = (read: Buffer) => {
    const buffer = ownMemory(read);
    if (buffer !== undefined && buffer !== this.current && !this.viewed.has(buffer)) free(buffer);
  };

  constructor({ socket, chunkMemory, wire }: BodyMemory) {
    this.socket = socket;
    this.chunkMemory = chunkMemory;
    socket?.on('data', this.onRead);
    // Once the response on the wire has ended, the socket's reads are the next response's (a keep-alive agent hands
    // it on then, while a gzip body may still be inflating): never ours to free.
    const stop = () => this.stop();
    wire.on('end', stop);
    wire.on('close', stop);
  }

  /** A body chunk arrives. */
  read(chunk: Buffer): void {
    if (chunk.buffer === this.current) return;
    const previous = this.current;
    this.current = chunk.buffer;
    const own = this.chunkMemory(chunk);
    if (own !== undefined) this.unfreed.add(own);
    if (previous !== undefined && !this.viewed.has(previous)) this.free(previous);
  }

  /** `bytes` is handed to the sink: a body chunk, a slab of the gatherer's, or a copy of its own (not ours). */
  handedOn(bytes: Buffer, slab: boolean): void {
    // A slab is the gatherer's own memory, handed on once (a view of its first bytes).
    const own = slab ? (bytes.buffer instanceof ArrayBuffer ? bytes.buffer : undefined) : this.chunkMemory(bytes);
    if (own !== undefined && (slab || own === this.current)) this.unfreed.add(own);
    this.viewed.set(bytes.buffer, (this.viewed.get(bytes.buffer) ?? 0) + 1);
    this.handed.push(bytes.buffer);
  }

  /** The sink is done with its first `count` chunks. */
  doneWith(count: number): void {
    while (this.done < count && this.done < this.handed.length) {
      const buffer = this.handed[this.done++]!;
      const left = this.viewed.get(buffer)! - 1;
      if (left > 0) this.viewed.set(buffer, left);
      else {
        this.viewed.delete(buffer);
        if (buffer !== this.current) this.free(buffer);
      }
    }
  }

  /** The response is over: no more reads of the socket are ours. */
  stop(): void {
    this.socket?.off('data', this.onRead);
  }

  /** The body has ended and the sink keeps none of it. */
  end(): void {
    for (const buffer of this.unfreed) free(buffer);
    this.unfreed.clear();
  }

  /** Frees `buffer` if it is ours (in `unfreed`): a body chunk or a slab. */
  private free(buffer: ArrayBufferLike): void {
    if (this.unfreed.delete(buffer as ArrayBuffer)) free(buffer as ArrayBuffer);
  }
}

/**
 * Reads a whole response body, then hands it over (used for documents and error Status bodies),
 * or hands it to a {@link BodySink} as it arrives (list pages). A body past its limit (declared in
 * Content-Length, or counted as it arrives) is not read further: the response is destroyed (the
 * request aborted) and `ResponseTooLarge` reported; so is a body that brings less than `progress` asks (`Timeout`,
 * see ./progress.ts). However the peer cuts the body, what is kept costs about its
 * bytes: a whole body is copied into one buffer, and a sink is handed small chunks gathered (`./chunks.ts`).
 */
export function readBody(
  response: HttpResponse,
  limit: BodyLimit,
  onBody: ((bytes: Buffer) => void) | BodySink,
  onError: (error: InformerError) => void,
  phase: ErrorPhase,
  progress?: BodyProgress,
): void {
  const whole = typeof onBody === 'function' ? new PendingBytes(limit.maxBytes) : undefined;
  // What holds the body (the socket's reads, the gatherer's slabs), freed once a sink that keeps no bytes has read it all.
  const memory = typeof onBody !== 'function' && onBody.keepsNoBytes === true ? bodyMemory(response) : undefined;
  const reads = memory === undefined ? undefined : new Reads(memory);
  const gathered =
    typeof onBody === 'function'
      ? undefined
      : new ChunkGatherer((bytes, slab) => {
          reads?.handedOn(bytes, slab);
          onBody.chunk(bytes);
          if (reads && onBody.chunksDone) reads.doneWith(onBody.chunksDone());
        });
  let bytes = 0;
  let over = false;
  const tooLarge = (seen: string) => {
    over = true;
    progress?.stop();
    reads?.stop();
    whole?.clear();
    response.destroy();
    onError(tooLargeError(limit, seen, phase, response.statusCode));
  };
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  response.on('error', () => undefined);
  if (declared > limit.maxBytes) return tooLarge(`Content-Length ${declared}`);
  progress?.start(
    () => bytes,
    (slow) => {
      over = true;
      reads?.stop();
      whole?.clear();
      response.destroy();
      onError(slow);
    },
  );
  response.on('data', (chunk: Buffer) => {
    if (over) return;
    bytes += chunk.length;
    if (bytes > limit.maxBytes) return tooLarge(`${bytes} bytes read`);
    reads?.read(chunk);
    if (whole) whole.append(chunk);
    else {
      gathered!.push(chunk);
      if ((onBody as BodySink).wantsEachChunk?.() === true) gathered!.flush();
    }
  });
  response.on('close', () => {
    progress?.stop();
    reads?.stop();
    if (over) return;
    if (!response.complete) return onError(closedEarly(response, phase));
    if (typeof onBody === 'function') return onBody(whole!.view());
    gathered!.flush();
    onBody.end();
    reads?.end();
  });
}

/** The failure of a response that closed before it was complete: its own (HTTP/2, gzip), else a `NetworkError`. */
export function closedEarly(response: HttpResponse, phase: ErrorPhase): InformerError {
  return (
    response.failure ??
    new InformerError('NetworkError', `${phase}: the connection closed before the response was complete`, {
      phase,
      status: response.statusCode,
    })
  );
}

/** The error of a body past `limit`, given what was seen (`123 bytes read`): the limit's own, or `ResponseTooLarge`. */
export function tooLargeError(limit: BodyLimit, seen: string, phase: ErrorPhase, status: number | undefined): InformerError {
  if (limit.tooLarge) return limit.tooLarge(seen);
  const message = `${limit.what}: the response is larger than the ${formatBytes(limit.maxBytes)} limit (${seen}); aborted (option ${limit.option})`;
  return new InformerError('ResponseTooLarge', message, { phase, status });
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function httpError(response: HttpResponse, body: Buffer, phase: ErrorPhase): InformerError {
  const status = response.statusCode ?? 0;
  // client-go honours Retry-After on a 429 and on any 5xx (checkWait, rest/with_retry.go).
  const retryAfter = status === 429 || status >= 500 ? parseRetryAfter(response.headers['retry-after']) : undefined;
  return errorFromStatus(status, statusObject(response, body), phase, retryAfter);
}

/** An error body's Status: JSON, or protobuf when the response says so (undefined when it is neither). */
function statusObject(response: HttpResponse, body: Buffer): unknown {
  if (!isProtobuf(response.headers['content-type'])) return parseJson(body.toString('utf8'));
  try {
    return decodeObjectBody(body);
  } catch {
    // Not swallowed: the error is the HTTP status's, without a Status to read (as an error body that is not JSON).
    return undefined;
  }
}
