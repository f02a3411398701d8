import { errorFromStatus, InformerError, type ErrorPhase } from '../../0-model/errors.ts';
import { parseRetryAfter } from '../../0-model/retryAfter.ts';
import type { HttpResponse } from '../http2/response.ts';
import { ChunkGatherer, PendingBytes } from '../chunks.ts';
import { decodeObjectBody, isProtobuf } from '../protobuf/decode.ts';
import { readsSocketMemory } from './encoding.ts';
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
}

/** Frees the memory behind `buffers` now (detached: every view of it reads as empty). */
function free(buffers: ReadonlySet<ArrayBuffer>): void {
  for (const buffer of buffers) {
    try {
      (buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer }).transfer?.(0);
    } catch {
      // Not an error of the read: a buffer that cannot be detached is freed by the collector, as any other.
    }
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
  const reads =
    typeof onBody !== 'function' && onBody.keepsNoBytes === true && readsSocketMemory(response) ? new Set<ArrayBuffer>() : undefined;
  const gathered =
    typeof onBody === 'function'
      ? undefined
      : new ChunkGatherer((bytes, slab) => {
          if (slab && reads && bytes.buffer instanceof ArrayBuffer) reads.add(bytes.buffer);
          onBody.chunk(bytes);
        });
  let bytes = 0;
  let over = false;
  const tooLarge = (seen: string) => {
    over = true;
    progress?.stop();
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
      whole?.clear();
      response.destroy();
      onError(slow);
    },
  );
  response.on('data', (chunk: Buffer) => {
    if (over) return;
    bytes += chunk.length;
    if (bytes > limit.maxBytes) return tooLarge(`${bytes} bytes read`);
    if (whole) whole.append(chunk);
    else gathered!.push(chunk);
    if (reads && chunk.buffer instanceof ArrayBuffer) reads.add(chunk.buffer);
  });
  response.on('close', () => {
    progress?.stop();
    if (over) return;
    if (!response.complete) {
      if (response.failure) return onError(response.failure);
      onError(
        new InformerError('NetworkError', `${phase}: the connection closed before the response was complete`, {
          phase,
          status: response.statusCode,
        }),
      );
      return;
    }
    if (typeof onBody === 'function') return onBody(whole!.view());
    gathered!.flush();
    onBody.end();
    if (reads) free(reads);
  });
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
  const retryAfter = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined;
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
