import { Observable, asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { InformerError, asStatus, errorFromStatus, isExpired, isNotice } from '../0-model/errors.ts';
import type { ListPage, ListWatch, RawWatchEvent, WatchFrame } from '../1-transport/listWatch.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import { rawKey, rawResourceVersion, type Decoder } from './decode.ts';
import { NO_FAILURES, afterListFailure, afterWatch, type Decision, type RecoveryCounters, type WatchEnd } from './recovery.ts';
import type { SourceEvent } from './sourceEvent.ts';
import { isRecord } from '../util/isRecord.ts';

/** How the source lists, watches and recovers. Every default is client-go's. */
export interface ListAndWatchOptions<T> {
  /** Validates and transforms raw objects. */
  readonly decode: Decoder<T>;
  /** Items per list page (`limit`). Default 500. 0 disables paging. */
  readonly pageSize?: number;
  /**
   * Watches ask for `timeoutSeconds` in [min, 2·min). Default 300 (so [300, 600), as client-go).
   * From 1 s up, whole seconds are sent, as the API requires; below 1 s the value keeps its
   * milliseconds (only test servers such as the emulator accept fractions).
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
  /** A watch that delivers nothing for `timeoutSeconds` plus this margin is aborted and resumed. Default 30 s. */
  readonly stallMarginMs?: number;
  /** If set, a watch that brings no bookmark for this long is aborted and resumed. Default: off. */
  readonly bookmarkTimeoutMs?: number;
  /**
   * Streaming list (`sendInitialEvents=true`): the initial objects arrive on the
   * watch, and the replace happens at the `k8s.io/initial-events-end` bookmark.
   * Falls back to list + watch when the server does not support it. Default false.
   */
  readonly watchList?: boolean;
  readonly backoff?: BackoffOptions;
  /** Timing: delays, backoff and stall timers. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /** Random numbers in [0, 1) for jitter and watch timeouts. Default `Math.random`. */
  readonly random?: () => number;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
const VERY_SHORT_WATCH_MS = 1000;

/** A watch's `timeoutSeconds`, drawn from [min, 2·min): whole seconds from 1 s up, milliseconds below. */
function watchTimeoutSeconds(minSeconds: number, random: () => number): number {
  const seconds = minSeconds * (1 + random());
  return minSeconds >= 1 ? Math.floor(seconds) : Math.floor(seconds * 1000) / 1000;
}

/**
 * How soon a watch may end with no event before it counts as a failure: client-go's 1 s,
 * or half the timeout asked for when that is shorter, so that a short watch ended on
 * time by the server is not taken for one the server refused.
 */
function veryShortWatchMs(timeoutSeconds: number): number {
  return timeoutSeconds > 0 ? Math.min(VERY_SHORT_WATCH_MS, timeoutSeconds * 500) : VERY_SHORT_WATCH_MS;
}


function isInitialEventsEnd(object: unknown): boolean {
  if (!isRecord(object) || !isRecord(object.metadata)) return false;
  const annotations = object.metadata.annotations;
  return isRecord(annotations) && annotations[INITIAL_EVENTS_END] === 'true';
}

/**
 * The reflector: a cold Observable that lists, then watches from the list's
 * resourceVersion, forever, until unsubscribed.
 *
 * ```
 * list (pages) ──▶ replace ──▶ watch(rv) ──▶ added/modified/deleted/bookmark …
 *                     ▲            │ ended after progress, or silent for a minute: watch again at once from the last rv
 *                     │            │ failed without progress (network, 5xx, 429): backoff, watch again
 *                     └────────────┘ 410 Expired, too large rv, 3 broken resumes in a row, other errors: relist
 * ```
 *
 * It tracks the last resourceVersion fully processed (bookmarks included).
 * The rules that pick resume or relist, at once or after the backoff, are
 * one pure function, `afterWatch` in `recovery.ts`. Faults are emitted as
 * `error` events and never end the stream; waits follow client-go's backoff
 * (800 ms doubling to 30 s, jittered, reset after two quiet minutes or by
 * progress) and honour `Retry-After` (at most 5 minutes). At most one request
 * is in flight at any time, and unsubscribing aborts it and clears every timer.
 */
export function listAndWatch<T>(listWatch: ListWatch, options: ListAndWatchOptions<T>): Observable<SourceEvent<T>> {
  return new Observable<SourceEvent<T>>((subscriber) => {
    const scheduler = options.scheduler ?? asyncScheduler;
    const random = options.random ?? Math.random;
    const decode = options.decode;
    const pageSize = options.pageSize ?? 500;
    const minTimeout = options.minWatchTimeoutSeconds ?? 300;
    const stallMarginMs = options.stallMarginMs ?? 30_000;
    const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    const backoff = new Backoff(options.backoff, random);

    /** The last resourceVersion synced: from the list, then from every event and bookmark. */
    let lastRV = '';
    /** Set when a list at lastRV came back 410 (or too large): the next list asks for the latest state. */
    let lastRVUnavailable = false;
    /** The rv "0" list came back in pages (no watch cache): keep paging later lists too (client-go's paginatedResult). */
    let paginatedResult = false;
    /** Whether to try the streaming list; turned off once the server refuses its parameters. */
    let useWatchList = options.watchList ?? false;
    /** What the recovery rules remember between watches. */
    let counters: RecoveryCounters = NO_FAILURES;
    /** The one request or timer in flight. */
    let current: Subscription | undefined;
    let stallTimer: Subscription | undefined;

    const emit = (event: SourceEvent<T>) => subscriber.next(event);
    const report = (error: InformerError) => emit({ type: 'error', error });
    let generation = 0;
    /**
     * Starts the next step, ending the one before. If the step finishes
     * synchronously and has already started another, that one is kept.
     */
    const run = (start: () => Subscription) => {
      current?.unsubscribe();
      current = undefined;
      // The subscriber may have left during the emit that led here (take(1), first()): start nothing more.
      if (subscriber.closed) return;
      const mine = ++generation;
      const started = start();
      if (generation === mine) current = started;
      else started.unsubscribe();
    };
    const stopStallTimer = () => {
      stallTimer?.unsubscribe();
      stallTimer = undefined;
    };
    const after = (delayMs: number, then: () => void) => run(() => scheduler.schedule(then, Math.max(0, delayMs)));

    /** Carries out a decision of the recovery rules. */
    const proceed = (decision: Decision, unpaged = false) => {
      const then = () => {
        switch (decision.next) {
          case 'resume':
            return resume();
          case 'relist':
            return relist();
          case 'relistLatest':
            lastRVUnavailable = true;
            return unpaged ? list(true) : relist();
          case 'listInstead':
            // This time a plain list (client-go's fallback); later relists stream again unless the server refused.
            return list();
        }
      };
      if (!decision.backoff) return after(0, then);
      const wait = backoff.next(scheduler.now());
      const retryAfterMs = (decision.retryAfterSeconds ?? 0) * 1000;
      after(Math.max(wait, retryAfterMs), then);
    };

    const relistResourceVersion = () => (lastRVUnavailable ? '' : lastRV === '' ? '0' : lastRV);

    // ── list ────────────────────────────────────────────────────────────────
    /** Lists, in pages when due; `unpaged` after a continue token expired (the restart is one request). */
    function list(unpaged = false): void {
      const rv = relistResourceVersion();
      const paged = !unpaged && pageSize > 0 && (paginatedResult || rv === '' || rv === '0');
      const items: T[] = [];
      const rejectedKeys: string[] = [];
      let listRV = '';

      const fetchPage = (token: string | undefined) => {
        let page: ListPage | undefined;
        run(() =>
          listWatch
            .list({
              resourceVersion: token ? undefined : rv,
              limit: paged ? pageSize : undefined,
              continue: token,
            })
            .subscribe({
              next: (value) => (page = value),
              error: (error: unknown) => onListError(toInformerError(error, 'list'), token),
              complete: () => {
                if (!page) return onListError(new InformerError('Unknown', 'list completed without a page', { phase: 'list' }), token);
                if (page.notice) report(page.notice); // e.g. NotAcceptable: not a failure
                if (!token) listRV = page.resourceVersion;
                for (const raw of page.items) {
                  const decoded = decode(raw, 'list');
                  if (decoded instanceof InformerError) {
                    report(decoded);
                    // It exists on the server: never taken for missing (see docs/invalid-objects.md).
                    const key = rawKey(raw);
                    if (key !== undefined) rejectedKeys.push(key);
                  } else items.push(decoded);
                }
                if (page.continue) {
                  // Only a paged answer to rv "0" shows the watch cache is off; an rv "" list is paged by etcd anyway (client-go).
                  if (!token && rv === '0') paginatedResult = true;
                  fetchPage(page.continue);
                  return;
                }
                // A list that lands where the watches kept failing does not wipe that count: no relist storm.
                counters = { brokenResumes: 0, failuresAtSameRV: listRV === lastRV ? counters.failuresAtSameRV : 0 };
                lastRV = listRV;
                lastRVUnavailable = false;
                emit(rejectedKeys.length > 0 ? { type: 'replace', items, resourceVersion: listRV, rejectedKeys } : { type: 'replace', items, resourceVersion: listRV });
                resume(true);
              },
            }),
        );
      };

      const onListError = (error: InformerError, token: string | undefined) => {
        report(error);
        // A continue token whose snapshot was compacted: list again, whole and unpaged, at the latest state.
        proceed(afterListFailure(error, rv, token !== undefined), token !== undefined);
      };

      fetchPage(undefined);
    }

    // ── watch ───────────────────────────────────────────────────────────────
    /** A fresh full state: a streaming list when enabled, else list + watch. */
    function relist(): void {
      if (useWatchList) return watch(true);
      list();
    }

    /** Resume watching from lastRV (no initial events); `fromList`: lastRV is a list's, just received. */
    function resume(fromList = false): void {
      watch(false, fromList);
    }

    function watch(streaming: boolean, fromList = false): void {
      const started = scheduler.now();
      const timeoutSeconds = watchTimeoutSeconds(minTimeout, random);
      const stallMs = timeoutSeconds * 1000 + stallMarginMs;
      const bookmarkTimeoutMs = options.bookmarkTimeoutMs;
      let lastFrameAt = started;
      let lastBookmarkAt = started;
      let events = 0;
      let progress = false;
      let ended = false;
      // Streaming-list state: objects gathered by key until the initial-events-end bookmark.
      let initial: Map<string, T> | undefined = streaming ? new Map() : undefined;
      let initialRejected: Set<string> | undefined = streaming ? new Set() : undefined;

      /** Ends this watch (once) and hands how it ended to the recovery rules. */
      const finish = (end: WatchEnd['end'], error?: InformerError) => {
        if (ended) return;
        ended = true;
        stopStallTimer();
        if (error) report(error);
        const outcome = afterWatch({ end, progress, initial: initial !== undefined, fromList }, counters);
        if (outcome.resetBackoff) backoff.reset();
        counters = outcome.counters;
        const decision = outcome.decision;
        // The server refused the streaming-list parameters: plain list + watch from now on.
        if (decision.next === 'listInstead' && error) useWatchList = false;
        // A streaming list's watch expired: the next one asks for the latest state.
        if (streaming && error && isExpired(error)) lastRVUnavailable = true;
        proceed(decision);
      };
      const failWatch = (error: InformerError) => finish(error, error);

      // Deadlines are absolute times, and the next check is at least 1 ms away: with
      // fractional virtual times, `now - lastFrameAt` can fall one float step short of a
      // limit, and a check rescheduled "in 1e-12 ms" would run at the same instant forever.
      const idleDeadline = () => (idleTimeoutMs > 0 && initial === undefined ? lastFrameAt + idleTimeoutMs : Infinity);
      const stallDeadline = () => lastFrameAt + stallMs;
      const bookmarkDeadline = () => (bookmarkTimeoutMs === undefined ? Infinity : lastBookmarkAt + bookmarkTimeoutMs);
      const checkStall = () => {
        const now = scheduler.now();
        if (now >= idleDeadline()) return finish('idle');
        if (now >= stallDeadline()) {
          return failWatch(new InformerError('Timeout', `watch delivered nothing for ${now - lastFrameAt} ms; resuming`, { phase: 'watch' }));
        }
        if (now >= bookmarkDeadline()) {
          return failWatch(new InformerError('Timeout', `watch brought no bookmark for ${now - lastBookmarkAt} ms; resuming`, { phase: 'watch' }));
        }
        scheduleCheck(now);
      };
      const scheduleCheck = (now: number) => {
        stallTimer = scheduler.schedule(checkStall, Math.max(1, Math.min(idleDeadline(), stallDeadline(), bookmarkDeadline()) - now));
      };

      const onEvent = (event: RawWatchEvent) => {
        const rv = rawResourceVersion(event.object);
        switch (event.type) {
          case 'ADDED':
          case 'MODIFIED':
          case 'DELETED': {
            events++;
            progress = true;
            const decoded = decode(event.object, 'watch');
            if (rv !== undefined) lastRV = rv;
            if (decoded instanceof InformerError) {
              report(decoded);
              const key = rawKey(event.object);
              if (key === undefined) return;
              if (initial !== undefined) {
                initial.delete(key);
                if (event.type === 'DELETED') initialRejected!.delete(key);
                else initialRejected!.add(key);
                return;
              }
              // The cache keeps its last valid object; a deletion deletes all the same.
              if (event.type === 'DELETED') emit({ type: 'deletedKey', key, resourceVersion: rv ?? lastRV });
              return;
            }
            if (initial !== undefined) {
              const key = rawKey(event.object) ?? '';
              initialRejected!.delete(key);
              if (event.type === 'DELETED') initial.delete(key);
              else initial.set(key, decoded);
              return;
            }
            const type = event.type === 'ADDED' ? 'added' : event.type === 'MODIFIED' ? 'modified' : 'deleted';
            return emit({ type, object: decoded, resourceVersion: rv ?? lastRV });
          }
          case 'BOOKMARK': {
            progress = true;
            lastBookmarkAt = scheduler.now();
            if (rv !== undefined) lastRV = rv;
            if (initial !== undefined && isInitialEventsEnd(event.object)) {
              const items = [...initial.values()];
              const rejectedKeys = [...initialRejected!];
              initial = undefined;
              initialRejected = undefined;
              lastRVUnavailable = false;
              counters = NO_FAILURES;
              // The idle rule starts now that there is something to resume from.
              stopStallTimer();
              scheduleCheck(scheduler.now());
              return emit(rejectedKeys.length > 0 ? { type: 'replace', items, resourceVersion: lastRV, rejectedKeys } : { type: 'replace', items, resourceVersion: lastRV });
            }
            return emit({ type: 'bookmark', resourceVersion: lastRV });
          }
          case 'ERROR': {
            const status = asStatus(event.object);
            return failWatch(errorFromStatus(status?.code ?? 500, event.object, 'watch'));
          }
          default:
            if (rv !== undefined) lastRV = rv;
            return report(new InformerError('UnknownEventType', `unknown watch event type ${JSON.stringify(event.type)}; skipped`, { phase: 'watch' }));
        }
      };

      emit({ type: 'watch', resourceVersion: streaming && lastRVUnavailable ? '' : lastRV });
      run(() =>
        listWatch
          .watch(
            streaming
              ? {
                  resourceVersion: lastRVUnavailable ? '' : lastRV,
                  resourceVersionMatch: 'NotOlderThan',
                  sendInitialEvents: true,
                  allowWatchBookmarks: true,
                  timeoutSeconds,
                }
              : { resourceVersion: lastRV, allowWatchBookmarks: true, timeoutSeconds },
          )
          .subscribe({
            next: (frame: WatchFrame) => {
              if (ended) return;
              lastFrameAt = scheduler.now();
              // A line that cannot be decoded ends the watch: resuming from the last
              // resourceVersion fully processed makes the server send the lost change again.
              if (frame instanceof InformerError) return isNotice(frame) ? report(frame) : failWatch(frame.inPhase('watch'));
              onEvent(frame);
            },
            error: (error: unknown) => failWatch(toInformerError(error, 'watch')),
            complete: () => {
              if (ended) return;
              if (initial !== undefined) {
                report(new InformerError('WatchError', 'the server ended a streaming list before the initial-events-end bookmark; relisting with list + watch', { phase: 'watch' }));
                return finish('clean');
              }
              if (events === 0 && scheduler.now() - started < veryShortWatchMs(timeoutSeconds)) {
                return failWatch(new InformerError('VeryShortWatch', 'the watch ended at once with no event', { phase: 'watch' }));
              }
              finish('clean');
            },
          }),
      );
      if (!ended && !subscriber.closed) scheduleCheck(started);
    }

    relist();

    return () => {
      stopStallTimer();
      current?.unsubscribe();
      current = undefined;
    };
  });
}

function toInformerError(error: unknown, phase: 'list' | 'watch'): InformerError {
  if (error instanceof InformerError) return error.inPhase(phase);
  return new InformerError('Unknown', error instanceof Error ? error.message : String(error), { phase, cause: error });
}
