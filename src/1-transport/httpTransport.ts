import { Observable, catchError, throwError, type MonoTypeOperatorFunction, type Subscriber } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import { toPartialObjectMetadata } from '../0-model/metadata.ts';
import { LineSplitter, type LineBytesSink, type LineSink } from './lineSplitter.ts';
import {
  isInitialEventsEnd,
  overlongQueryValue,
  type LinedFrame,
  type ListOptions,
  type ListPage,
  type ListWatch,
  type WatchFrame,
  type WatchOptions,
} from './listWatch.ts';
import { hasOtherMembers, isSkipped } from './lazyJson.ts';
import { collectionPath, queryString, type ListWatchTarget } from './paths.ts';
import { checkListWatchOptionNames } from './http/optionNames.ts';
import { httpError, limitFor, parseJson, readBody, type BodyLimit } from './http/body.ts';
import { parseWatchFrame, parseWatchLine, parseWatchLineLazily, shapeFrame } from './http/decode.ts';
import { FrameSplitter, type FrameSink } from './protobuf/frames.ts';
import { isProtobuf, protobufKnows } from './protobuf/decode.ts';
import {
  byteLimit,
  DEFAULT_LIST_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_DOCUMENT_BYTES,
  DEFAULT_MAX_LIST_BYTES,
  DEFAULT_MAX_LINE_BYTES,
  defaultMaxListTotalBytes,
  formatBytes,
  asksProtobuf,
  JSON_ACCEPT,
  PROTOBUF_ACCEPT,
  requestSettings,
  type HttpTransportOptions,
} from './http/options.ts';
import { timerMs } from '../util/scheduleAfter.ts';
import { send } from './http/request.ts';
import { MetadataAccept } from './http/metadataAccept.ts';
import type { HttpResponse } from './http2/response.ts';
import { ListBudget, type StreamingListCharge } from './http/listBudget.ts';
import { bodyProgress } from './http/progress.ts';
import { PagePrefetch } from './http/prefetch.ts';
import { listPages, type Reading } from './http/listPage.ts';
import { DEFAULT_PROBE_TIMEOUT_MS, reachable, type ReachabilityOptions } from './reachability.ts';

// The HTTP transport, assembled from ./http: options (limits and defaults), credentials (exec plugins
// and token files), agents (TLS material and keep-alive agents), request (one GET, HTTP/1.1 or ./http2),
// metadataAccept (the PartialObjectMetadata request and its 406 fallback), listBudget (a whole list's byte
// budget), body (reading a bounded response), decode (list pages and watch lines). This file: getJson and httpListWatch.

export {
  DEFAULT_LIST_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_DOCUMENT_BYTES,
  DEFAULT_MAX_ERROR_BODY_BYTES,
  DEFAULT_MAX_LINE_BYTES,
  DEFAULT_MAX_LIST_BYTES,
  DEFAULT_MIN_BODY_BYTES_PER_SECOND,
  DEFAULT_COMPRESSION,
  DEFAULT_PROTOCOL,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS,
  defaultMaxListTotalBytes,
  formatBytes,
  LIST_HEAP_SHARE,
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  DEFAULT_ENCODING,
  type Compression,
  type Encoding,
  type HttpTransportOptions,
} from './http/options.ts';
export { transportBytes, type TransportBytes } from './http/encoding.ts';
export type { ReachabilityOptions } from './reachability.ts';
export { MAX_RETRY_AFTER_SECONDS } from '../0-model/errors.ts';
export type { HttpProtocol } from './http2/request.ts';
export type { Http2Options } from './http2/health.ts';
export { http2Route, useAgent } from './http/agents.ts';
export { applyCredentials, credentialRejected, type Issued } from './http/credentials.ts';
export { tlsFailure, type AwaitingStage } from './http/request.ts';
export { parseRetryAfter } from '../0-model/retryAfter.ts';
export { parseWatchLine, parseWatchLineLazily } from './http/decode.ts';

/** The options of {@link getJson} and {@link requestJson}. */
export type JsonRequestOptions = Pick<
  HttpTransportOptions,
  | 'userAgent'
  | 'listIdleTimeoutMs'
  | 'minBodyBytesPerSecond'
  | 'requestTimeoutMs'
  | 'tlsHandshakeTimeoutMs'
  | 'maxDocumentBytes'
  | 'maxErrorBodyBytes'
  | 'protocol'
  | 'http2'
  | 'http1IdleTimeoutMs'
  | 'compression'
>;

/** A JSON request other than a GET of a document: its method, its body, and how its errors name things. */
export interface JsonRequest {
  /** Default `GET`. A write (`POST`, `PUT`) succeeds with 200 or 201; a GET with 200 only. */
  readonly method?: string;
  /** Sent as JSON (`Content-Type: application/json`). */
  readonly body?: unknown;
  /** The option named when the response passes `maxDocumentBytes` (a caller's own name for it). Default `maxDocumentBytes`. */
  readonly limitOption?: string;
}

/**
 * GETs one JSON document (discovery, a single object) through the KubeConfig;
 * errors with an `InformerError` carrying the server's Status. Unsubscribing aborts.
 */
export function getJson(kc: KubeConfig, path: string, options: JsonRequestOptions = {}): Observable<unknown> {
  return requestJson(kc, path, {}, options);
}

/**
 * One JSON request through the transport's request path (credentials, TLS, HTTP/2, the request timer, byte
 * limits): emits the response's JSON and completes on success (200, or 201 for a write), else errors with an
 * `InformerError` carrying the server's Status (its reason from `reasonForStatus`). Unsubscribing aborts.
 */
export function requestJson(kc: KubeConfig, path: string, request: JsonRequest, options: JsonRequestOptions = {}): Observable<unknown> {
  const idleMs = timerMs(options.listIdleTimeoutMs, DEFAULT_LIST_IDLE_TIMEOUT_MS);
  const settings = requestSettings(options);
  const method = request.method ?? 'GET';
  const document: BodyLimit = {
    maxBytes: byteLimit(options.maxDocumentBytes, DEFAULT_MAX_DOCUMENT_BYTES),
    what: `${method} ${path}`,
    option: request.limitOption ?? 'maxDocumentBytes',
  };
  const succeeded = (status: number | undefined) => status === 200 || (method !== 'GET' && status === 201);
  const named = namingRequest<unknown>(`${method} ${path.split('?')[0]}`);
  return new Observable<unknown>((subscriber) => {
    const body = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
    const outgoing = { ...(request.method ? { method: request.method } : {}), ...(body ? { body } : {}) };
    // A document or an error body must keep coming (./http/progress.ts), as a list page.
    const progress = bodyProgress(options, `${method} ${path}`, 'list');
    const sent = send(kc, path, 'list', settings, JSON_ACCEPT, outgoing).subscribe({
      next: ({ response }) => {
        if (idleMs !== undefined) {
          response.setTimeout(idleMs, () =>
            subscriber.error(new InformerError('Timeout', `${method} ${path}: no bytes for ${idleMs} ms`, { phase: 'list' })),
          );
        }
        const ok = succeeded(response.statusCode);
        readBody(
          response,
          ok ? document : limitFor(response, document, settings),
          (bytes) => {
            if (!ok) return subscriber.error(httpError(response, bytes, 'list'));
            const value = parseJson(bytes.toString('utf8'));
            if (value === undefined)
              return subscriber.error(new InformerError('MalformedLine', `${method} ${path}: the response is not JSON`, { phase: 'list' }));
            subscriber.next(value);
            subscriber.complete();
          },
          (error) => subscriber.error(error),
          'list',
          progress,
        );
      },
      error: (error: unknown) => subscriber.error(error),
    });
    return () => {
      sent.unsubscribe();
      progress?.stop();
    };
  }).pipe(named);
}

/**
 * A server-given value too long to send back in a query (`MAX_CONTINUE_TOKEN_CHARS`, `MAX_RESOURCE_VERSION_CHARS`): the
 * request is not made (over HTTP/2 Node would refuse its own header block past 64 KiB; over HTTP/1.1 the server
 * would) and fails as the server's malformed answer. The reflector never asks for one; another caller may.
 */
function refusedQuery(
  options: { readonly continue?: string; readonly resourceVersion?: string },
  phase: 'list' | 'watch',
): InformerError | undefined {
  const why = overlongQueryValue('continue', options.continue) ?? overlongQueryValue('resourceVersion', options.resourceVersion);
  return why === undefined ? undefined : new InformerError('MalformedLine', `${why}; not sent`, { phase });
}

/**
 * Every `InformerError` a request fails with names the request (`list /api/v1/pods`: its verb and path, never the
 * query, whose continue tokens and selectors are not for logs; {@link InformerError.request}).
 */
function namingRequest<T>(request: string): MonoTypeOperatorFunction<T> {
  return catchError((error: unknown) => throwError(() => (error instanceof InformerError ? error.forRequest(request) : error)));
}

/**
 * The HTTP ListWatch: lists and watches one resource through a KubeConfig
 * (token, client certificates, exec and OIDC plugins, CA and TLS settings,
 * in-cluster config all come from `@kubernetes/client-node`; TLS verification
 * stays on unless the kubeconfig turns it off).
 */
export function httpListWatch(kc: KubeConfig, target: ListWatchTarget, options: HttpTransportOptions = {}): ListWatch {
  checkListWatchOptionNames('httpListWatch', target, options);
  const path = collectionPath(target);
  const settings = requestSettings(options);
  const listLimit: BodyLimit = {
    maxBytes: byteLimit(options.maxListBytes, DEFAULT_MAX_LIST_BYTES),
    what: `list ${path}`,
    option: 'maxListBytes',
  };
  const watchLimit: BodyLimit = { maxBytes: settings.maxErrorBodyBytes, what: `watch ${path}`, option: 'maxErrorBodyBytes' };
  const metadataOnly = target.resource.metadataOnly === true;
  // Protobuf (see HttpTransportOptions.encoding) is asked with JSON as the fallback; the response's Content-Type says which came.
  const protobuf = !metadataOnly && asksProtobuf(options, protobufKnows(target.resource));
  const limits = { list: listLimit, watch: watchLimit };
  const accept = new MetadataAccept(kc, path, settings, metadataOnly, limits, protobuf ? PROTOBUF_ACCEPT : JSON_ACCEPT);
  const reading: Reading = {
    path,
    settings,
    options,
    accept,
    protobuf,
    // A full object where metadata was asked for (an older server, or after a 406) is cut down on arrival.
    shape: metadataOnly ? toPartialObjectMetadata : undefined,
  };
  const maxLineBytes = byteLimit(options.maxLineBytes, DEFAULT_MAX_LINE_BYTES);
  const budget = new ListBudget(byteLimit(options.maxListTotalBytes, defaultMaxListTotalBytes()));
  // The next page asked for as soon as a page tells its token (./http/prefetch.ts); one slot for this ListWatch.
  const prefetch = options.prefetchPages === false ? undefined : new PagePrefetch();
  const query = (listOptions: ListOptions) =>
    path +
    queryString(target, {
      limit: listOptions.limit,
      continue: listOptions.continue,
      resourceVersion: listOptions.resourceVersion,
      resourceVersionMatch: listOptions.resourceVersionMatch,
    });
  const idleMs = timerMs(options.listIdleTimeoutMs, DEFAULT_LIST_IDLE_TIMEOUT_MS);
  const pages = listPages({ reading, listLimit, idleMs, budget, prefetch, query });
  const listing = namingRequest<ListPage>(`list ${path}`);
  const list = (listOptions: ListOptions): Observable<ListPage> => {
    const unsendable = refusedQuery(listOptions, 'list');
    return (unsendable ? throwError(() => unsendable) : pages(listOptions)).pipe(listing);
  };

  const watchStream = <T>(watchOptions: WatchOptions, out: FrameOut<T>): Observable<T> =>
    new Observable<T>((subscriber) => {
      const query = queryString(target, {
        watch: 1,
        resourceVersion: watchOptions.resourceVersion,
        resourceVersionMatch: watchOptions.resourceVersionMatch,
        allowWatchBookmarks: watchOptions.allowWatchBookmarks,
        sendInitialEvents: watchOptions.sendInitialEvents,
        timeoutSeconds: watchOptions.timeoutSeconds,
      });
      prefetch?.abort(); // the reflector asks something else than the page held
      const unsendable = refusedQuery(watchOptions, 'watch');
      if (unsendable) return subscriber.error(unsendable);
      const open = () => accept.open(path + query, 'watch');
      // A streaming list is a list: charged against the list budget until its initial-events-end bookmark (and, after
      // one dropped on the budget, started once the heap is collected), as a paged list's chain is.
      const streaming = watchOptions.sendInitialEvents === true;
      return (streaming ? budget.whenRoom(undefined, open) : open()).subscribe({
        next: ({ response }) => {
          if (response.statusCode !== 200) {
            const onBody = (body: Buffer) => subscriber.error(httpError(response, body, 'watch'));
            readBody(response, limitFor(response, watchLimit, settings), onBody, (error) => subscriber.error(error), 'watch');
            return;
          }
          const initial = streaming ? (json: boolean) => budget.streamingList(`watch ${path}`, json, options.random) : undefined;
          readWatchStream(response, maxLineBytes, reading, subscriber, out, initial);
        },
        error: (error: unknown) => subscriber.error(error),
      });
    }).pipe(namingRequest<T>(`watch ${path}`));
  const watch = (watchOptions: WatchOptions): Observable<WatchFrame> => watchStream(watchOptions, FRAMES);
  const watchLines = (watchOptions: WatchOptions): Observable<LinedFrame> => watchStream(watchOptions, LINED);

  const reachable$ = options.reachability === false ? undefined : serverSignal(kc, options, options.reachability);
  return reachable$ ? { list, watch, watchLines, reachable$ } : { list, watch, watchLines };
}

/** What a watch stream emits for a frame and, when the frame is its line's event exactly, the line. */
interface FrameOut<T> {
  /** Whether `line` is wanted (else it is never decoded for the lazy reader). */
  readonly lines: boolean;
  readonly out: (frame: WatchFrame, line: string | undefined, bytes: number) => T;
}
const FRAMES: FrameOut<WatchFrame> = { lines: false, out: (frame) => frame };
const LINED: FrameOut<LinedFrame> = {
  lines: true,
  out: (frame, line, bytes) => (line === undefined ? { frame } : { frame, line, bytes }),
};

/** Largest `/version` answer a probe reads (kube-apiserver's is about 300 bytes). */
const PROBE_MAX_BYTES = 64 * 1024;

/** The shared signal that the server of `kc` answers again: its probe is a `GET /version` through the same request path. */
function serverSignal(kc: KubeConfig, options: HttpTransportOptions, reachability: ReachabilityOptions = {}): Observable<void> | undefined {
  const timeoutMs = reachability.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const probe = requestJson(
    kc,
    '/version',
    {},
    {
      userAgent: options.userAgent,
      protocol: options.protocol,
      http2: options.http2,
      compression: options.compression,
      requestTimeoutMs: timeoutMs,
      tlsHandshakeTimeoutMs: options.tlsHandshakeTimeoutMs,
      listIdleTimeoutMs: timeoutMs,
      minBodyBytesPerSecond: options.minBodyBytesPerSecond,
      maxDocumentBytes: PROBE_MAX_BYTES,
    },
  );
  return reachable(kc, probe, reachability);
}

/**
 * Reads a watch stream (a 200) line by line into frames: events, and `MalformedLine` for lines that cannot be read;
 * with `lines`, each event that is its line exactly comes with the line's text ({@link eventLine}). A streaming list
 * (`initial`, given whether the stream is JSON) is charged every byte read until its initial-events-end bookmark;
 * past its budget the watch ends with that error. A watch is never charged after the bookmark.
 */
function readWatchStream<T>(
  response: HttpResponse,
  maxLineBytes: number,
  reading: Reading,
  subscriber: Subscriber<T>,
  { lines: wantLines, out }: FrameOut<T>,
  initial?: (json: boolean) => StreamingListCharge | undefined,
): void {
  const { path, options, shape } = reading;
  const request = `watch ${path}`;
  const pending = reading.accept.takeNotice();
  if (pending) subscriber.next(out(pending, undefined, 0));
  const protobuf = reading.protobuf && isProtobuf(response.headers['content-type']);
  const unit = protobuf ? 'frame' : 'line';
  const oversize = (bytes: number) => {
    const message = `watch ${path}: a ${unit} passed the ${formatBytes(maxLineBytes)} limit (${bytes} bytes; option maxLineBytes); watch ended`;
    subscriber.next(out(new InformerError('MalformedLine', message, { phase: 'watch', request }), undefined, 0));
  };
  let charge = initial?.(!protobuf);
  let over = false;
  const emit = (frame: WatchFrame, line: string | undefined, bytes: number) => {
    if (charge && !(frame instanceof InformerError) && frame.type === 'BOOKMARK' && isInitialEventsEnd(frame.object)) charge = undefined;
    const shaped = shape ? shapeFrame(frame, shape) : frame;
    subscriber.next(out(namedFrame(shaped, request), wantLines && shaped === frame ? eventLine(frame, line) : undefined, bytes));
  };
  // Protobuf: length-prefixed frames (no JSON line to write as it came); JSON: lines.
  const frames = protobuf ? new FrameSplitter(maxLineBytes) : undefined;
  const lines = frames ? undefined : new LineSplitter(maxLineBytes);
  const frameSink: FrameSink = { frame: (frame) => emit(parseWatchFrame(frame, options.keepObject), undefined, 0), oversize };
  const lineSink: LineSink | LineBytesSink =
    options.lazyDecode === true
      ? {
          lineBytes: (line: Buffer) => {
            const frame = parseWatchLineLazily(line, options.keepObject);
            const whole = wantLines && !(frame instanceof InformerError) && !hasOtherMembers(frame);
            emit(frame, whole ? line.toString('utf8') : undefined, line.length);
          },
          oversize,
        }
      : { line: (text: string, bytes: number) => emit(parseWatchLine(text), text, bytes), oversize };
  const splitter = frames ?? lines!;
  response.on('data', (chunk: Buffer) => {
    if (over) return;
    // The chunk's frames first: one that brings the bookmark ends the list (the bytes after it in the chunk are the watch's).
    const charged = charge;
    if (frames) frames.push(chunk, frameSink);
    else lines!.push(chunk, lineSink);
    const tooLong = charged && charge ? charged.add(chunk) : undefined;
    if (!tooLong) return;
    over = true;
    response.destroy();
    subscriber.error(tooLong);
  });
  response.on('error', () => undefined);
  response.on('close', () => {
    if (!response.complete) {
      if (response.failure) return subscriber.error(response.failure);
      subscriber.error(new InformerError('NetworkError', 'watch: the connection closed mid-stream', { phase: 'watch' }));
      return;
    }
    if (splitter.leftoverBytes > 0) {
      const message = `watch stream ended inside a ${unit} (${splitter.leftoverBytes} bytes)`;
      subscriber.next(out(new InformerError('MalformedLine', message, { phase: 'watch', request }), undefined, 0));
    }
    subscriber.complete();
  });
}

/**
 * A frame of the watch `request` (`watch /api/v1/pods`) naming it where it is a failure: a line that could not be read
 * (`MalformedLine`), an `ERROR` event (its Status becomes the reflector's error, {@link RawWatchEvent.request}).
 */
function namedFrame(frame: WatchFrame, request: string): WatchFrame {
  if (frame instanceof InformerError) return frame.forRequest(request);
  return frame.type === 'ERROR' ? { type: frame.type, object: frame.object, request } : frame;
}

/**
 * `line` when the event parsed from it is the line exactly: an event (not an error frame) of two members
 * (`type` and `object`: a line with others is not written as it came) whose object is not a skeleton of an
 * object the lazy reader skipped. Repeated keys are not detected: the line then parses to the same event.
 */
function eventLine(frame: WatchFrame, line: string | undefined): string | undefined {
  if (line === undefined || frame instanceof InformerError || isSkipped(frame.object)) return undefined;
  return Object.keys(frame).length === 2 ? line : undefined;
}
