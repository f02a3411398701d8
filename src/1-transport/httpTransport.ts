import * as http from 'node:http';
import * as https from 'node:https';
import { Observable } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError, errorFromStatus, type ErrorPhase } from '../0-model/errors.ts';
import { lazyParseList, lazyParseWatchLine } from './lazyJson.ts';
import { LineSplitter, type LineBytesSink, type LineSink } from './lineSplitter.ts';
import type { ListOptions, ListPage, ListWatch, RawWatchEvent, WatchFrame, WatchOptions } from './listWatch.ts';
import { collectionPath, queryString, type ListWatchTarget } from './paths.ts';

/** Tuning of the HTTP transport. */
export interface HttpTransportOptions {
  /** Abort a list request whose response sends no bytes for this long (ms). Default 60 s. */
  readonly listIdleTimeoutMs?: number;
  /** Longest watch line kept; longer ones are reported and skipped. Default 16 MiB. */
  readonly maxLineBytes?: number;
  /** Sent as `User-Agent`. */
  readonly userAgent?: string;
  /**
   * Decode objects lazily (see README "Lazy decoding"): `apiVersion`, `kind` and
   * `metadata` but for `managedFields` are parsed at once, every other member on
   * first read. Pages and lines with non-ASCII text are parsed as usual. Default false.
   */
  readonly lazyDecode?: boolean;
}

const DEFAULT_USER_AGENT = 'rx-informer/0.1 (node)';

interface Opened {
  readonly response: http.IncomingMessage;
}

const keepAliveTwins = new WeakMap<http.Agent, http.Agent>();

/**
 * The KubeConfig's agent, with keep-alive. `@kubernetes/client-node` builds
 * (and caches) a plain `http.Agent`/`https.Agent` without keep-alive, so each
 * list page would open a new connection, and a new TLS handshake. This gives
 * the same agent options with `keepAlive: true`, one twin per agent (so a
 * changed kubeconfig gets a fresh one). Proxy agents are left as they are.
 */
function withKeepAlive(agent: unknown): unknown {
  if (!(agent instanceof http.Agent) || (agent.constructor !== http.Agent && agent.constructor !== https.Agent)) return agent;
  const options = (agent as http.Agent & { options?: http.AgentOptions; keepAlive?: boolean }).options;
  if (!options || options.keepAlive) return agent;
  let twin = keepAliveTwins.get(agent);
  if (!twin) {
    twin = agent.constructor === https.Agent ? new https.Agent({ ...options, keepAlive: true }) : new http.Agent({ ...options, keepAlive: true });
    keepAliveTwins.set(agent, twin);
  }
  return twin;
}

/**
 * One HTTP GET through the KubeConfig's credentials and TLS settings, as an
 * Observable of the response (emitted once headers arrive). Unsubscribing
 * before the response has been read to its end aborts the request and
 * destroys its socket; after that, the connection goes back to the pool.
 */
function get(kc: KubeConfig, path: string, phase: ErrorPhase, userAgent: string): Observable<Opened> {
  return new Observable<Opened>((subscriber) => {
    const abort = new AbortController();
    let request: http.ClientRequest | undefined;
    let response: http.IncomingMessage | undefined;
    const fail = (error: InformerError) => {
      if (!abort.signal.aborted) subscriber.error(error);
    };
    (async () => {
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new InformerError('Config', 'the KubeConfig has no current cluster', { phase: 'config' });
      const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json', 'User-Agent': userAgent } };
      await kc.applyToHTTPSOptions(options);
      if (abort.signal.aborted) return;
      options.agent = withKeepAlive(options.agent) as http.Agent | undefined;
      const url = new URL(cluster.server.replace(/\/+$/, '') + path);
      const send = url.protocol === 'http:' ? http.request : https.request;
      request = send(url, { ...options, signal: abort.signal }, (opened) => {
        response = opened;
        subscriber.next({ response: opened });
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        fail(new InformerError('NetworkError', `${phase} ${url.pathname}: ${error.code ?? ''} ${error.message}`.trim(), { phase, cause: error }));
      });
      request.end();
    })().catch((error: unknown) => {
      fail(
        error instanceof InformerError
          ? error
          : new InformerError('Config', `cannot apply the KubeConfig: ${error instanceof Error ? error.message : String(error)}`, { phase: 'config', cause: error }),
      );
    });
    return () => {
      if (response?.complete) return;
      abort.abort();
      request?.destroy();
    };
  });
}

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date). */
export function parseRetryAfter(header: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** Reads a whole response body, then hands it over (used for lists and for error Status bodies). */
function readBody(response: http.IncomingMessage, onBody: (bytes: Buffer) => void, onError: (error: InformerError) => void, phase: ErrorPhase): void {
  const chunks: Buffer[] = [];
  response.on('data', (chunk: Buffer) => chunks.push(chunk));
  response.on('error', () => undefined);
  response.on('close', () => {
    if (!response.complete) {
      onError(new InformerError('NetworkError', `${phase}: the connection closed before the response was complete`, { phase, status: response.statusCode }));
      return;
    }
    onBody(Buffer.concat(chunks));
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function httpError(response: http.IncomingMessage, body: Buffer, phase: ErrorPhase): InformerError {
  const status = response.statusCode ?? 0;
  const retryAfter = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined;
  return errorFromStatus(status, parseJson(body.toString('utf8')), phase, retryAfter);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toListPage(body: unknown): ListPage | undefined {
  if (!isRecord(body) || !Array.isArray(body.items)) return undefined;
  const metadata = isRecord(body.metadata) ? body.metadata : {};
  const resourceVersion = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '';
  const page: { -readonly [K in keyof ListPage]: ListPage[K] } = { items: body.items, resourceVersion };
  if (typeof metadata.continue === 'string' && metadata.continue !== '') page.continue = metadata.continue;
  if (typeof metadata.remainingItemCount === 'number') page.remainingItemCount = metadata.remainingItemCount;
  return page;
}

/**
 * Reads one watch line: an event `{type, object}` with a string type and an
 * object, or a `MalformedLine` error describing what was wrong with it.
 */
export function parseWatchLine(line: string): WatchFrame {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return new InformerError('MalformedLine', `watch line is not JSON (${line.length} chars): ${(error as Error).message}`, { phase: 'watch' });
  }
  return toWatchFrame(value);
}

/**
 * {@link parseWatchLine} for the `lazyDecode` option: reads the line's bytes
 * (which may be reused once it returns) into a lazily decoded event. A line
 * the scanner rejects goes through {@link parseWatchLine}, so that it is
 * reported exactly as without lazy decoding.
 */
export function parseWatchLineLazily(line: Buffer): WatchFrame {
  let value: unknown;
  try {
    value = lazyParseWatchLine(line);
  } catch {
    return parseWatchLine(line.toString('utf8'));
  }
  return toWatchFrame(value);
}

function toWatchFrame(value: unknown): WatchFrame {
  if (!isRecord(value) || typeof value.type !== 'string' || !isRecord(value.object)) {
    return new InformerError('MalformedLine', 'watch line is not an event {type, object}', { phase: 'watch' });
  }
  return value as unknown as RawWatchEvent;
}

/**
 * GETs one JSON document (discovery, a single object) through the KubeConfig;
 * errors with an `InformerError` carrying the server's Status. Unsubscribing aborts.
 */
export function getJson(kc: KubeConfig, path: string, options: Pick<HttpTransportOptions, 'userAgent' | 'listIdleTimeoutMs'> = {}): Observable<unknown> {
  const idleMs = options.listIdleTimeoutMs ?? 60_000;
  return new Observable<unknown>((subscriber) =>
    get(kc, path, 'list', options.userAgent ?? DEFAULT_USER_AGENT).subscribe({
      next: ({ response }) => {
        response.setTimeout(idleMs, () => subscriber.error(new InformerError('Timeout', `GET ${path}: no bytes for ${idleMs} ms`, { phase: 'list' })));
        readBody(
          response,
          (body) => {
            if (response.statusCode !== 200) return subscriber.error(httpError(response, body, 'list'));
            const value = parseJson(body.toString('utf8'));
            if (value === undefined) return subscriber.error(new InformerError('MalformedLine', `GET ${path}: the response is not JSON`, { phase: 'list' }));
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
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const listIdleTimeoutMs = options.listIdleTimeoutMs ?? 60_000;
  const maxLineBytes = options.maxLineBytes ?? 16 * 1024 * 1024;
  const lazy = options.lazyDecode === true;
  const parseBody = (bytes: Buffer): unknown => {
    if (lazy) {
      try {
        return lazyParseList(bytes);
      } catch {
        // Not swallowed: parsed again below, so it is reported exactly as without lazy decoding.
      }
    }
    return JSON.parse(bytes.toString('utf8'));
  };

  const list = (listOptions: ListOptions): Observable<ListPage> =>
    new Observable<ListPage>((subscriber) => {
      const query = queryString(target, {
        limit: listOptions.limit,
        continue: listOptions.continue,
        resourceVersion: listOptions.resourceVersion,
        resourceVersionMatch: listOptions.resourceVersionMatch,
      });
      return get(kc, path + query, 'list', userAgent).subscribe({
        next: ({ response }) => {
          response.setTimeout(listIdleTimeoutMs, () => {
            subscriber.error(new InformerError('Timeout', `list ${path}: no bytes for ${listIdleTimeoutMs} ms`, { phase: 'list' }));
          });
          readBody(
            response,
            (body) => {
              if (response.statusCode !== 200) return subscriber.error(httpError(response, body, 'list'));
              let value: unknown;
              try {
                value = parseBody(body);
              } catch (error) {
                const detail = `list ${path}: the response is not JSON (${body.length} bytes): ${(error as Error).message}`;
                return subscriber.error(new InformerError('MalformedLine', detail, { phase: 'list' }));
              }
              const page = toListPage(value);
              if (!page) return subscriber.error(new InformerError('MalformedLine', `list ${path}: the response is not a list`, { phase: 'list' }));
              subscriber.next(page);
              subscriber.complete();
            },
            (error) => subscriber.error(error),
            'list',
          );
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
      return get(kc, path + query, 'watch', userAgent).subscribe({
        next: ({ response }) => {
          if (response.statusCode !== 200) {
            readBody(response, (body) => subscriber.error(httpError(response, body, 'watch')), (error) => subscriber.error(error), 'watch');
            return;
          }
          const splitter = new LineSplitter(maxLineBytes);
          const oversize = (bytes: number) =>
            subscriber.next(new InformerError('MalformedLine', `watch line of ${bytes} bytes exceeds the ${maxLineBytes}-byte limit; skipped`, { phase: 'watch' }));
          const sink: LineSink | LineBytesSink = lazy
            ? { lineBytes: (line: Buffer) => subscriber.next(parseWatchLineLazily(line)), oversize }
            : { line: (text: string) => subscriber.next(parseWatchLine(text)), oversize };
          response.on('data', (chunk: Buffer) => splitter.push(chunk, sink));
          response.on('error', () => undefined);
          response.on('close', () => {
            if (!response.complete) {
              subscriber.error(new InformerError('NetworkError', 'watch: the connection closed mid-stream', { phase: 'watch' }));
              return;
            }
            if (splitter.leftoverBytes > 0) {
              subscriber.next(new InformerError('MalformedLine', `watch stream ended inside a line (${splitter.leftoverBytes} bytes)`, { phase: 'watch' }));
            }
            subscriber.complete();
          });
        },
        error: (error: unknown) => subscriber.error(error),
      });
    });

  return { list, watch };
}
