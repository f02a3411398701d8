import { Observable, Subscription, asyncScheduler, defer, type Observer, type SchedulerLike, type Subscriber } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import { optionOr } from '../util/scheduleAfter.ts';
import type { ListPage, ListWatch, WatchFrame } from '../1-transport/listWatch.ts';
import { backoffRule, type BackoffOptions } from './backoff.ts';
import { BACKOFF_NUMERIC_OPTIONS, checkReflectorOptions } from './checkReflectorOptions.ts';
import { checkOptionNames } from '../util/optionNames.ts';
import type { Decoder } from './decode.ts';
import {
  initialReflectorState,
  type ReflectorConfig,
  type ReflectorEffect,
  type ReflectorInput,
  type ReflectorState,
} from './reflectorState.ts';
import type { ListProgress, SourceEvent } from './sourceEvent.ts';
import { InformerError, describeThrown } from '../0-model/errors.ts';
import { frameInto, stepInto } from './step.ts';

/** How the source lists, watches and recovers. Every default is client-go's. */
export interface ListAndWatchOptions<T> {
  /** Validates and transforms raw objects. */
  readonly decode: Decoder<T>;
  /** Items per list page (`limit`). Default 500. 0 disables paging. */
  readonly pageSize?: number;
  /**
   * Watches ask for `timeoutSeconds` in [min, 2·min). Default 300 (so [300, 600), as client-go).
   * From 1 s up, whole seconds are sent, as the API requires; below 1 s the value keeps its
   * milliseconds (only test servers such as the emulator accept fractions). A finite number > 0:
   * 0 (client-go's unset value) would ask for no timeout, which the server replaces with its own
   * 30–60 min while the stall check expects the watch within `stallMarginMs`; Infinity is no number to send.
   */
  readonly minWatchTimeoutSeconds?: number;
  /**
   * A watch that delivers nothing (no event, no bookmark) for this long is ended and
   * resumed at once from the same resourceVersion: a cheap request, not a failure.
   * A real kube-apiserver sends a bookmark about every 60 s once the type changed after
   * the watch began, so a silent watch is either stalled or on a quiet type. Default
   * 60 s (a stall is noticed within a minute; a quiet type costs one resume a minute). 0 disables.
   */
  readonly idleTimeoutMs?: number;
  /**
   * The idle limit of a busy watch: one whose recent gap between events is short (at most
   * a third of this) is resumed after this much silence instead of `idleTimeoutMs`; a
   * slower one after three of its recent gaps, never later than `idleTimeoutMs`. During
   * churn a stalled watch is resumed within this; a quiet type still waits `idleTimeoutMs`.
   * Default 15 s. 0 disables (every watch waits `idleTimeoutMs`).
   */
  readonly busyIdleTimeoutMs?: number;
  /** A watch that delivers nothing for `timeoutSeconds` plus this margin is aborted and resumed. Default 30 s. */
  readonly stallMarginMs?: number;
  /**
   * If set, a watch that brings no bookmark for this long is aborted and resumed. Default: off; `0` or
   * `Infinity` is off too, as `idleTimeoutMs: 0` is (0 aborted every watch at its first check).
   */
  readonly bookmarkTimeoutMs?: number;
  /**
   * Streaming list (`sendInitialEvents=true`): the initial objects arrive on the
   * watch, and the replace happens at the `k8s.io/initial-events-end` bookmark.
   * Falls back to list + watch when the server does not support it. Default false.
   */
  readonly watchList?: boolean;
  /**
   * A list whose `continue` chain reaches this many pages without completing is dropped as
   * `ListTooLong` and listed again after the backoff. Default 10 000. 0: no limit.
   */
  readonly maxListPages?: number;
  /**
   * A list whose `continue` chain goes on past this many objects (or a streaming list past this many initial
   * events before its initial-events-end bookmark) is dropped as `ListTooLong` and listed again after the
   * backoff. Default 1 000 000. 0: no limit.
   */
  readonly maxListObjects?: number;
  /**
   * A list still going on this long (ms, the scheduler's clock) is dropped as `ListTooLong` and listed again after the
   * backoff: a paged list checked at each page (from the first page's arrival), a streaming list from its request.
   * Every page and event may come within its own wait, so nothing else bounds a whole list's time. Default 3 600 000
   * (one hour; docs/reliability.md says why). 0: no limit.
   */
  readonly maxListDurationMs?: number;
  /**
   * Called after every page of a list that goes on (not after the last one), with the pages and
   * objects received so far: progress for long lists. It may throw: that is reported as a `HandlerError`.
   */
  readonly onListProgress?: (progress: ListProgress) => void;
  /** The wait after a failure: client-go's by default (800 ms doubling to 30 s, jitter up to +100 %, reset after 2 quiet minutes). */
  readonly backoff?: BackoffOptions;
  /** Timing: delays, backoff and stall timers. Default `monotonicScheduler` (`asyncScheduler`'s timers, a monotonic clock: src/util/monotonicNow.ts). */
  readonly scheduler?: SchedulerLike;
  /** Random numbers in [0, 1) for jitter and watch timeouts. Default `Math.random`. */
  readonly random?: () => number;
}

const MIN_WATCH_TIMEOUT_SECONDS = 300;
/** Default `maxListPages`: 5 M objects at the default page size (docs/reliability.md says why). */
export const MAX_LIST_PAGES = 10_000;
/** Default `maxListObjects`: several times the most objects of one type a cluster within Kubernetes' scalability limits holds. */
export const MAX_LIST_OBJECTS = 1_000_000;
/**
 * Default `maxListDurationMs`: one hour. A list of {@link MAX_LIST_OBJECTS} at 500 a page is 2,000 pages: 1.8 s a page
 * on a loaded server (whose own SLO for one cluster-wide LIST is 30 s) fits; a chain served by etcd usually meets its
 * compaction (every 5 min by default) long before, and restarts on the 410.
 */
export const MAX_LIST_DURATION_MS = 3_600_000;

/** A watch's `timeoutSeconds`, drawn from [min, 2·min): whole seconds from 1 s up, milliseconds below. */
function watchTimeoutSeconds(minSeconds: number, random: () => number): number {
  const seconds = minSeconds * (1 + random());
  return minSeconds >= 1 ? Math.floor(seconds) : Math.floor(seconds * 1000) / 1000;
}

/** The settings `step` reads, defaults applied. */
export function reflectorConfig<T>(options: ListAndWatchOptions<T>): ReflectorConfig<T> {
  return {
    decode: options.decode,
    // NaN or a negative value is the default (never "off": a NaN deadline re-armed every millisecond); the informers'
    // entry points refuse one (checkInformerOptions), this is the fallback for a direct caller.
    pageSize: optionOr(options.pageSize, 500),
    idleTimeoutMs: optionOr(options.idleTimeoutMs, 60_000),
    busyIdleTimeoutMs: optionOr(options.busyIdleTimeoutMs, 15_000),
    stallMarginMs: optionOr(options.stallMarginMs, 30_000),
    // 0 is off, as for idleTimeoutMs (a deadline of 0 ms aborted each watch at once); Infinity is off by its deadline.
    bookmarkTimeoutMs: options.bookmarkTimeoutMs !== undefined && options.bookmarkTimeoutMs > 0 ? options.bookmarkTimeoutMs : undefined,
    maxListPages: optionOr(options.maxListPages, MAX_LIST_PAGES),
    maxListObjects: optionOr(options.maxListObjects, MAX_LIST_OBJECTS),
    backoff: backoffRule(options.backoff),
    maxListDurationMs: optionOr(options.maxListDurationMs, MAX_LIST_DURATION_MS),
  };
}

/** Every member of {@link ListAndWatchOptions}, from its type (a member added to it is an error here until listed). */
const LIST_AND_WATCH_OPTION_NAMES = Object.keys({
  decode: true,
  pageSize: true,
  minWatchTimeoutSeconds: true,
  idleTimeoutMs: true,
  busyIdleTimeoutMs: true,
  stallMarginMs: true,
  bookmarkTimeoutMs: true,
  watchList: true,
  maxListPages: true,
  maxListObjects: true,
  maxListDurationMs: true,
  onListProgress: true,
  backoff: true,
  scheduler: true,
  random: true,
} satisfies Record<keyof ListAndWatchOptions<unknown>, true>);
/** Every member of `BackoffOptions`: all numbers, so its numeric list is the whole list (as checkOptions.ts's). */
const BACKOFF_OPTION_NAMES: readonly string[] = BACKOFF_NUMERIC_OPTIONS;

/**
 * The reflector: a cold Observable that lists, then watches from the list's
 * resourceVersion, forever, until unsubscribed.
 *
 * ```
 * list (pages) ──▶ replace ──▶ watch(rv) ──▶ added/modified/deleted/bookmark …
 *                     ▲            │ ended or failed: watch again from the last rv, or relist
 *                     └────────────┘ (when, and after which backoff: the rules table of docs/semantics.md)
 * ```
 *
 * It tracks the last resourceVersion fully processed (bookmarks included).
 * All of its logic is one pure function, `step` (`step.ts`), over an explicit
 * state (`reflectorState.ts`); this Observable only carries out its effects
 * (requests, timers on the given scheduler) and feeds back what happens. The
 * rules that pick resume or relist are `afterWatch` and `afterListFailure` in `recovery.ts`, written once as the
 * table in docs/semantics.md that `spec/2-source/step.spec.ts` checks against `step`. Faults are emitted as
 * `error` events and never end the stream; waits follow the `backoff` option (its state the reflector's, its jitter
 * drawn by this shell as a watch's timeout is) and honour `Retry-After` (`MAX_RETRY_AFTER_SECONDS` at most); a wait after a failure no server answered also
 * ends as soon as the ListWatch's `reachable$` says the server answers again. At most one request
 * is in flight at any time, and unsubscribing aborts it and clears every timer.
 */
export function listAndWatch<T>(listWatch: ListWatch, options: ListAndWatchOptions<T>): Observable<SourceEvent<T>> {
  checkReflectorOptions('listAndWatch', options);
  // A misspelt name (`pagesize`) was ignored, unread: the list went unpaged at the defaults.
  checkOptionNames('listAndWatch', options, LIST_AND_WATCH_OPTION_NAMES);
  checkOptionNames('listAndWatch', options.backoff, BACKOFF_OPTION_NAMES, 'backoff.');
  return new Observable<SourceEvent<T>>((subscriber) => {
    const shell = new ReflectorShell(listWatch, options, subscriber);
    shell.feed({ type: 'start' });
    return () => shell.stop();
  });
}

/** Empties an array keeping its storage: `length = 0` would drop it, and the next push would allocate it again. */
function clear(array: unknown[]): void {
  while (array.length > 0) array.pop();
}

/**
 * Carries out what `step` asks, and feeds back what happens. Inputs that arrive while
 * an earlier one is being handled (a request that answers synchronously) wait in a
 * queue, so effects are carried out in the order `step` gave them.
 */
class ReflectorShell<T> {
  private readonly scheduler: SchedulerLike;
  private readonly random: () => number;
  private readonly config: ReflectorConfig<T>;
  private state: ReflectorState<T>;
  /** The one request or wait timer in flight. */
  private current: Subscription | undefined;
  /** The open watch's deadline check. */
  private check: Subscription | undefined;
  private readonly inbox: ReflectorInput[] = [];
  /** The effects of the step being carried out: one array for every step (see `stepInto`), emptied after each. */
  private readonly effects: ReflectorEffect<T>[] = [];
  private draining = false;
  private readonly listWatch: ListWatch;
  private readonly options: ListAndWatchOptions<T>;
  private readonly subscriber: Subscriber<SourceEvent<T>>;

  constructor(listWatch: ListWatch, options: ListAndWatchOptions<T>, subscriber: Subscriber<SourceEvent<T>>) {
    this.listWatch = listWatch;
    this.options = options;
    this.subscriber = subscriber;
    this.scheduler = options.scheduler ?? monotonicScheduler;
    this.random = options.random ?? Math.random;
    this.config = reflectorConfig(options);
    this.state = initialReflectorState<T>(options.watchList ?? false);
  }

  feed(input: ReflectorInput): void {
    if (this.draining) {
      this.inbox.push(input);
      return;
    }
    this.draining = true;
    try {
      if (!this.subscriber.closed) this.run(stepInto(this.config, this.state, input, this.scheduler.now(), this.effects));
      this.drain();
    } finally {
      this.settle();
    }
  }

  /** A watch frame: {@link feed} of `{ type: 'frame', id, frame }`, without the input object when nothing is queued. */
  private feedFrame(id: number, frame: WatchFrame): void {
    if (this.draining) return this.feed({ type: 'frame', id, frame });
    this.draining = true;
    try {
      if (!this.subscriber.closed) this.run(frameInto(this.config, this.state, id, frame, this.scheduler.now(), this.effects));
      this.drain();
    } finally {
      this.settle();
    }
  }

  /** After the inputs, or a throw: nothing queued, no effect left for the next step. */
  private settle(): void {
    this.draining = false;
    this.inbox.length = 0;
    clear(this.effects);
  }

  /** The inputs that came while one was handled (a request that answers synchronously), in order. */
  private drain(): void {
    const inbox = this.inbox;
    // An index, not shift(): a source that answers synchronously can queue a whole watch's frames.
    for (let i = 0; i < inbox.length && !this.subscriber.closed; i++) {
      this.run(stepInto(this.config, this.state, inbox[i]!, this.scheduler.now(), this.effects));
    }
  }

  /** Takes the state a step gave and carries out its effects (in `this.effects`), then empties them. */
  private run(state: ReflectorState<T>): void {
    this.state = state;
    const effects = this.effects;
    try {
      for (let i = 0; i < effects.length; i++) {
        // The subscriber may have left during an emit (take(1), first()): start nothing more.
        if (this.subscriber.closed) break;
        this.perform(effects[i]!);
      }
    } finally {
      clear(effects);
    }
  }

  stop(): void {
    this.check?.unsubscribe();
    this.check = undefined;
    this.current?.unsubscribe();
    this.current = undefined;
    this.inbox.length = 0;
  }

  private perform(effect: ReflectorEffect<T>): void {
    switch (effect.type) {
      case 'emit':
        return this.subscriber.next(effect.event);
      // A ListWatch's list() or watch() that throws (a plain-JavaScript one, a fake) fails the request, as an Observable
      // that errors does: reported and retried after the backoff. Thrown out of here, it ended state$ for good (audit39).
      case 'list':
        return this.start(() => defer(() => this.listWatch.list(effect.options)).subscribe(this.listObserver(effect.id)));
      case 'pickTimeout':
        return this.feed({ type: 'timeoutPicked', id: effect.id, timeoutSeconds: watchTimeoutSeconds(this.minTimeout(), this.random) });
      case 'watch':
        return this.start(() =>
          defer(() => this.listWatch.watch(effect.options)).subscribe({
            next: (frame) => this.feedFrame(effect.id, frame),
            error: (error: unknown) => this.feed({ type: 'watchFailed', id: effect.id, error }),
            complete: () => this.feed({ type: 'watchEnded', id: effect.id }),
          }),
        );
      case 'armCheck':
        this.check?.unsubscribe();
        this.check = this.scheduler.schedule(() => {
          this.check = undefined;
          this.feed({ type: 'check', id: effect.id });
        }, effect.delayMs);
        return;
      case 'disarmCheck':
        this.check?.unsubscribe();
        this.check = undefined;
        return;
      case 'progress':
        return this.tellProgress(effect.progress);
      case 'drawBackoff':
        return this.feed({ type: 'backoffDrawn', id: effect.id, random: this.random() });
      case 'wait': {
        const { delayMs } = effect;
        const reachable$ = effect.untilAnswered ? this.listWatch.reachable$ : undefined;
        return this.start(() => {
          const timer = this.scheduler.schedule(() => this.feed({ type: 'timer', id: effect.id }), Math.max(0, delayMs));
          if (!reachable$) return timer;
          // The first of the two ends the wait; the next request or timer unsubscribes both.
          const both = new Subscription();
          both.add(timer);
          both.add(reachable$.subscribe(() => this.feed({ type: 'answered', id: effect.id })));
          return both;
        });
      }
    }
  }

  private tellProgress(progress: ListProgress): void {
    try {
      this.options.onListProgress?.(progress);
    } catch (error) {
      const message = `onListProgress threw: ${describeThrown(error)}`;
      this.subscriber.next({ type: 'error', error: new InformerError('HandlerError', message, { phase: 'handler', cause: error }) });
    }
  }

  private minTimeout(): number {
    const seconds = this.options.minWatchTimeoutSeconds;
    // 0 and Infinity are refused where a caller enters (checkInformerOptions, listAndWatch's checkReflectorOptions).
    return seconds !== undefined && seconds > 0 && seconds < Infinity ? seconds : MIN_WATCH_TIMEOUT_SECONDS;
  }

  private listObserver(id: number): Partial<Observer<ListPage>> {
    let page: ListPage | undefined;
    return {
      next: (value) => (page = value),
      error: (error: unknown) => this.feed({ type: 'listFailed', id, error }),
      complete: () => this.feed({ type: 'listed', id, page }),
    };
  }

  /** Starts the next request or timer, ending the one before. */
  private start(begin: () => Subscription): void {
    this.current?.unsubscribe();
    this.current = undefined;
    if (this.subscriber.closed) return;
    this.current = begin();
  }
}
