import { map, type Observable } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import { rawKey, rawResourceVersion } from '../0-model/keys.ts';
import { isSkipped } from './lazyJson.ts';
import { isRecord } from '../util/isRecord.ts';

/** Options of one list request (the source sets them; selectors are bound in the {@link ListWatch}). */
export interface ListOptions {
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  readonly limit?: number;
  readonly continue?: string;
}

/** Options of one watch request. */
export interface WatchOptions {
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'NotOlderThan';
  readonly allowWatchBookmarks?: boolean;
  readonly timeoutSeconds?: number;
  readonly sendInitialEvents?: boolean;
}

/** One page of a list response, items not yet validated. */
export interface ListPage {
  readonly items: readonly unknown[];
  /** The list's `metadata.resourceVersion`. */
  readonly resourceVersion: string;
  /** The token for the next page; absent or empty on the last one. */
  readonly continue?: string;
  readonly remainingItemCount?: number;
  /**
   * A notice that came with this page (`NotAcceptable`: the server does not serve
   * PartialObjectMetadata; full objects were fetched and cut down). Reported once, on the
   * first page (or watch) that succeeded after it; not a failure.
   */
  readonly notice?: InformerError;
}

/**
 * The longest continue token sent back to the server, in characters. kube-apiserver's is unpadded base64url of
 * `{"v":"meta.k8s.io/v1","rv":N,"start":"<namespace>/<name>\u0000"}` (k8s.io/apiserver storage/etcd3 and
 * apimachinery's storage.EncodeContinue): a name of at most 253 characters and a namespace of 63 make it under 600.
 * client-go has no bound of its own but the server's (kube-apiserver reads 1 MiB of request headers, Go's
 * `MaxHeaderBytes`); Node sends an HTTP/2 header block of at most 64 KiB (`maxSendHeaderBlockLength`), credentials
 * included, and refuses its own stream past it. 16 KiB: ~30 times the largest real token, and room left beside it.
 * A longer one is the server's malformed answer (`MalformedLine`), not asked for.
 */
export const MAX_CONTINUE_TOKEN_CHARS = 16 * 1024;

/**
 * The longest resourceVersion sent back to the server (a list's or watch's `resourceVersion=`), in characters.
 * kube-apiserver's is an etcd revision, a uint64 in decimal (20 digits at most); clients must treat it as opaque, so the
 * bound is generous. A list answering with a longer one is the server's malformed answer (`MalformedLine`), and the
 * transport refuses to put one in a request (the reflector then relists at the latest state, "").
 */
export const MAX_RESOURCE_VERSION_CHARS = 1024;

/** Why a server-given value may not go into a request's query: too long to be one a real server gives; undefined: it may. */
export function overlongQueryValue(name: 'continue' | 'resourceVersion', value: string | undefined): string | undefined {
  const max = name === 'continue' ? MAX_CONTINUE_TOKEN_CHARS : MAX_RESOURCE_VERSION_CHARS;
  if (value === undefined || value.length <= max) return undefined;
  const what = name === 'continue' ? 'continue token' : 'resourceVersion';
  return `the server's ${what} is ${value.length.toLocaleString('en-US')} characters, over the ${max.toLocaleString('en-US')} sent back to it`;
}

/** The annotation of the bookmark that ends a streaming list's initial events (`sendInitialEvents`). */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** Whether a BOOKMARK's object is the one that ends a streaming list's initial events (annotated initial-events-end). */
export function isInitialEventsEnd(object: unknown): boolean {
  if (!isRecord(object) || !isRecord(object.metadata)) return false;
  const annotations = object.metadata.annotations;
  return isRecord(annotations) && annotations[INITIAL_EVENTS_END] === 'true';
}

/** One line of a watch stream, parsed once, not yet validated. */
export interface RawWatchEvent {
  readonly type: string;
  readonly object: unknown;
  /**
   * On an `ERROR` event, the request it was read from (`watch /api/v1/pods`), set by the HTTP transport: the
   * reflector's error names it ({@link InformerError.request}). Never written to a trace.
   */
  readonly request?: string;
}

/**
 * What a watch stream yields: events, `MalformedLine` errors for lines that
 * could not be parsed (those do not end the stream; the reflector ends the watch), notices (`isNotice`:
 * `NotAcceptable`, before the first line) and faults of one object (`isObjectFault`: a caller's
 * `keepObject` threw) that fail nothing.
 */
export type WatchFrame = RawWatchEvent | InformerError;

/**
 * A watch frame with the JSON text it was read from: `line` is set only when that text is the
 * event exactly (one line `{"type": …, "object": …}`, no other member, the object neither cut
 * down nor skipped), so that writing it is writing the event. See {@link ListWatch.watchLines}.
 */
export interface LinedFrame {
  readonly frame: WatchFrame;
  readonly line?: string;
  /** The length of `line` in UTF-8 bytes, when the transport knows it (it read them). */
  readonly bytes?: number;
}

/**
 * The I/O boundary. A ListWatch is bound to one resource, namespace and set of
 * selectors; `list` and `watch` are cold: each subscription is one HTTP
 * request, and unsubscribing aborts it.
 *
 * - `list` emits one page and completes, or errors with an `InformerError`.
 * - `watch` emits frames as lines arrive, completes when the server ends the
 *   stream cleanly, and errors with an `InformerError` on an HTTP error or a
 *   broken connection.
 *
 * Everything after this interface is synchronous RxJS and marble-testable:
 * tests substitute a ListWatch made of cold marble Observables.
 */
export interface ListWatch {
  list(options: ListOptions): Observable<ListPage>;
  watch(options: WatchOptions): Observable<WatchFrame>;
  /**
   * Optional: emits once, then completes, when the server answers again. Subscribing starts (or joins) the
   * transport's one probe of that server, backed off and jittered (see `reachable` in `./reachability.ts`);
   * unsubscribing the last subscriber stops it. The reflector subscribes while it waits after a failure no
   * server answered (an `unreachable` error), and ends the wait when it emits. Without it (fakes, a
   * user's ListWatch) such a wait is the backoff, as any other.
   */
  readonly reachable$?: Observable<void>;
  /**
   * Optional: `watch`, each frame with the JSON text of its line when the transport read it whole
   * (the HTTP transport does). `record` asks for it, to write a trace line around the text instead
   * of serializing the parsed object again; nothing else does, and nothing changes for `watch`.
   * A wrapper that changes frames must not pass it on (`passThrough` and `filtered` do not).
   */
  watchLines?(options: WatchOptions): Observable<LinedFrame>;
}

/** Whether an informer's source is a ListWatch (rather than a KubeConfig). */
export function isListWatch(value: KubeConfig | ListWatch): value is ListWatch {
  return typeof (value as Partial<ListWatch>).list === 'function' && typeof (value as Partial<ListWatch>).watch === 'function';
}

const CHANGES = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/**
 * `listWatch` without the objects whose key `wants` rejects: list items are left out, watch
 * events become bookmarks at their resourceVersion (so a watch of only dropped objects still
 * moves on). Skeletons of objects the transport did not decode are dropped the same way.
 */
export function filtered(listWatch: ListWatch, wants: (key: string | undefined) => boolean): ListWatch {
  const drop = (object: unknown) => isSkipped(object) || !wants(rawKey(object));
  return {
    ...(listWatch.reachable$ ? { reachable$: listWatch.reachable$ } : {}),
    list: (options) =>
      listWatch.list(options).pipe(
        map((page) => {
          const items = page.items.filter((item) => !drop(item));
          return items.length === page.items.length ? page : { ...page, items };
        }),
      ),
    watch: (options) =>
      listWatch.watch(options).pipe(
        map((frame): WatchFrame => {
          if (frame instanceof InformerError || !CHANGES.has(frame.type) || !drop(frame.object)) return frame;
          const resourceVersion = rawResourceVersion(frame.object);
          return { type: 'BOOKMARK', object: { metadata: resourceVersion === undefined ? {} : { resourceVersion } } };
        }),
      ),
  };
}
