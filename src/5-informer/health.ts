import { Observable, asyncScheduler, type SchedulerLike } from 'rxjs';
import { isFailure, type ErrorReason } from '../0-model/errors.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';
import { forward } from '../util/forward.ts';

/**
 * How an informer is doing, as seen from its own steps. Times are
 * `scheduler.now()` milliseconds (epoch ms with the default scheduler).
 */
export interface InformerHealth {
  /** The resource, e.g. `pods` or `deployments.apps`. */
  readonly name: string;
  /**
   * True from the moment a watch is opened until a failure (a list or watch error, a
   * stall, a very short watch). A watch resumed at its end or after the idle rule stays
   * watching. False while listing.
   */
  readonly watching: boolean;
  /** When `watching` took its current value (or when health began to be observed). */
  readonly since: number;
  /** The initial list has been delivered. */
  readonly synced: boolean;
  /** The last list or watch event (added/modified/deleted) received; undefined: none yet. */
  readonly lastEventAt: number | undefined;
  /** The last bookmark received; undefined: none yet. */
  readonly lastBookmarkAt: number | undefined;
  /** `at − lastEventAt`; undefined: no event yet. */
  readonly eventAgeMs: number | undefined;
  /** `at − lastBookmarkAt`; undefined: no bookmark yet. */
  readonly bookmarkAgeMs: number | undefined;
  /**
   * How long the server has said nothing: since the last list, event or bookmark (or since
   * observing began). A quiet type on a real server can be silent for minutes while healthy.
   */
  readonly silentMs: number;
  /**
   * Failures since the last success: a list, event or bookmark, or a watch that ended
   * without failing (its end, or the idle rule, resumed it). 0 when all is well.
   */
  readonly consecutiveFailures: number;
  /** When the current run of failures began; undefined when the last attempt succeeded. */
  readonly failingSince: number | undefined;
  /** The reason of the last failure, if any since observing began. */
  readonly lastFailure: ErrorReason | undefined;
  /** The last resourceVersion seen ('' before the first list). */
  readonly resourceVersion: string;
  /** When this snapshot was taken. */
  readonly at: number;
}

/** Whether an error ended (or failed to open) a list or watch: the one classification, in 0-model/errors.ts. */
export { isFailure } from '../0-model/errors.ts';

/** How often {@link informerHealth} re-emits to refresh the ages (ms), by default. */
export const HEALTH_INTERVAL_MS = 10_000;

/**
 * An informer's health: a snapshot at subscription, after every step of its
 * pipeline, and every `intervalMs` (default 10 s) so that the ages move on.
 * Subscribing subscribes `state$` (it starts the informer, and shares it).
 *
 * ```
 * state$:   s--r--w-----e----x-----w--b--
 *           s: start, r: list, w: watch opened, e: event, x: failure, b: bookmark
 * health$:  h--h--h-----h----h-----h--h--  (and one every intervalMs)
 *           watching:  f  f  t     t    f     t  t
 *           failures:  0  0  0     0    1     1  0
 * ```
 */
export function informerHealth<T>(
  name: string,
  state$: Observable<InformerState<T>>,
  options: { readonly scheduler?: SchedulerLike; readonly intervalMs?: number } = {},
): Observable<InformerHealth> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const intervalMs = options.intervalMs ?? HEALTH_INTERVAL_MS;
  return new Observable<InformerHealth>((subscriber) => {
    const start = scheduler.now();
    let watching = false;
    let since = start;
    let synced = false;
    let lastEventAt: number | undefined;
    let lastBookmarkAt: number | undefined;
    let lastHeardAt = start;
    let failures = 0;
    let failingSince: number | undefined;
    /** A watch was opened and nothing failed since: if another opens, this one ended well. */
    let openWithoutFailure = false;
    let lastFailure: ErrorReason | undefined;
    let resourceVersion = '';
    let first = true;

    const emit = () => {
      const at = scheduler.now();
      subscriber.next({
        name,
        watching,
        since,
        synced,
        lastEventAt,
        lastBookmarkAt,
        eventAgeMs: lastEventAt === undefined ? undefined : at - lastEventAt,
        bookmarkAgeMs: lastBookmarkAt === undefined ? undefined : at - lastBookmarkAt,
        silentMs: at - lastHeardAt,
        consecutiveFailures: failures,
        failingSince,
        lastFailure,
        resourceVersion,
        at,
      });
    };
    const setWatching = (value: boolean, now: number) => {
      if (watching === value) return;
      watching = value;
      since = now;
    };
    const succeeded = () => {
      failures = 0;
      failingSince = undefined;
    };
    const heard = (now: number) => {
      lastHeardAt = now;
      succeeded();
    };

    const subscription = state$.subscribe(
      forward(subscriber, (state) => {
        const now = scheduler.now();
        synced = state.synced;
        resourceVersion = state.resourceVersion;
        // The replayed state describes the past: a running informer whose last step was a
        // watch, an event or a bookmark is watching; its failures and times are not known.
        if (first) {
          first = false;
          if (state.synced && (state.step === 'watch' || state.step === 'event' || state.step === 'bookmark' || state.step === 'resync')) {
            watching = true;
            openWithoutFailure = true;
          }
          return emit();
        }
        switch (state.step) {
          case 'watch':
            if (openWithoutFailure) succeeded();
            openWithoutFailure = true;
            setWatching(true, now);
            break;
          case 'event':
          case 'replace':
            lastEventAt = now;
            heard(now);
            break;
          case 'bookmark':
            lastBookmarkAt = now;
            heard(now);
            break;
          case 'error':
            for (const error of state.errors) {
              if (!isFailure(error)) continue;
              failures++;
              failingSince ??= now;
              openWithoutFailure = false;
              lastFailure = error.reason;
              setWatching(false, now);
            }
            break;
          case 'start':
          case 'resync':
            break;
        }
        emit();
      }),
    );
    if (intervalMs > 0 && !subscriber.closed) {
      subscription.add(
        scheduler.schedule(function tick() {
          emit();
          this.schedule(undefined, intervalMs);
        }, intervalMs),
      );
    }
    return subscription;
  });
}

/** How {@link isStale} and {@link readiness} judge health. */
export interface StalenessOptions {
  /**
   * An informer whose lists and watches have kept failing for longer than this (ms), with no
   * success between (no list, event or bookmark, no watch that ended without failing), is
   * stale. Default 120 000: twice the 60 s idle rule. A black-holed server is a run of
   * failures (each request times out after 30 s without response headers), and a blip or an
   * API-server restart is ridden out by the backoff (at most 30 s a try) well within it.
   */
  readonly staleAfterMs?: number;
  /**
   * An informer the server has told nothing (no event, no bookmark) for longer than this
   * (ms) is stale too. Default: off, because a healthy type nothing changes in can be silent
   * for minutes; set it for servers that send bookmarks regularly.
   */
  readonly maxSilenceMs?: number;
}

/** The default of {@link StalenessOptions.staleAfterMs}: twice the 60 s idle rule. */
export const DEFAULT_STALE_AFTER_MS = 120_000;

/** Why an informer is stale at `now`, or undefined when it is not. */
export function isStale(health: InformerHealth, now: number, options: StalenessOptions = {}): string | undefined {
  const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
  if (health.failingSince !== undefined && now - health.failingSince > staleAfterMs) {
    const run = `${health.consecutiveFailures} ${health.consecutiveFailures === 1 ? 'failure' : 'failures'} in a row`;
    const last = health.lastFailure ? `, last ${health.lastFailure}` : '';
    return `${health.name}: failing for ${Math.round((now - health.failingSince) / 1000)} s (${run}${last})`;
  }
  const silent = health.silentMs + (now - health.at);
  if (options.maxSilenceMs !== undefined && silent > options.maxSilenceMs)
    return `${health.name}: nothing from the server for ${Math.round(silent / 1000)} s`;
  return undefined;
}

/** Ready: every informer synced and none stale. The reasons when not. */
export function readiness(
  healths: readonly InformerHealth[],
  now: number,
  options: StalenessOptions = {},
): { readonly ready: boolean; readonly reasons: readonly string[] } {
  const reasons: string[] = [];
  for (const h of healths) {
    if (!h.synced) reasons.push(`${h.name}: not synced`);
    const stale = isStale(h, now, options);
    if (stale) reasons.push(stale);
  }
  return { ready: reasons.length === 0, reasons };
}
