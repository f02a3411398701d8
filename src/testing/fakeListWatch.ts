/**
 * A scripted fake {@link ListWatch} for marble tests.
 *
 * Each `list()` / `watch()` call takes the next entry of its script (a cold
 * Observable, or a function of the call's options returning one); once the
 * script has run out, calls return `NEVER` (a request that hangs). Every call
 * is recorded with its options and the virtual time it was made, and every
 * subscription is tracked (when it started, when and how it ended), so a test
 * can assert what was asked, when, and that at most one request was open at
 * a time.
 *
 * ```ts
 * testScheduler.run(({ cold }) => {
 *   const fake = fakeListWatch({
 *     lists: [cold('-(p|)', { p: listPage('10', [pod('a')]) })],
 *     watches: [cold('--a--#', { a: watchEvent('ADDED', pod('b', '11')) }, httpFailure(500))],
 *   });
 *   // … listAndWatch(fake, { decode, scheduler: testScheduler }) …
 *   expect(fake.lists[0]?.options).toEqual({ resourceVersion: '0', limit: 500 });
 *   expect(fake.maxActive).toBe(1);
 * });
 * ```
 */
import { NEVER, Observable, asyncScheduler, type SchedulerLike } from 'rxjs';
import { InformerError, reasonForStatus, type ErrorPhase, type ErrorReason } from '../0-model/errors.ts';
import type { ListOptions, ListPage, ListWatch, RawWatchEvent, WatchFrame, WatchOptions } from '../1-transport/listWatch.ts';

/** One entry of a script: a (cold) Observable, or a function of the call's options that returns one. */
export type Scripted<O, V> = Observable<V> | ((options: O, index: number) => Observable<V>);

/** How a request's subscription ended. */
export type RequestEnd = 'complete' | 'error' | 'unsubscribe';

/** One recorded `list()` or `watch()` call. */
export interface FakeRequest<O> {
  readonly kind: 'list' | 'watch';
  /** 0-based position among the calls of the same kind. */
  readonly index: number;
  /** The options the call was made with (as given). */
  readonly options: O;
  /** `scheduler.now()` when `list()`/`watch()` was called. */
  readonly calledAt: number;
  /** Whether the script had run out for this call (it returned `NEVER`). */
  readonly unscripted: boolean;
  /** How many times the returned Observable was subscribed. */
  readonly subscriptions: number;
  /** `scheduler.now()` when it was (first) subscribed. */
  readonly subscribedAt: number | undefined;
  /** `scheduler.now()` when its (last) subscription ended. */
  readonly endedAt: number | undefined;
  /** How its (last) subscription ended; undefined while open or never subscribed. */
  readonly end: RequestEnd | undefined;
  /** True while a subscription is open. */
  readonly open: boolean;
}

export type FakeListRequest = FakeRequest<ListOptions>;
export type FakeWatchRequest = FakeRequest<WatchOptions>;

export interface FakeListWatchScript {
  readonly lists?: readonly Scripted<ListOptions, ListPage>[];
  readonly watches?: readonly Scripted<WatchOptions, WatchFrame>[];
}

export interface FakeListWatchOptions {
  /** The clock calls and subscriptions are stamped with. Default `asyncScheduler` (virtual inside `TestScheduler.run`). */
  readonly scheduler?: SchedulerLike;
}

/** A {@link ListWatch} that plays a script and records what was asked of it. */
export interface FakeListWatch extends ListWatch {
  /** Every call, in call order. */
  readonly requests: readonly (FakeListRequest | FakeWatchRequest)[];
  /** The `list()` calls, in order. */
  readonly lists: readonly FakeListRequest[];
  /** The `watch()` calls, in order. */
  readonly watches: readonly FakeWatchRequest[];
  /** Subscriptions open now (lists and watches together). */
  readonly active: number;
  /** The most subscriptions that were ever open at once. */
  readonly maxActive: number;
  /** Appends entries to the list script. */
  scriptLists(...entries: Scripted<ListOptions, ListPage>[]): void;
  /** Appends entries to the watch script. */
  scriptWatches(...entries: Scripted<WatchOptions, WatchFrame>[]): void;
}

interface MutableRequest<O> {
  kind: 'list' | 'watch';
  index: number;
  options: O;
  calledAt: number;
  unscripted: boolean;
  subscriptions: number;
  subscribedAt: number | undefined;
  endedAt: number | undefined;
  end: RequestEnd | undefined;
  open: boolean;
  openCount: number;
}

export function fakeListWatch(script: FakeListWatchScript = {}, options: FakeListWatchOptions = {}): FakeListWatch {
  const clock = options.scheduler ?? asyncScheduler;
  const listScript = [...(script.lists ?? [])];
  const watchScript = [...(script.watches ?? [])];
  const requests: MutableRequest<ListOptions | WatchOptions>[] = [];
  const lists: MutableRequest<ListOptions>[] = [];
  const watches: MutableRequest<WatchOptions>[] = [];
  let active = 0;
  let maxActive = 0;

  function call<O extends ListOptions | WatchOptions, V>(
    kind: 'list' | 'watch',
    entries: Scripted<O, V>[],
    ofKind: MutableRequest<O>[],
    callOptions: O,
  ): Observable<V> {
    const index = ofKind.length;
    const entry = entries[index];
    const request: MutableRequest<O> = {
      kind,
      index,
      options: callOptions,
      calledAt: clock.now(),
      unscripted: entry === undefined,
      subscriptions: 0,
      subscribedAt: undefined,
      endedAt: undefined,
      end: undefined,
      open: false,
      openCount: 0,
    };
    ofKind.push(request);
    requests.push(request as MutableRequest<ListOptions | WatchOptions>);
    const source: Observable<V> = entry === undefined ? NEVER : typeof entry === 'function' ? entry(callOptions, index) : entry;

    return new Observable<V>((subscriber) => {
      request.subscriptions++;
      request.subscribedAt ??= clock.now();
      request.end = undefined;
      request.openCount++;
      request.open = true;
      active++;
      maxActive = Math.max(maxActive, active);
      // A request that completes or fails is over before its consumer reacts
      // (which may already open the next one), so it stops counting as open first.
      let live = true;
      const close = (how: RequestEnd) => {
        if (!live) return;
        live = false;
        request.openCount--;
        request.open = request.openCount > 0;
        request.end = how;
        request.endedAt = clock.now();
        active--;
      };
      const inner = source.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => {
          close('error');
          subscriber.error(error);
        },
        complete: () => {
          close('complete');
          subscriber.complete();
        },
      });
      return () => {
        inner.unsubscribe();
        close('unsubscribe');
      };
    });
  }

  return {
    list: (listOptions) => call('list', listScript, lists, listOptions),
    watch: (watchOptions) => call('watch', watchScript, watches, watchOptions),
    get requests() {
      return requests;
    },
    get lists() {
      return lists;
    },
    get watches() {
      return watches;
    },
    get active() {
      return active;
    },
    get maxActive() {
      return maxActive;
    },
    scriptLists: (...entries) => void listScript.push(...entries),
    scriptWatches: (...entries) => void watchScript.push(...entries),
  };
}

// -- wire-level builders ----------------------------------------------------------

/** One list response page. */
export function listPage(resourceVersion: string, items: readonly unknown[], continueToken?: string): ListPage {
  return continueToken === undefined ? { items, resourceVersion } : { items, resourceVersion, continue: continueToken };
}

/** A watch event as it comes off the wire. */
export function watchEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR' | (string & {}), object: unknown): RawWatchEvent {
  return { type, object };
}

/** A BOOKMARK event at a resourceVersion (optionally with annotations, e.g. `k8s.io/initial-events-end`). */
export function watchBookmark(resourceVersion: string, annotations?: Record<string, string>): RawWatchEvent {
  return watchEvent('BOOKMARK', { kind: 'Bookmark', metadata: { resourceVersion, ...(annotations ? { annotations } : {}) } });
}

/** An ERROR event carrying a Kubernetes Status (410 Expired by default). */
export function watchStatus(code = 410, reason = code === 410 ? 'Expired' : 'InternalError', message = `status ${code}`): RawWatchEvent {
  return watchEvent('ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });
}

/** The error a transport fails a request with on an HTTP status (use as the error of a `#` in a marble). */
export function httpFailure(
  status: number,
  phase: ErrorPhase = 'watch',
  details: { readonly retryAfterSeconds?: number; readonly reason?: ErrorReason } = {},
): InformerError {
  const reason = details.reason ?? reasonForStatus(status);
  return new InformerError(reason, `HTTP ${status}`, { status, phase, retryAfterSeconds: details.retryAfterSeconds });
}

/** The error a transport fails a request with when the connection breaks. */
export function networkFailure(phase: ErrorPhase = 'watch', message = 'ECONNRESET'): InformerError {
  return new InformerError('NetworkError', message, { phase });
}
