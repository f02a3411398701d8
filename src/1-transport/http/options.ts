import { getHeapStatistics } from 'node:v8';
import type { KeepObject } from '../lazyJson.ts';
import { DEFAULT_IDLE_CONNECTION_MS, type Http2Options } from '../http2/health.ts';
import type { ReachabilityOptions } from '../reachability.ts';
import type { HttpProtocol } from '../http2/request.ts';
import { PROTOBUF_MEDIA_TYPE } from '../protobuf/decode.ts';
import { timerMs } from '../../util/scheduleAfter.ts';

// The HTTP transport's options: limits, timeouts, their defaults, and the settings every request shares.

/** Tuning of the HTTP transport (see docs/transport.md). */
export interface HttpTransportOptions {
  /**
   * Bound (ms) on everything before a response's headers: obtaining credentials
   * (exec plugin, certificate files), connecting, the TLS handshake and waiting
   * for the headers, as one timer per request. Reported as a `Timeout` naming
   * what was being waited for. Default 30 s; `0` or `Infinity` turns it off.
   */
  readonly requestTimeoutMs?: number;
  /**
   * Bound (ms) on a new connection's TLS handshake, from TCP connected to the handshake done, as client-go's
   * `TLSHandshakeTimeout` (10 s): a server that accepts TCP and never finishes the handshake fails the connection (and
   * every request waiting for it, over HTTP/2) as a `Timeout` from an unreachable server, not after `requestTimeoutMs`.
   * Default {@link DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS}; `0` or `Infinity` turns it off (`requestTimeoutMs` still bounds it).
   */
  readonly tlsHandshakeTimeoutMs?: number;
  /** Abort a list request whose response sends no bytes for this long (ms). Default 60 s. */
  readonly listIdleTimeoutMs?: number;
  /**
   * The progress floor of a list page, an error body or a document (not a watch): every window of `listIdleTimeoutMs`
   * must bring this many bytes for each of its seconds, until the body ends, else the request is aborted as `Timeout`
   * (so a body sent a byte at a time ends). Default 4 KiB/s (240 KiB a 60 s window). 0: only the idle rule.
   */
  readonly minBodyBytesPerSecond?: number;
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
  /**
   * Largest list as a whole: the inflated bytes of all the pages of one list (its continue chain) together. Past
   * it the page being read is aborted and the list dropped as `ListTooLong` (then backoff and relist), so a server
   * that keeps sending pages cannot fill the heap. Default {@link defaultMaxListTotalBytes}: an eighth of V8's heap
   * limit (about 0.5 GiB at Node's default heap limit of about 4 GiB; `node --max-old-space-size` moves both). `Infinity`: no limit.
   */
  readonly maxListTotalBytes?: number;
  /**
   * Random numbers in [0, 1): which words of a JSON list page the count of its objects and arrays reads, for its charge
   * against `maxListBytes` and `maxListTotalBytes` (docs/reliability.md, "Limits"). Default `Math.random`; an informer
   * passes its own `random` (so a seeded one makes a page at its limit pass or fail the same way every run).
   */
  readonly random?: () => number;
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
   * Whether a paged list asks for its next page as soon as a page's `continue` token has arrived (it comes before the
   * items), while the page is still read, instead of once it has been read whole as client-go's pager does (see
   * docs/transport.md, "Paged lists"): one request ahead, its response unread until the reflector asks for it.
   * Default true.
   */
  readonly prefetchPages?: boolean;
  /**
   * HTTP version (see docs/transport.md, "HTTP/2"): `auto` asks for HTTP/2 over TLS and
   * falls back to HTTP/1.1 when the server or a proxy does not offer it; `h2` insists;
   * `http1` never asks. Default `auto`.
   */
  readonly protocol?: HttpProtocol;
  /** HTTP/2 PING health checks: read-idle 5 s, ping timeout 5 s by default (a late timeout re-pings). */
  readonly http2?: Http2Options;
  /**
   * An HTTP/1.1 keep-alive connection that carries no request for this long (ms) is closed, as client-go's
   * transport closes an idle one (`IdleConnTimeout`, 90 s; `http2.idleTimeoutMs` is the same bound for HTTP/2).
   * Default {@link DEFAULT_IDLE_CONNECTION_MS}; `0` or `Infinity`: kept until the server closes it (an idle
   * connection keeps no process alive either way). The request that opens a connection pool sets it for the pool.
   */
  readonly http1IdleTimeoutMs?: number;
  /**
   * With `lazyDecode`: objects this rejects (seeing only their metadata) are not decoded further and
   * arrive as `{ metadata }` skeletons marked `isSkipped` (a sharded informer drops them). Default: keep all.
   */
  readonly keepObject?: KeepObject;
  /**
   * Response compression (see docs/transport.md, "Compression"): `gzip` sends `Accept-Encoding: gzip` on lists,
   * watches and discovery and inflates a gzip body as it streams in; `none` asks for none. Every byte limit counts
   * inflated bytes. A body in an encoding not asked for is refused (`MalformedLine`). Default {@link DEFAULT_COMPRESSION}.
   */
  readonly compression?: Compression;
  /**
   * The probe that tells informers waiting after a failure no server answered (refused, reset, DNS, a connect
   * timeout: a restarting API server) that the server answers again (see docs/reliability.md, "Back after a
   * control-plane restart"): one `GET /version` per server at a time, 500 ms doubling to 2 s between probes, jittered.
   * `false`: no probe; such a wait is the backoff, as any other.
   */
  readonly reachability?: ReachabilityOptions | false;
  /**
   * The wire encoding of lists and watches (see docs/api.md, "Protobuf"). `protobuf`: with `lazyDecode`, for the
   * kinds the built-in protobuf schema knows (core/v1, apps/v1 and coordination.k8s.io/v1 at k8s.io/api v0.20.2),
   * ask `application/vnd.kubernetes.protobuf, application/json` and decode whichever the response says it is
   * (custom resources and servers without protobuf answer JSON); eager decoding, metadata-only resources and other
   * kinds keep JSON. `auto`: `protobuf` where objects are dropped by key
   * on arrival (a `keepObject`: the sharded and many-namespace informers), else `json`. Default {@link DEFAULT_ENCODING}.
   */
  readonly encoding?: Encoding;
}

/** What {@link HttpTransportOptions.encoding} asks for. */
export type Encoding = 'json' | 'protobuf' | 'auto';
/** The default of {@link HttpTransportOptions.encoding}. */
export const DEFAULT_ENCODING: Encoding = 'json';
/** What a list or watch asks for in protobuf, with JSON as the fallback (what client-go sends). */
export const PROTOBUF_ACCEPT = `${PROTOBUF_MEDIA_TYPE}, application/json`;

/**
 * Whether a list and watch with these options ask for protobuf (see {@link HttpTransportOptions.encoding}), given
 * whether the kind is one the schema knows.
 */
export function asksProtobuf(options: Pick<HttpTransportOptions, 'encoding' | 'lazyDecode' | 'keepObject'>, known: boolean): boolean {
  const encoding = options.encoding ?? DEFAULT_ENCODING;
  if (!known || options.lazyDecode !== true || encoding === 'json') return false;
  return encoding === 'protobuf' || options.keepObject !== undefined;
}

/** What {@link HttpTransportOptions.compression} asks the server for. */
export type Compression = 'gzip' | 'none';

/** The default of {@link HttpTransportOptions.requestTimeoutMs}. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** The default of {@link HttpTransportOptions.tlsHandshakeTimeoutMs}: client-go's (k8s.io/client-go/transport/cache.go). */
export const DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/** The default of {@link HttpTransportOptions.listIdleTimeoutMs}. */
export const DEFAULT_LIST_IDLE_TIMEOUT_MS = 60_000;
/** The default of {@link HttpTransportOptions.minBodyBytesPerSecond}: 4 KiB/s, 32 kbit/s. */
export const DEFAULT_MIN_BODY_BYTES_PER_SECOND = 4 * 1024;
/** The default of {@link HttpTransportOptions.maxLineBytes}. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
/** The default of {@link HttpTransportOptions.maxListBytes}. */
export const DEFAULT_MAX_LIST_BYTES = 256 * 1024 * 1024;
/** The share of V8's heap limit a list's pages may take together by default: an eighth (see docs/reliability.md, "Limits"). */
export const LIST_HEAP_SHARE = 1 / 8;
/**
 * The default of {@link HttpTransportOptions.maxListTotalBytes}: {@link LIST_HEAP_SHARE} of this process's heap limit
 * (`v8.getHeapStatistics().heap_size_limit`, read when the transport is made).
 * Decoded objects take about 1.0–1.6 times their JSON bytes of heap, and while a relist is gathered the cache
 * still holds the previous list: an eighth leaves room for both, and for what the application keeps.
 */
export function defaultMaxListTotalBytes(): number {
  return Math.floor(getHeapStatistics().heap_size_limit * LIST_HEAP_SHARE);
}
/** The default of {@link HttpTransportOptions.maxErrorBodyBytes}. */
export const DEFAULT_MAX_ERROR_BODY_BYTES = 1024 * 1024;
/** The default of {@link HttpTransportOptions.maxDocumentBytes}. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;

const DEFAULT_USER_AGENT = 'rx-informer/0.1 (node)';
/** The default of {@link HttpTransportOptions.protocol}. */
export const DEFAULT_PROTOCOL: HttpProtocol = 'auto';
/** The default of {@link HttpTransportOptions.compression}. */
export const DEFAULT_COMPRESSION: Compression = 'gzip';

export const JSON_ACCEPT = 'application/json';
/** What a metadata-only list asks for, with plain JSON as the fallback (as client-go's metadata client, 10a). */
export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
/** What a metadata-only watch asks for (10e). */
export const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export interface RequestSettings {
  readonly userAgent: string;
  /** Undefined: no bound. */
  readonly requestTimeoutMs: number | undefined;
  /** Undefined: no bound of its own. */
  readonly tlsHandshakeTimeoutMs: number | undefined;
  /** The byte limit of an error body. */
  readonly maxErrorBodyBytes: number;
  readonly protocol: HttpProtocol;
  readonly http2: Http2Options;
  /** How long an idle HTTP/1.1 keep-alive connection stays open; undefined: until the server closes it. */
  readonly http1IdleTimeoutMs: number | undefined;
  readonly compression: Compression;
}

export function requestSettings(
  options: Pick<
    HttpTransportOptions,
    | 'userAgent'
    | 'requestTimeoutMs'
    | 'tlsHandshakeTimeoutMs'
    | 'maxErrorBodyBytes'
    | 'protocol'
    | 'http2'
    | 'http1IdleTimeoutMs'
    | 'compression'
  >,
): RequestSettings {
  return {
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    requestTimeoutMs: timerMs(options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS),
    tlsHandshakeTimeoutMs: timerMs(options.tlsHandshakeTimeoutMs, DEFAULT_TLS_HANDSHAKE_TIMEOUT_MS),
    maxErrorBodyBytes: byteLimit(options.maxErrorBodyBytes, DEFAULT_MAX_ERROR_BODY_BYTES),
    protocol: options.protocol ?? DEFAULT_PROTOCOL,
    http2: options.http2 ?? {},
    http1IdleTimeoutMs: timerMs(options.http1IdleTimeoutMs, DEFAULT_IDLE_CONNECTION_MS),
    compression: options.compression ?? DEFAULT_COMPRESSION,
  };
}

/** A byte-limit option: a positive number (Infinity: no limit), else the default. */
export function byteLimit(value: number | undefined, fallback: number): number {
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
