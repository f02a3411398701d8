import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import { TLSSocket } from 'node:tls';
import { Observable, type Subscription } from 'rxjs';
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node';
import { InformerError, clampRetryAfter, errorFromStatus, type ErrorPhase } from '../0-model/errors.ts';
import { toPartialObjectMetadata } from '../0-model/metadata.ts';
import { lazyParseList, lazyParseWatchLine, type KeepObject } from './lazyJson.ts';
import { LineSplitter, type LineBytesSink, type LineSink } from './lineSplitter.ts';
import type { ListOptions, ListPage, ListWatch, RawWatchEvent, WatchFrame, WatchOptions } from './listWatch.ts';
import { collectionPath, queryString, type ListWatchTarget } from './paths.ts';
import type { Http2Options } from './http2/health.ts';
import { http2Get, mayUseHttp2, type Http2Route, type HttpProtocol } from './http2/request.ts';
import type { HttpResponse } from './http2/response.ts';
import { isRecord } from '../util/isRecord.ts';

/** Tuning of the HTTP transport (see docs/transport.md). */
export interface HttpTransportOptions {
  /**
   * Bound (ms) on everything before a response's headers: obtaining credentials
   * (exec plugin, certificate files), connecting, the TLS handshake and waiting
   * for the headers, as one timer per request. Reported as a `Timeout` naming
   * what was being waited for. Default 30 s; `0` or `Infinity` turns it off.
   */
  readonly requestTimeoutMs?: number;
  /** Abort a list request whose response sends no bytes for this long (ms). Default 60 s. */
  readonly listIdleTimeoutMs?: number;
  /**
   * Longest watch line kept; a longer one is reported (`MalformedLine`) as soon as it passes
   * the limit, once, and its bytes are dropped as they arrive. Default 16 MiB.
   */
  readonly maxLineBytes?: number;
  /**
   * Largest list page (response body) read; past it the request is aborted and reported as
   * `ResponseTooLarge` (then backoff and relist). Default 256 MiB: above 512 MiB a page could not
   * even be decoded (V8's longest string), and a page of 500 objects (the default page size) fits many times.
   */
  readonly maxListBytes?: number;
  /** Largest error body (the Status of a non-2xx answer to any request) read, as `maxListBytes`. Default 1 MiB. */
  readonly maxErrorBodyBytes?: number;
  /** Largest JSON document read by `getJson` (discovery: `/api`, `/apis`, each group version), as `maxListBytes`. Default 4 MiB. */
  readonly maxDocumentBytes?: number;
  /** Sent as `User-Agent`. */
  readonly userAgent?: string;
  /**
   * Decode objects lazily (see docs/api.md, "Lazy decoding"): `apiVersion`, `kind` and
   * `metadata` but for `managedFields` are parsed at once, every other member on
   * first read. Pages and lines with non-ASCII text are parsed as usual. Default false.
   */
  readonly lazyDecode?: boolean;
  /**
   * HTTP version (see docs/transport.md, "HTTP/2"): `auto` asks for HTTP/2 over TLS and
   * falls back to HTTP/1.1 when the server or a proxy does not offer it; `h2` insists;
   * `http1` never asks. Default `auto`.
   */
  readonly protocol?: HttpProtocol;
  /** HTTP/2 PING health checks: read-idle 10 s, ping timeout 10 s by default. */
  readonly http2?: Http2Options;
  /**
   * With `lazyDecode`: objects this rejects (seeing only their metadata) are not decoded further and
   * arrive as `{ metadata }` skeletons marked `isSkipped` (a sharded informer drops them). Default: keep all.
   */
  readonly keepObject?: KeepObject;
}

export type { HttpProtocol } from './http2/request.ts';
export type { Http2Options } from './http2/health.ts';

/** The default of {@link HttpTransportOptions.requestTimeoutMs}. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The default of {@link HttpTransportOptions.listIdleTimeoutMs}. */
export const DEFAULT_LIST_IDLE_TIMEOUT_MS = 60_000;
/** The default of {@link HttpTransportOptions.maxLineBytes}. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
/** The default of {@link HttpTransportOptions.maxListBytes}. */
export const DEFAULT_MAX_LIST_BYTES = 256 * 1024 * 1024;
/** The default of {@link HttpTransportOptions.maxErrorBodyBytes}. */
export const DEFAULT_MAX_ERROR_BODY_BYTES = 1024 * 1024;
/** The default of {@link HttpTransportOptions.maxDocumentBytes}. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;
export { MAX_RETRY_AFTER_SECONDS } from '../0-model/errors.ts';

const DEFAULT_USER_AGENT = 'rx-informer/0.1 (node)';
/** The default of {@link HttpTransportOptions.protocol}. */
export const DEFAULT_PROTOCOL: HttpProtocol = 'auto';

const JSON_ACCEPT = 'application/json';
/** What a metadata-only list asks for, with plain JSON as the fallback (as client-go's metadata client, 10a). */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** What a metadata-only watch asks for (10e). */
export const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
/** Node's timers fire after 1 ms when given more than this (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timeout option as a timer length, or undefined for none (0 or Infinity). */
function timerMs(value: number | undefined, fallback: number): number | undefined {
  const ms = value ?? fallback;
  if (!(ms > 0) || ms === Infinity) return undefined;
  return Math.min(ms, MAX_TIMER_MS);
}

/** What a request waits for before its response headers, named in its `Timeout`. */
export type AwaitingStage = 'credentials' | 'connection' | 'TLS handshake' | 'response headers';

interface Opened {
  /** An `http.IncomingMessage`, or an HTTP/2 stream's response made to look like one. */
  readonly response: HttpResponse;
}

interface RequestSettings {
  readonly userAgent: string;
  /** Undefined: no bound. */
  readonly requestTimeoutMs: number | undefined;
  /** The byte limit of an error body. */
  readonly maxErrorBodyBytes: number;
  readonly protocol: HttpProtocol;
  readonly http2: Http2Options;
}

function requestSettings(
  options: Pick<HttpTransportOptions, 'userAgent' | 'requestTimeoutMs' | 'maxErrorBodyBytes' | 'protocol' | 'http2'>,
): RequestSettings {
  return {
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    requestTimeoutMs: timerMs(options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS),
    maxErrorBodyBytes: byteLimit(options.maxErrorBodyBytes, DEFAULT_MAX_ERROR_BODY_BYTES),
    protocol: options.protocol ?? DEFAULT_PROTOCOL,
    http2: options.http2 ?? {},
  };
}

/** A byte-limit option: a positive number (Infinity: no limit), else the default. */
function byteLimit(value: number | undefined, fallback: number): number {
  return value !== undefined && value > 0 ? value : fallback;
}

/** `256 MiB`, `64 KiB`, `1000 bytes`: a limit as a user would write it. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

// ---------------------------------------------------------------------------
// Exec credentials. client-node's ExecAuth keeps a credential without an
// `expirationTimestamp` for the life of the process and gives a plugin no
// deadline; both are private, so they are reached structurally here.

/** The parts of client-node's (private) ExecAuth this transport relies on. */
interface ExecAuthInternals {
  tokenCache: Record<string, unknown>;
  execFn: (command: string, args?: readonly string[], options?: object) => unknown;
  isAuthProvider(user: User): boolean;
}

function isExecAuth(value: unknown): value is ExecAuthInternals {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof ExecAuthInternals, unknown>>;
  return (
    typeof candidate.tokenCache === 'object' &&
    candidate.tokenCache !== null &&
    typeof candidate.execFn === 'function' &&
    typeof candidate.isAuthProvider === 'function'
  );
}

function execAuthsOf(kc: KubeConfig): ExecAuthInternals[] {
  const { authenticators } = kc as unknown as { authenticators?: unknown };
  return Array.isArray(authenticators) ? authenticators.filter(isExecAuth) : [];
}

/** The signal of the request whose credentials are being obtained (an exec plugin spawned now belongs to it). */
const credentialsFor = new AsyncLocalStorage<AbortSignal>();
const killable = new WeakSet<ExecAuthInternals>();

/**
 * Makes exec plugins spawned while a request obtains its credentials end with
 * that request: a plugin that hangs is killed when the request times out or is
 * unsubscribed, instead of one more stuck process per retry.
 */
function killPluginsWithTheirRequest(kc: KubeConfig): void {
  for (const auth of execAuthsOf(kc)) {
    if (killable.has(auth)) continue;
    const spawn = auth.execFn.bind(auth);
    auth.execFn = (command, args, options) => {
      const signal = credentialsFor.getStore();
      return spawn(command, args, signal ? { ...options, signal } : options);
    };
    killable.add(auth);
  }
}

/**
 * Drops the exec credential client-node cached for the current user, so that
 * the next request runs the plugin again (client-go does the same on a 401).
 */
function forgetExecCredential(kc: KubeConfig): void {
  const user = kc.getCurrentUser();
  if (!user) return;
  for (const auth of execAuthsOf(kc)) if (auth.isAuthProvider(user)) delete auth.tokenCache[user.name];
}

// ---------------------------------------------------------------------------
// Agents. client-node caches one agent per cluster and user with the TLS
// material it first read, so a certificate or CA file rotated on disk would
// never be used. The material is read again for every request (client-node
// does that in applyToHTTPSOptions); one keep-alive agent per digest of it
// keeps connections reused while it does not change.

/** The TLS fields client-node's applyToHTTPSOptions copies into its agents. */
const TLS_OPTION_KEYS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'servername',
  'ciphers',
  'honorCipherOrder',
  'ecdhCurve',
  'crl',
  'dhparam',
  'secureOptions',
  'secureProtocol',
  'sessionIdContext',
] as const satisfies readonly (keyof https.AgentOptions)[];

interface AgentSlot {
  readonly digest: string;
  readonly agent: http.Agent;
}

/** Per KubeConfig, per cluster and user: the agent for the TLS material seen last. */
const agentSlots = new WeakMap<KubeConfig, Map<string, AgentSlot>>();

function tlsDigest(protocol: string, options: https.RequestOptions): { digest: string; agentOptions: https.AgentOptions } {
  const hash = createHash('sha256').update(protocol);
  const agentOptions: Record<string, unknown> = {};
  for (const key of TLS_OPTION_KEYS) {
    const value: unknown = options[key];
    if (value === undefined) continue;
    agentOptions[key] = value;
    const bytes = Buffer.isBuffer(value) ? value : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
    hash.update(`\0${key}\0${bytes.length}\0`).update(bytes);
  }
  return { digest: hash.digest('hex'), agentOptions: agentOptions as https.AgentOptions };
}

/**
 * The keep-alive agent for this request's TLS material. When the material
 * changed, the previous agent is retired: its idle connections close now, the
 * ones in use (an open watch) when their request ends.
 */
function agentFor(kc: KubeConfig, cluster: Cluster, url: URL, options: https.RequestOptions): http.Agent | undefined {
  // Proxy agents come from client-node as they are (their TLS material is read once; see docs/transport.md).
  if (cluster.proxyUrl) return options.agent instanceof http.Agent ? options.agent : undefined;
  const { digest, agentOptions } = tlsDigest(url.protocol, options);
  let slots = agentSlots.get(kc);
  if (!slots) agentSlots.set(kc, (slots = new Map()));
  const slotKey = slotKeyOf(kc, cluster);
  const slot = slots.get(slotKey);
  if (slot?.digest === digest) return slot.agent;
  if (slot) retire(slot.agent);
  const agent = url.protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ ...agentOptions, keepAlive: true });
  slots.set(slotKey, { digest, agent });
  return agent;
}

function slotKeyOf(kc: KubeConfig, cluster: Cluster): string {
  return JSON.stringify([cluster.name, kc.getCurrentUser()?.name ?? '', cluster.server]);
}

/** Makes `agent` use `socket` (a TLS connection whose server chose HTTP/1.1 by ALPN) for its next new connection. */
function adopt(agent: http.Agent, socket: TLSSocket): void {
  const own = agent as unknown as { createConnection: (...args: unknown[]) => unknown };
  const create = own.createConnection;
  own.createConnection = (...args: unknown[]) => {
    own.createConnection = create;
    return socket.destroyed ? create.apply(agent, args) : socket;
  };
  // The agent asks synchronously when it needs a connection; one it did not need is closed, not leaked.
  setImmediate(() => {
    if (own.createConnection === create) return;
    own.createConnection = create;
    socket.destroy();
  });
}

/**
 * How a request to `url` with these applied options may go over HTTP/2 (see ./http2/request.ts):
 * the same connection key and TLS digest as the agents.
 */
export function http2Route(
  kc: KubeConfig,
  cluster: Cluster,
  url: URL,
  options: https.RequestOptions,
  settings: Pick<RequestSettings, 'protocol' | 'http2'>,
): Http2Route {
  const { digest, agentOptions } = tlsDigest(url.protocol, options);
  return {
    ...{ owner: kc, slotKey: slotKeyOf(kc, cluster), digest, tlsOptions: agentOptions },
    ...{ proxied: !!cluster.proxyUrl, protocol: settings.protocol, options: settings.http2 },
  };
}

/** Puts this request's keep-alive agent on `options` (HTTP/1.1), handing it the socket ALPN left, if any. */
export function useAgent(kc: KubeConfig, cluster: Cluster, url: URL, options: https.RequestOptions, socket?: TLSSocket): void {
  options.agent = agentFor(kc, cluster, url, options);
  if (socket && options.agent) adopt(options.agent, socket);
}

function retire(agent: http.Agent): void {
  agent.maxFreeSockets = 0; // a socket freed from now on is closed, not pooled
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}

// ---------------------------------------------------------------------------

/**
 * One HTTP GET through the KubeConfig's credentials and TLS settings, as an
 * Observable of the response (emitted once headers arrive). One timer bounds
 * everything before the headers. Unsubscribing before the response has been
 * read to its end aborts the request (and an exec plugin it started), destroys
 * its socket and clears its timer; after that, the connection goes back to the pool.
 */
function get(kc: KubeConfig, path: string, phase: ErrorPhase, settings: RequestSettings, accept = JSON_ACCEPT): Observable<Opened> {
  return new Observable<Opened>((subscriber) => {
    const abort = new AbortController();
    let request: { destroy(): unknown } | undefined;
    let response: HttpResponse | undefined;
    let awaiting: AwaitingStage = 'credentials';
    const what = `${phase} ${path.split('?')[0]}`;
    const timeoutMs = settings.requestTimeoutMs;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            fail(new InformerError('Timeout', `${what}: no response headers within ${timeoutMs} ms (waiting for: ${awaiting})`, { phase }));
          }, timeoutMs);
    const fail = (error: InformerError) => {
      clearTimeout(timer);
      if (!abort.signal.aborted) subscriber.error(error);
    };
    (async () => {
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new InformerError('Config', 'the KubeConfig has no current cluster', { phase: 'config' });
      const options: https.RequestOptions = { method: 'GET', headers: { Accept: accept, 'User-Agent': settings.userAgent } };
      killPluginsWithTheirRequest(kc);
      await credentialsFor.run(abort.signal, () => kc.applyToHTTPSOptions(options));
      if (abort.signal.aborted) return;
      const url = new URL(cluster.server.replace(/\/+$/, '') + path);
      const onResponse = (opened: HttpResponse) => {
        clearTimeout(timer);
        response = opened;
        // Before the 401 is reported: the reflector's retry then runs the exec plugin again.
        if (opened.statusCode === 401) forgetExecCredential(kc);
        subscriber.next({ response: opened });
      };
      const onError = (error: NodeJS.ErrnoException) => {
        const detail = tlsFailure(error, cluster) ?? `${error.code ?? ''} ${error.message}`.trim();
        fail(new InformerError('NetworkError', `${phase} ${url.pathname}: ${detail}`, { phase, cause: error }));
      };
      awaiting = 'connection';
      // HTTP/2 (./http2): one multiplexed connection per server and TLS material; `{}` means HTTP/1.1.
      const exchange = { signal: abort.signal, stage: (stage: AwaitingStage) => (awaiting = stage), response: onResponse, error: onError };
      const h2 = mayUseHttp2(url, { protocol: settings.protocol, proxied: !!cluster.proxyUrl })
        ? await http2Get(url, options, http2Route(kc, cluster, url, options, settings), exchange)
        : {};
      if (h2.sent) return void (request = h2.sent);
      if (abort.signal.aborted) return;
      useAgent(kc, cluster, url, options, h2.socket);
      const send = url.protocol === 'http:' ? http.request : https.request;
      const sent = send(url, { ...options, signal: abort.signal }, onResponse);
      request = sent;
      sent.on('socket', (socket) => {
        const secure = socket instanceof TLSSocket;
        if (sent.reusedSocket || !socket.connecting) {
          awaiting = 'response headers';
          return;
        }
        socket.once('connect', () => (awaiting = secure ? 'TLS handshake' : 'response headers'));
        if (secure) socket.once('secureConnect', () => (awaiting = 'response headers'));
      });
      sent.on('error', onError);
      sent.end();
    })().catch((error: unknown) => {
      fail(
        error instanceof InformerError
          ? error
          : new InformerError('Config', `cannot apply the KubeConfig: ${error instanceof Error ? error.message : String(error)}`, {
              phase: 'config',
              cause: error,
            }),
      );
    });
    return () => {
      clearTimeout(timer);
      if (response?.complete) return;
      abort.abort();
      request?.destroy();
    };
  });
}

/** OpenSSL's codes for a server certificate no trusted CA vouches for. */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);

/**
 * A TLS verification failure in words that point at the kubeconfig, instead of Node's
 * (which suggests `--use-system-ca`, rarely the fix for a cluster's own CA); undefined
 * for any other error.
 */
export function tlsFailure(error: NodeJS.ErrnoException, cluster: Pick<Cluster, 'caData' | 'caFile'>): string | undefined {
  const code = error.code ?? '';
  if (UNTRUSTED_CERTIFICATE.has(code)) {
    const trust =
      cluster.caData || cluster.caFile
        ? "the cluster's certificate-authority (CA) in the kubeconfig"
        : 'the system CAs (the kubeconfig names no certificate-authority for this cluster)';
    return `the server's certificate is not trusted by ${trust}: ${code}`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `the server's certificate is not valid now: ${code}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `the server's certificate does not name the host of the kubeconfig's server URL: ${code}`;
  return undefined;
}

/**
 * Seconds from a `Retry-After` header (delta-seconds or an HTTP date), at most
 * {@link MAX_RETRY_AFTER_SECONDS}: a larger value (or a far date) would
 * overflow Node's timers, which then fire at once, and no informer should
 * stand still for days on one header.
 */
export function parseRetryAfter(header: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const clamp = clampRetryAfter;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return clamp(seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : clamp(Math.ceil((date - now) / 1000));
}

/** How much of a response body may be read, and what to call it when it is more. */
interface BodyLimit {
  readonly maxBytes: number;
  /** `list /api/v1/pods`. */
  readonly what: string;
  /** The option that raises it, named in the error. */
  readonly option: keyof HttpTransportOptions;
}

/** The byte limit of a response: the body limit asked for when it succeeded, else the error body limit. */
function limitFor(response: HttpResponse, success: BodyLimit, settings: RequestSettings): BodyLimit {
  if (response.statusCode === 200) return success;
  return {
    maxBytes: settings.maxErrorBodyBytes,
    what: `${success.what} (HTTP ${response.statusCode ?? 0} error body)`,
    option: 'maxErrorBodyBytes',
  };
}

/**
 * Reads a whole response body, then hands it over (used for lists, documents and error Status
 * bodies). A body past its limit (declared in Content-Length, or counted as it arrives) is not
 * read further: the response is destroyed (the request aborted) and `ResponseTooLarge` reported.
 */
function readBody(
  response: HttpResponse,
  limit: BodyLimit,
  onBody: (bytes: Buffer) => void,
  onError: (error: InformerError) => void,
  phase: ErrorPhase,
): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let over = false;
  const tooLarge = (seen: string) => {
    over = true;
    chunks.length = 0;
    response.destroy();
    const message = `${limit.what}: the response is larger than the ${formatBytes(limit.maxBytes)} limit (${seen}); aborted (option ${limit.option})`;
    onError(new InformerError('ResponseTooLarge', message, { phase, status: response.statusCode }));
  };
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  response.on('error', () => undefined);
  if (declared > limit.maxBytes) return tooLarge(`Content-Length ${declared}`);
  response.on('data', (chunk: Buffer) => {
    if (over) return;
    bytes += chunk.length;
    if (bytes > limit.maxBytes) return tooLarge(`${bytes} bytes read`);
    chunks.push(chunk);
  });
  response.on('close', () => {
    if (over) return;
    if (!response.complete) {
      onError(
        new InformerError('NetworkError', `${phase}: the connection closed before the response was complete`, {
          phase,
          status: response.statusCode,
        }),
      );
      return;
    }
    onBody(Buffer.concat(chunks, bytes));
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function httpError(response: HttpResponse, body: Buffer, phase: ErrorPhase): InformerError {
  const status = response.statusCode ?? 0;
  const retryAfter = status === 429 || status === 503 ? parseRetryAfter(response.headers['retry-after']) : undefined;
  return errorFromStatus(status, parseJson(body.toString('utf8')), phase, retryAfter);
}

/**
 * A list response as a page. As Kubernetes' decoders do, `"items": null` (kube-apiserver's
 * empty PartialObjectMetadataList) and a missing `items` are an empty list, and a missing
 * or empty `metadata` means no resourceVersion. A missing `items` is taken for an empty
 * list only on something that says it is a list (a `…List` kind or a `metadata` object):
 * `{}` or a Status answered with 200 must not empty the cache.
 */
function toListPage(body: unknown, shape?: (item: unknown) => unknown): ListPage | undefined {
  if (!isRecord(body)) return undefined;
  const raw = body.items;
  if (raw !== null && raw !== undefined && !Array.isArray(raw)) return undefined;
  if (raw === undefined && !((typeof body.kind === 'string' && body.kind.endsWith('List')) || isRecord(body.metadata))) return undefined;
  const listed: readonly unknown[] = Array.isArray(raw) ? raw : [];
  const metadata = isRecord(body.metadata) ? body.metadata : {};
  const resourceVersion = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '';
  const items = shape && body.kind !== 'PartialObjectMetadataList' ? listed.map(shape) : listed;
  const page: { -readonly [K in keyof ListPage]: ListPage[K] } = { items, resourceVersion };
  if (typeof metadata.continue === 'string' && metadata.continue !== '') page.continue = metadata.continue;
  if (typeof metadata.remainingItemCount === 'number') page.remainingItemCount = metadata.remainingItemCount;
  return page;
}

/**
 * Where JSON.parse gave up, without its message: V8 quotes the text around the
 * fault, and a Secret's line would put its data into the error (and the logs).
 */
function syntaxErrorAt(error: unknown): string {
  const at = /position (\d+)/.exec(error instanceof Error ? error.message : '');
  return at ? `, invalid at position ${at[1]}` : '';
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
    return new InformerError('MalformedLine', `watch line is not JSON (${line.length} chars${syntaxErrorAt(error)})`, { phase: 'watch' });
  }
  return toWatchFrame(value);
}

/**
 * {@link parseWatchLine} for the `lazyDecode` option: reads the line's bytes
 * (which may be reused once it returns) into a lazily decoded event. A line
 * the scanner rejects goes through {@link parseWatchLine}, so that it is
 * reported exactly as without lazy decoding.
 */
export function parseWatchLineLazily(line: Buffer, keep?: KeepObject): WatchFrame {
  let value: unknown;
  try {
    value = lazyParseWatchLine(line, keep);
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

/** A watch event whose object is a full object where metadata was asked for, cut down (ERROR events stay as they are). */
function shapeFrame(frame: WatchFrame, shape: (object: unknown) => unknown): WatchFrame {
  if (frame instanceof InformerError || frame.type === 'ERROR') return frame;
  const object = shape(frame.object);
  return object === frame.object ? frame : { type: frame.type, object };
}

/**
 * GETs one JSON document (discovery, a single object) through the KubeConfig;
 * errors with an `InformerError` carrying the server's Status. Unsubscribing aborts.
 */
export function getJson(
  kc: KubeConfig,
  path: string,
  options: Pick<
    HttpTransportOptions,
    'userAgent' | 'listIdleTimeoutMs' | 'requestTimeoutMs' | 'maxDocumentBytes' | 'maxErrorBodyBytes' | 'protocol' | 'http2'
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
      `${phase} ${path}: the server does not serve PartialObjectMetadata (406 Not Acceptable); fetching full objects and cutting them down to metadata on arrival`,
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
  const parseBody = (bytes: Buffer): unknown => {
    if (lazy) {
      try {
        return lazyParseList(bytes, options.keepObject);
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
      return open(path + query, 'list').subscribe({
        next: ({ response }) => {
          if (listIdleTimeoutMs !== undefined) {
            response.setTimeout(listIdleTimeoutMs, () => {
              subscriber.error(new InformerError('Timeout', `list ${path}: no bytes for ${listIdleTimeoutMs} ms`, { phase: 'list' }));
            });
          }
          readBody(
            response,
            limitFor(response, listLimit, settings),
            (body) => {
              if (response.statusCode !== 200) return subscriber.error(httpError(response, body, 'list'));
              let value: unknown;
              try {
                value = parseBody(body);
              } catch (error) {
                const detail = `list ${path}: the response is not JSON (${body.length} bytes${syntaxErrorAt(error)})`;
                return subscriber.error(new InformerError('MalformedLine', detail, { phase: 'list' }));
              }
              const page = toListPage(value, shape);
              if (!page)
                return subscriber.error(new InformerError('MalformedLine', `list ${path}: the response is not a list`, { phase: 'list' }));
              const pending = takeNotice();
              subscriber.next(pending ? { ...page, notice: pending } : page);
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
