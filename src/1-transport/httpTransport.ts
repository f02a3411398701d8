import { Observable, type Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import { toPartialObjectMetadata } from '../0-model/metadata.ts';
import { LineSplitter, type LineBytesSink, type LineSink } from './lineSplitter.ts';
import type { ListOptions, ListPage, ListWatch, WatchFrame, WatchOptions } from './listWatch.ts';
import { collectionPath, queryString, type ListWatchTarget } from './paths.ts';
import { httpError, limitFor, parseJson, readBody, type BodyLimit } from './http/body.ts';
import { parseWatchLine, parseWatchLineLazily, shapeFrame, syntaxErrorAt, toListPage } from './http/decode.ts';
import {
  byteLimit,
  DEFAULT_LIST_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_DOCUMENT_BYTES,
  DEFAULT_MAX_LIST_BYTES,
  DEFAULT_MAX_LINE_BYTES,
  formatBytes,
  JSON_ACCEPT,
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  requestSettings,
  timerMs,
  type HttpTransportOptions,
} from './http/options.ts';
import { get, type Opened } from './http/request.ts';
import { listBodyDecoder } from './http/listBody.ts';

// The HTTP transport, assembled from ./http: options (limits and defaults), credentials (exec plugins
// and token files), agents (TLS material and keep-alive agents), request (one GET, HTTP/1.1 or ./http2),
// body (reading a bounded response), decode (list pages and watch lines). This file: getJson and httpListWatch.

export {
  DEFAULT_LIST_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_DOCUMENT_BYTES,
  DEFAULT_MAX_ERROR_BODY_BYTES,
  DEFAULT_MAX_LINE_BYTES,
  DEFAULT_MAX_LIST_BYTES,
  DEFAULT_COMPRESSION,
  DEFAULT_PROTOCOL,
  DEFAULT_REQUEST_TIMEOUT_MS,
  formatBytes,
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  type Compression,
  type HttpTransportOptions,
} from './http/options.ts';
export { transportBytes, type TransportBytes } from './http/encoding.ts';
export { MAX_RETRY_AFTER_SECONDS } from '../0-model/errors.ts';
export type { HttpProtocol } from './http2/request.ts';
export type { Http2Options } from './http2/health.ts';
export { http2Route, useAgent } from './http/agents.ts';
export { applyCredentials, credentialRejected, type Issued } from './http/credentials.ts';
export { tlsFailure, type AwaitingStage } from './http/request.ts';
export { parseRetryAfter } from './http/body.ts';
export { parseWatchLine, parseWatchLineLazily } from './http/decode.ts';

/**
 * GETs one JSON document (discovery, a single object) through the KubeConfig;
 * errors with an `InformerError` carrying the server's Status. Unsubscribing aborts.
 */
export function getJson(
  kc: KubeConfig,
  path: string,
  options: Pick<
    HttpTransportOptions,
    'userAgent' | 'listIdleTimeoutMs' | 'requestTimeoutMs' | 'maxDocumentBytes' | 'maxErrorBodyBytes' | 'protocol' | 'http2' | 'compression'
  > = {},
): Observable<unknown> {
  const idleMs = timerMs(options.listIdleTimeoutMs, DEFAULT_LIST_IDLE_TIMEOUT_MS);
  const settings = requestSettings(options);
  const document: BodyLimit = {
    maxBytes: byteLimit(options.maxDocumentBytes, DEFAULT_MAX_DOCUMENT_BYTES),
    what: `GET ${path}`,
    option: 'maxDocumentBytes',
  };
  return new Observable<unknown>((subscriber) =>
    get(kc, path, 'list', settings).subscribe({
      next: ({ response }) => {
        if (idleMs !== undefined) {
          response.setTimeout(idleMs, () =>
            subscriber.error(new InformerError('Timeout', `GET ${path}: no bytes for ${idleMs} ms`, { phase: 'list' })),
          );
        }
        readBody(
          response,
          limitFor(response, document, settings),
          (body) => {
            if (response.statusCode !== 200) return subscriber.error(httpError(response, body, 'list'));
            const value = parseJson(body.toString('utf8'));
            if (value === undefined)
              return subscriber.error(new InformerError('MalformedLine', `GET ${path}: the response is not JSON`, { phase: 'list' }));
            subscriber.next(value);
            subscriber.complete();
          },
          (error) => subscriber.error(error),
          'list',
        );
      },
      error: (error: unknown) => subscriber.error(error),
    }),
  );
}

/**
 * The HTTP ListWatch: lists and watches one resource through a KubeConfig
 * (token, client certificates, exec and OIDC plugins, CA and TLS settings,
 * in-cluster config all come from `@kubernetes/client-node`; TLS verification
 * stays on unless the kubeconfig turns it off).
 */
export function httpListWatch(kc: KubeConfig, target: ListWatchTarget, options: HttpTransportOptions = {}): ListWatch {
  const path = collectionPath(target);
  const settings = requestSettings(options);
  const listIdleTimeoutMs = timerMs(options.listIdleTimeoutMs, DEFAULT_LIST_IDLE_TIMEOUT_MS);
  const maxLineBytes = byteLimit(options.maxLineBytes, DEFAULT_MAX_LINE_BYTES);
  const listLimit: BodyLimit = {
    maxBytes: byteLimit(options.maxListBytes, DEFAULT_MAX_LIST_BYTES),
    what: `list ${path}`,
    option: 'maxListBytes',
  };
  const watchLimit: BodyLimit = { maxBytes: settings.maxErrorBodyBytes, what: `watch ${path}`, option: 'maxErrorBodyBytes' };
  const lazy = options.lazyDecode === true;
  const metadataOnly = target.resource.metadataOnly === true;
  // Once the server has answered a metadata-only request with 406, this ListWatch asks for plain JSON.
  let plainJson = false;
  /** The `NotAcceptable` notice of that 406, until a page or a watch that succeeded carries it (once). */
  let notice: InformerError | undefined;
  const takeNotice = (): InformerError | undefined => {
    const taken = notice;
    notice = undefined;
    return taken;
  };
  const notAcceptable = (phase: 'list' | 'watch', statusObject: unknown) =>
    new InformerError(
      'NotAcceptable',
      `${phase} ${path}: the server does not serve PartialObjectMetadata (406 Not Acceptable); fetching ` +
        `full objects and cutting them down to metadata on arrival`,
      { status: 406, phase, statusObject },
    );
  /**
   * GETs `pathAndQuery`; a metadata-only request answered 406 is read to its
   * end (so the connection is reused) and sent again as plain JSON, and a
   * `NotAcceptable` notice waits for the next page or watch that succeeds.
   */
  const open = (pathAndQuery: string, phase: 'list' | 'watch'): Observable<Opened> =>
    new Observable<Opened>((subscriber) => {
      let current: Subscription | undefined;
      const attempt = () => {
        const asMetadata = metadataOnly && !plainJson;
        const accept = !asMetadata ? JSON_ACCEPT : phase === 'list' ? METADATA_LIST_ACCEPT : METADATA_WATCH_ACCEPT;
        current?.unsubscribe();
        current = get(kc, pathAndQuery, phase, settings, accept).subscribe({
          next: (opened) => {
            if (!(asMetadata && opened.response.statusCode === 406)) return subscriber.next(opened);
            // Only the first 406 of this ListWatch makes a notice (two requests in flight may both get one).
            const first = !plainJson;
            plainJson = true;
            readBody(
              opened.response,
              limitFor(opened.response, phase === 'list' ? listLimit : watchLimit, settings),
              (body) => {
                if (first) notice = notAcceptable(phase, parseJson(body.toString('utf8')));
                attempt();
              },
              (error) => {
                if (first) notice = notAcceptable(phase, undefined);
                subscriber.error(error);
              },
              phase,
            );
          },
          error: (error: unknown) => subscriber.error(error),
        });
      };
      attempt();
      return () => current?.unsubscribe();
    });
  /** A full object where metadata was asked for (an older server, or after a 406) is cut down on arrival. */
  const shape = metadataOnly ? toPartialObjectMetadata : undefined;

  const list = (listOptions: ListOptions): Observable<ListPage> =>
    new Observable<ListPage>((subscriber) => {
      const query = queryString(target, {
        limit: listOptions.limit,
        continue: listOptions.continue,
        resourceVersion: listOptions.resourceVersion,
        resourceVersionMatch: listOptions.resourceVersionMatch,
      });
      return open(path + query, 'list').subscribe({
        next: ({ response }) => {
          if (listIdleTimeoutMs !== undefined) {
            response.setTimeout(listIdleTimeoutMs, () => {
              subscriber.error(new InformerError('Timeout', `list ${path}: no bytes for ${listIdleTimeoutMs} ms`, { phase: 'list' }));
            });
          }
          const limit = limitFor(response, listLimit, settings);
          const failed = (error: InformerError) => subscriber.error(error);
          if (response.statusCode !== 200) {
            readBody(response, limit, (body) => subscriber.error(httpError(response, body, 'list')), failed, 'list');
            return;
          }
          // Decoded as it arrives, never held whole (see ./http/listBody.ts).
          const decoder = listBodyDecoder(lazy, options.keepObject);
          let bytes = 0;
          const sink = {
            chunk: (chunk: Buffer) => {
              bytes += chunk.length;
              decoder.chunk(chunk);
            },
            end: () => {
              decoder.end();
              let value: unknown;
              try {
                value = decoder.value();
              } catch (error) {
                const detail = `list ${path}: the response is not JSON (${bytes} bytes${syntaxErrorAt(error)})`;
                return subscriber.error(new InformerError('MalformedLine', detail, { phase: 'list' }));
              }
              const page = toListPage(value, shape);
              if (!page)
                return subscriber.error(new InformerError('MalformedLine', `list ${path}: the response is not a list`, { phase: 'list' }));
              const pending = takeNotice();
              subscriber.next(pending ? { ...page, notice: pending } : page);
              subscriber.complete();
            },
          };
          readBody(response, limit, sink, failed, 'list');
        },
        error: (error: unknown) => subscriber.error(error),
      });
    });

  const watch = (watchOptions: WatchOptions): Observable<WatchFrame> =>
    new Observable<WatchFrame>((subscriber) => {
      const query = queryString(target, {
        watch: 1,
        resourceVersion: watchOptions.resourceVersion,
        resourceVersionMatch: watchOptions.resourceVersionMatch,
        allowWatchBookmarks: watchOptions.allowWatchBookmarks,
        sendInitialEvents: watchOptions.sendInitialEvents,
        timeoutSeconds: watchOptions.timeoutSeconds,
      });
      return open(path + query, 'watch').subscribe({
        next: ({ response }) => {
          if (response.statusCode !== 200) {
            const onBody = (body: Buffer) => subscriber.error(httpError(response, body, 'watch'));
            readBody(response, limitFor(response, watchLimit, settings), onBody, (error) => subscriber.error(error), 'watch');
            return;
          }
          const pending = takeNotice();
          if (pending) subscriber.next(pending);
          const splitter = new LineSplitter(maxLineBytes);
          const oversize = (bytes: number) => {
            const message = `watch ${path}: a line passed the ${formatBytes(maxLineBytes)} limit (${bytes} bytes; option maxLineBytes); skipped`;
            subscriber.next(new InformerError('MalformedLine', message, { phase: 'watch' }));
          };
          const emit = shape
            ? (frame: WatchFrame) => subscriber.next(shapeFrame(frame, shape))
            : (frame: WatchFrame) => subscriber.next(frame);
          const sink: LineSink | LineBytesSink = lazy
            ? { lineBytes: (line: Buffer) => emit(parseWatchLineLazily(line, options.keepObject)), oversize }
            : { line: (text: string) => emit(parseWatchLine(text)), oversize };
          response.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
          response.on('error', () => undefined);
          response.on('close', () => {
            if (!response.complete) {
              if (response.failure) return subscriber.error(response.failure);
              subscriber.error(new InformerError('NetworkError', 'watch: the connection closed mid-stream', { phase: 'watch' }));
              return;
            }
            if (splitter.leftoverBytes > 0) {
              subscriber.next(
                new InformerError('MalformedLine', `watch stream ended inside a line (${splitter.leftoverBytes} bytes)`, {
                  phase: 'watch',
                }),
              );
            }
            subscriber.complete();
          });
        },
        error: (error: unknown) => subscriber.error(error),
      });
    });

  return { list, watch };
}
