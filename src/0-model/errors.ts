import type { z } from 'zod';
import { isRecord } from '../util/isRecord.ts';

/**
 * Why something went wrong. Every fault an informer meets is reported as an
 * {@link InformerError} carrying one of these reasons; none is swallowed.
 *
 * - `Expired`/`Gone`: the resourceVersion asked for is too old (HTTP 410); the informer relists.
 * - `TooManyRequests`: HTTP 429; the informer waits the longer of its next backoff step and the server's
 *   `Retry-After` (taken as at most 300 s), then tries again.
 * - `ServerError`: HTTP 5xx but 504.
 * - `Unauthorized`/`Forbidden`/`NotFound`/`BadRequest`/`Invalid`/`Conflict`: the matching HTTP status.
 * - `NetworkError`: connection refused or reset, DNS, TLS.
 * - `ProtocolError`: HTTP/2 broken by the server or a proxy before it (a malformed frame or header block, a stream
 *   reset with a protocol error code) or a connection it closed with an error code (GOAWAY `ENHANCE_YOUR_CALM`, …).
 *   Handled like `NetworkError`: the watch resumes (on a new connection), a list is retried after the backoff.
 * - `Timeout`: a request or a watch stalled and was aborted, or the server answered 504 Gateway Timeout
 *   (client-go's `IsTimeout`). Also a wait past its bound: a timed `waitForCacheSync`, or a controller slot kept
 *   waiting by abandoned reconciles (`AbandonedRoomError`, rx-informer/controller).
 * - `VeryShortWatch`: a watch ended at once with no event (counts as a failure for backoff).
 * - `MalformedLine`: a watch line that is not JSON, not an object, or too long; a response body that cannot be
 *   decoded (not JSON, gzip that does not inflate, a Content-Encoding not asked for).
 * - `ListTooLong`: a list's continue chain repeated a token, or went past `maxListPages` pages,
 *   `maxListObjects` objects or `http.maxListTotalBytes` bytes, or past `maxListDurationMs`, without completing (a
 *   streaming list: more than `maxListObjects` initial events, or past `maxListDurationMs`); the reflector drops it
 *   and relists after the backoff. Discovery past
 *   `maxGroupVersions` or `maxResources` fails with it too.
 * - `UnknownEventType`: a watch event whose `type` is not one Kubernetes defines.
 * - `ValidationFailed`: an object the resource's zod schema rejects (see `issues`), whose
 *   kind is not the resource's, or whose schema (a refinement) threw. The cache keeps the key's
 *   last valid object (see docs/invalid-objects.md).
 * - `TransformError`: the informer's `transform` threw for an object (handled like `ValidationFailed`).
 * - `IndexerError`: an index function threw for an object; the cache keeps the key's last version.
 * - `WatchError`: the server ended a streaming list (`watchList`) before its initial-events-end bookmark; the
 *   informer makes a plain list instead, after the backoff. An `ERROR` event in a watch is not a `WatchError`: its
 *   Status is read as an HTTP error is, through {@link reasonForStatus} (a 410 is `Expired` or `Gone`, a 500
 *   `ServerError`, a 403 `Forbidden`, a 504 `Timeout`, a code no row names `Unknown`; a Status without a `code`
 *   counts as 500), as client-go reads it (`apierrors.FromObject`).
 * - `HandlerError`: a subscriber's handler threw (other subscribers are unaffected), or a caller's `http.keepObject`
 *   did (the object is kept; phase `decode`).
 * - `Config`: the KubeConfig could not be applied (no cluster, a file it names cannot be read, an exec section that is not valid,
 *   a header value that may not be sent).
 * - `CredentialPlugin`: an exec credential plugin failed (not found, non-zero exit, output too large or not an
 *   ExecCredential); its stderr is quoted cut and scrubbed. A hung plugin is a `Timeout` waiting for credentials.
 * - `NotAcceptable`: a notice, not a failure (status 406, once per ListWatch): the server does not serve
 *   PartialObjectMetadata, so a metadata-only informer fetches full objects and cuts them down on arrival.
 * - `ResponseTooLarge`: a response body (list page, error Status, discovery document) passed its byte limit
 *   (see docs/reliability.md, "Limits"), or discovery's documents together passed `maxTotalBytes`; the request was
 *   aborted. A failed request like a 5xx: backoff, then again.
 */
export type ErrorReason =
  | 'Expired'
  | 'Gone'
  | 'TooManyRequests'
  | 'ServerError'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'BadRequest'
  | 'Invalid'
  | 'Conflict'
  | 'NetworkError'
  | 'ProtocolError'
  | 'Timeout'
  | 'VeryShortWatch'
  | 'MalformedLine'
  | 'ListTooLong'
  | 'UnknownEventType'
  | 'ValidationFailed'
  | 'TransformError'
  | 'IndexerError'
  | 'WatchError'
  | 'HandlerError'
  | 'Config'
  | 'CredentialPlugin'
  | 'NotAcceptable'
  | 'ResponseTooLarge'
  | 'Unknown';

/**
 * The `type` of the library's process warnings (`process.on('warning', (w) => w.name === 'RxInformerWarning')`), whose
 * `code` is an {@link ErrorReason}: faults nobody observes (5-informer/unobservedErrors.ts), a token file that hangs.
 */
export const WARNING_TYPE = 'RxInformerWarning';

/** Where in the list/watch cycle an error happened. */
export type ErrorPhase = 'list' | 'watch' | 'decode' | 'handler' | 'config';

/** The fields an {@link InformerError} can carry beyond its message. */
export interface InformerErrorDetails {
  /** HTTP status code (or the `code` of an in-stream Status). */
  readonly status?: number;
  /** Where it happened. */
  readonly phase?: ErrorPhase;
  /**
   * Seconds the server asked us to wait: its `Retry-After` on a 429 or a 503. The informer's wait is the longer of
   * this (at most 300 s) and its next backoff step.
   */
  readonly retryAfterSeconds?: number;
  /** The object's cache key, for decode errors. */
  readonly key?: string;
  /** The object's resourceVersion, for decode errors. */
  readonly resourceVersion?: string;
  /** zod's issues, with paths, for `ValidationFailed`. */
  readonly issues?: readonly z.core.$ZodIssue[];
  /** The Kubernetes Status object the server sent, if any. */
  readonly statusObject?: unknown;
  /** The underlying error. */
  readonly cause?: unknown;
  /** No server answered: see {@link InformerError.unreachable}. */
  readonly unreachable?: boolean;
  /** The request that failed: see {@link InformerError.request}. */
  readonly request?: string;
  /** The exec plugin a `Timeout` was still waiting on: see {@link InformerError.execPlugin}. */
  readonly execPlugin?: string;
}

/**
 * A typed error value: what went wrong (`reason`), where (`phase`), and the
 * server's own words where it gave any. Emitted on an informer's `errors$`.
 */
export class InformerError extends Error {
  readonly reason: ErrorReason;
  readonly status: number | undefined;
  readonly phase: ErrorPhase | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly key: string | undefined;
  readonly resourceVersion: string | undefined;
  readonly issues: readonly z.core.$ZodIssue[] | undefined;
  readonly statusObject: unknown;
  /**
   * True when no server answered the request: the connection could not be made or broke before any response
   * (refused, reset, host or network unreachable, DNS, a connect or TLS-handshake timeout). A restarting
   * API server looks like this; a `NetworkError` of a watch that broke mid-stream does not (the server had
   * answered). Where the transport can tell when the server answers again, the reflector's wait after such a
   * failure ends then (docs/reliability.md, "Back after a control-plane restart").
   */
  readonly unreachable: boolean;
  /**
   * The HTTP request that failed, as its verb and path without the query (`list /apis/stable.example.com/v1/myapples`,
   * `watch /api/v1/namespaces/shop/pods`, `GET /apis`): set by the transport on every failure of a request it made
   * (an error Status, a timeout, a body past its limit, a broken connection, a fault read from an open watch: an
   * `ERROR` event's Status, a line that cannot be read), undefined for the rest (a decode, a handler). Not in
   * `message` (the CLI and most reports already name the resource); a report that names nothing else shows it (see docs/api.md, "errors$").
   */
  readonly request: string | undefined;
  /**
   * A `Timeout` of a request still waiting for its credential from an exec plugin: the plugin's command
   * (`/usr/local/bin/kubelogin`), as the message names it (`waiting for: credentials from exec plugin …`); undefined
   * for any other error. Such a request never reached the server: the plugin (a browser login, an MFA prompt) is still
   * running, which the CLI reads here to wait for it rather than blame the server.
   */
  readonly execPlugin: string | undefined;

  constructor(reason: ErrorReason, message: string, details: InformerErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'InformerError';
    this.reason = reason;
    this.status = details.status;
    this.phase = details.phase;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.key = details.key;
    this.resourceVersion = details.resourceVersion;
    this.issues = details.issues;
    this.statusObject = details.statusObject;
    this.unreachable = details.unreachable === true;
    this.request = details.request;
    this.execPlugin = details.execPlugin;
  }

  /** The same error, naming the request that failed (`list /api/v1/pods`); one that names a request already is kept. */
  forRequest(request: string): InformerError {
    if (this.request !== undefined) return this;
    const named = new InformerError(this.reason, this.message, { ...this.details(), request });
    named.stack = this.stack; // where it was made, not where it was named
    return named;
  }

  /** The same error, seen from another phase. */
  inPhase(phase: ErrorPhase): InformerError {
    if (this.phase === phase) return this;
    return new InformerError(this.reason, this.message, { ...this.details(), phase });
  }

  protected details(): InformerErrorDetails {
    return {
      status: this.status,
      phase: this.phase,
      retryAfterSeconds: this.retryAfterSeconds,
      key: this.key,
      resourceVersion: this.resourceVersion,
      issues: this.issues,
      statusObject: this.statusObject,
      cause: this.cause,
      unreachable: this.unreachable,
      request: this.request,
      execPlugin: this.execPlugin,
    };
  }
}

/**
 * What a reason means for the list or watch it came with — the one classification that
 * `isFailure` (health, backoff), `isObjectFault`, `isNotice`, `isResumable` and the CLI's
 * `isPermanent` read:
 *
 * - `failure`: the list or watch failed (or could not open); health counts it, the reflector recovers.
 * - `object`: about one object or one subscriber; the watch goes on.
 * - `notice`: worth knowing, failed nothing (the request it came with succeeded).
 *
 * `resumable`: after it, the same watch may simply be opened again from its resourceVersion (at
 * once after progress, else after the backoff); any other failure relists after the backoff.
 * `permanent`: before a resource has synced, retrying cannot help (kubectl gives up on it too).
 */
export interface ReasonClass {
  readonly kind: 'failure' | 'object' | 'notice';
  readonly resumable?: true;
  readonly permanent?: true;
}

const failure: ReasonClass = { kind: 'failure' };
const resumable: ReasonClass = { kind: 'failure', resumable: true };
const permanent: ReasonClass = { kind: 'failure', permanent: true };
const object: ReasonClass = { kind: 'object' };

/** Every {@link ErrorReason}, classified (`satisfies` makes a new reason without a row a type error). */
export const REASON_CLASSES = {
  Expired: failure,
  Gone: failure,
  TooManyRequests: failure,
  ServerError: resumable,
  Unauthorized: failure,
  Forbidden: permanent,
  NotFound: permanent,
  BadRequest: permanent,
  Invalid: failure,
  Conflict: failure,
  NetworkError: resumable,
  ProtocolError: resumable,
  Timeout: resumable,
  VeryShortWatch: failure,
  MalformedLine: failure,
  ListTooLong: failure,
  UnknownEventType: object,
  ValidationFailed: object,
  TransformError: object,
  IndexerError: object,
  WatchError: resumable,
  HandlerError: object,
  Config: failure,
  CredentialPlugin: failure,
  NotAcceptable: { kind: 'notice' },
  ResponseTooLarge: failure,
  Unknown: resumable,
} as const satisfies Record<ErrorReason, ReasonClass>;

/** How {@link REASON_CLASSES} classifies a reason (a reason it does not know, from a cast, is a failure). */
export function classOf(reason: ErrorReason): ReasonClass {
  return (REASON_CLASSES as Readonly<Record<string, ReasonClass>>)[reason] ?? failure;
}

export { MAX_RETRY_AFTER_SECONDS, clampRetryAfter } from './retryAfter.ts';

/** True for a fault after which a watch is resumed rather than relisted (see `afterWatch`). */
export function isResumable(error: InformerError): boolean {
  return classOf(error.reason).resumable === true;
}

/** True for a notice (`NotAcceptable`): reported once, no request failed, nothing to recover from. */
export function isNotice(error: InformerError): boolean {
  return classOf(error.reason).kind === 'notice';
}

/**
 * True when the error is about one object or handler, or is a notice (the watch is still
 * running), false for a transport or server fault (a malformed line too: the reflector ends
 * the watch on it).
 */
export function isObjectFault(error: InformerError): boolean {
  return classOf(error.reason).kind !== 'failure';
}

/**
 * Whether an error reported by an informer's source ended (or failed to open) a list or watch:
 * what health counts in `consecutiveFailures` (the complement of {@link isObjectFault}).
 */
export function isFailure(error: InformerError): boolean {
  return !isObjectFault(error);
}

/** Before a resource has synced, a list that fails with this cannot succeed by retrying (400, 403, 404). */
export function isPermanent(error: InformerError): boolean {
  return classOf(error.reason).permanent === true;
}

/**
 * What a thrown value says, for a report: never throws itself, whatever was
 * thrown (a string, undefined, an object whose `message` getter throws).
 */
export function describeThrown(thrown: unknown): string {
  try {
    if (thrown instanceof Error) return String(thrown.message);
    if (typeof thrown === 'object' && thrown !== null && typeof (thrown as { message?: unknown }).message === 'string')
      return (thrown as { message: string }).message;
    return String(thrown);
  } catch {
    return 'a value that cannot be described';
  }
}

/** True for 410 Expired / Gone: the resourceVersion is too old and a relist is due. */
export function isExpired(error: InformerError): boolean {
  return error.reason === 'Expired' || error.reason === 'Gone' || error.status === 410;
}

/**
 * The one status → reason table (client-go's `NewGenericServerResponse`, k8s.io/apimachinery/pkg/api/errors):
 * 504 is `Timeout` (client-go's `IsTimeout` holds for a 504), 410 is `Expired` or `Gone` (`IsResourceExpired`,
 * `IsGone`: the resourceVersion is too old), any other 5xx `ServerError`. Every HTTP status the library meets, the
 * transport's and the Lease client's alike, is read through {@link reasonForStatus}.
 */
const reasonsByStatus: Readonly<Record<number, ErrorReason>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  422: 'Invalid',
  429: 'TooManyRequests',
  504: 'Timeout',
};

/**
 * The reason for an HTTP status, preferring the Status object's own `reason`
 * (Kubernetes sends `Expired` or `Gone` for 410).
 */
export function reasonForStatus(status: number, statusReason?: string): ErrorReason {
  if (status === 410) return statusReason === 'Gone' ? 'Gone' : 'Expired';
  const known = reasonsByStatus[status];
  if (known) return known;
  if (status >= 500) return 'ServerError';
  return 'Unknown';
}

/** A Kubernetes `Status` object, as sent with error responses and in ERROR watch events. */
export interface KubeStatus {
  readonly kind?: string;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: unknown;
}

/** The longest Status message (in characters) put into an error's message; longer ones are cut. */
export const MAX_STATUS_MESSAGE_CHARS = 1024;

/** How {@link capMessage} cuts a message. */
export interface CapOptions {
  /** The most characters kept. Default {@link MAX_STATUS_MESSAGE_CHARS}. */
  readonly maxChars?: number;
  /**
   * What the cut says after the `…`: the whole message's size in UTF-8 bytes (`(N bytes)`, the default) or the
   * characters left out (`(N more characters)`).
   */
  readonly tail?: 'bytes' | 'characters';
}

/**
 * A message as an error or a report may print it: at most `maxChars` characters (default
 * {@link MAX_STATUS_MESSAGE_CHARS}), a longer one cut with `… (N bytes)` or `… (N more characters)` after it (a server's
 * 2 MB message is not a 2 MB log line). Never cut between the two halves of a surrogate pair. The one capper: the
 * CLI's messages use it too.
 */
export function capMessage(message: string, options: CapOptions = {}): string {
  const max = options.maxChars ?? MAX_STATUS_MESSAGE_CHARS;
  if (message.length <= max) return message;
  const end = /[\ud800-\udbff]/.test(message.charAt(max - 1)) ? max - 1 : max;
  const tail = options.tail === 'characters' ? `${message.length - end} more characters` : `${Buffer.byteLength(message, 'utf8')} bytes`;
  return `${message.slice(0, end)}… (${tail})`;
}

/**
 * Reads a Status object defensively: any field that is not of the right type is dropped,
 * and `message` and `reason` are capped ({@link capMessage}); `details` stays as sent.
 */
export function asStatus(value: unknown): KubeStatus | undefined {
  if (!isRecord(value)) return undefined;
  const status: { -readonly [K in keyof KubeStatus]: KubeStatus[K] } = {};
  if (typeof value.kind === 'string') status.kind = capMessage(value.kind, { maxChars: 256 });
  if (typeof value.status === 'string') status.status = capMessage(value.status, { maxChars: 256 });
  if (typeof value.message === 'string') status.message = capMessage(value.message);
  if (typeof value.reason === 'string') status.reason = capMessage(value.reason, { maxChars: 256 });
  if (typeof value.code === 'number') status.code = value.code;
  if ('details' in value) status.details = value.details;
  return status;
}

/**
 * Whether a body is a Kubernetes Status that reports a failure, whose `code` and `reason` may stand for the HTTP
 * status: `kind: "Status"` (or no kind, with `status: "Failure"`), and not `status: "Success"`. client-go reads an
 * error body as a Status only when it decodes as one and says `Failure` (rest/request.go, `Result.Error`); we also
 * take a `kind: "Status"` without a `status` (older servers and aggregated APIs send them).
 */
export function isFailureStatus(status: KubeStatus | undefined): status is KubeStatus {
  if (status === undefined || status.status === 'Success') return false;
  return status.kind === 'Status' || (status.kind === undefined && status.status === 'Failure');
}

/**
 * An {@link InformerError} from an HTTP status and the body the server sent (if any). Only a failure Status
 * ({@link isFailureStatus}) speaks for the response: a gateway's `{"code":404,"message":…}` in a 503 stays a 503,
 * its message shown after the status.
 */
export function errorFromStatus(httpStatus: number, body: unknown, phase: ErrorPhase, retryAfterSeconds?: number): InformerError {
  const read = asStatus(body);
  const status = isFailureStatus(read) ? read : undefined;
  const code = status?.code ?? httpStatus;
  const message = status?.message ?? (read?.message === undefined ? `HTTP ${httpStatus}` : `HTTP ${httpStatus}: ${read.message}`);
  return new InformerError(reasonForStatus(code, status?.reason), message, {
    status: code,
    phase,
    retryAfterSeconds,
    statusObject: body,
  });
}
