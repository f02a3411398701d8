import { Observable, type SchedulerLike } from 'rxjs';
import { defaultNow, monotonicScheduler } from '../util/monotonicNow.ts';
import { isFailure, type ErrorReason } from '../0-model/errors.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';
import { forward } from '../util/forward.ts';

/**
 * How an informer is doing, as seen from its own steps. Times are `scheduler.now()` milliseconds; with the default
 * scheduler a monotonic clock (`performance.timeOrigin + performance.now()`: epoch ms at the start, but a step of the
 * wall clock leaves it alone), so compare them with {@link readiness}'s default `now`, not `Date.now()`.
 */
export interface InformerHealth {
  /** The resource, e.g. `pods` or `deployments.apps`. */
  readonly name: string;
  /**
   * True once the server has accepted a watch (a frame came from it: an event, a bookmark; or it
   * ended without failing) until a failure (a list or watch error, a stall, a very short watch).
   * Not when a watch request goes out: during an outage every attempt is refused, and none
   * is watching. A watch resumed at its end or after the idle rule stays watching. False
   * while listing, and on a quiet type until the first bookmark or idle resume.
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
 * What health remembers between steps (the pure part of {@link informerHealth}: {@link healthStep} moves it on,
 * {@link healthSnapshot} reads it; the Observable only feeds steps and ticks).
 */
export interface HealthState {
  readonly watching: boolean;
  readonly since: number;
  readonly synced: boolean;
  readonly lastEventAt: number | undefined;
  readonly lastBookmarkAt: number | undefined;
  readonly lastHeardAt: number;
  readonly failures: number;
  readonly failingSince: number | undefined;
  readonly lastFailure: ErrorReason | undefined;
  readonly resourceVersion: string;
  /**
   * The watch opened last, and nothing failed since: `none` (listing, or the last attempt failed), `opening`
   * (its request is out, nothing came of it yet), `accepted` (a frame came: an event, a bookmark, a notice, a bad
   * object) or `resumed` (opened again after a watch that ended without failing).
   */
  readonly watch: 'none' | 'opening' | 'accepted' | 'resumed';
  /** No step seen yet: the next is the replayed state of a running informer. */
  readonly first: boolean;
}

export function initialHealth(now: number): HealthState {
  return {
    watching: false,
    since: now,
    synced: false,
    lastEventAt: undefined,
    lastBookmarkAt: undefined,
    lastHeardAt: now,
    failures: 0,
    failingSince: undefined,
    lastFailure: undefined,
    resourceVersion: '',
    watch: 'none',
    first: true,
  };
}

/** What {@link healthStep} reads of an informer's step. */
export type HealthInput = Pick<InformerState<unknown>, 'step' | 'synced' | 'resourceVersion' | 'errors'>;

const watchingAt = (h: HealthState, value: boolean, now: number): HealthState =>
  h.watching === value ? h : { ...h, watching: value, since: now };
const succeeded = (h: HealthState): HealthState => ({ ...h, failures: 0, failingSince: undefined });
/** The open watch proved itself (a frame came from it): watching from now. */
const accepted = (h: HealthState, now: number): HealthState =>
  h.watch === 'opening' || h.watch === 'resumed' ? watchingAt({ ...h, watch: 'accepted' }, true, now) : h;

/**
 * One step of health, pure: `watching` turns true only once the server has accepted a watch — a frame came from
 * it, or it ended without failing (what a refused request never does) — not when its request goes out, so a
 * server answering 503 to every attempt is not watching at any moment. A watch opened again after one that ended
 * without failing stays watching (the idle rule, the server's timeout). A failure ends a run of watching.
 */
export function healthStep(h: HealthState, state: HealthInput, now: number): HealthState {
  const base = { ...h, synced: state.synced, resourceVersion: state.resourceVersion, first: false };
  // The first state is a replay (docs/api.md, `state$`) and describes the past: a running informer whose last step was a watch, an event or a
  // bookmark is watching; its failures and times are not known.
  if (h.first) {
    const running =
      state.synced && (state.step === 'watch' || state.step === 'event' || state.step === 'bookmark' || state.step === 'resync');
    return running ? { ...base, watching: true, watch: 'accepted' } : base;
  }
  switch (state.step) {
    case 'watch':
      // The watch before it ended without failing: that is a success, and it had been accepted.
      if (h.watch !== 'none') return watchingAt(succeeded({ ...base, watch: 'resumed' }), true, now);
      return { ...base, watch: 'opening' };
    case 'event':
    case 'replace':
      return accepted(succeeded({ ...base, lastEventAt: now, lastHeardAt: now }), now);
    case 'bookmark':
      return accepted(succeeded({ ...base, lastBookmarkAt: now, lastHeardAt: now }), now);
    case 'error': {
      let next: HealthState = base;
      for (const error of state.errors) {
        if (isFailure(error)) {
          next = watchingAt(
            { ...next, failures: next.failures + 1, failingSince: next.failingSince ?? now, lastFailure: error.reason, watch: 'none' },
            false,
            now,
          );
        } else if (error.phase === 'watch') {
          // A notice or a bad object in the stream: the server answered the watch.
          next = accepted(next, now);
        }
      }
      return next;
    }
    case 'start':
    case 'resync':
      return base;
  }
}

/** What {@link informerHealth} emits for a state at `at`. */
export function healthSnapshot(name: string, h: HealthState, at: number): InformerHealth {
  return {
    name,
    watching: h.watching,
    since: h.since,
    synced: h.synced,
    lastEventAt: h.lastEventAt,
    lastBookmarkAt: h.lastBookmarkAt,
    eventAgeMs: h.lastEventAt === undefined ? undefined : at - h.lastEventAt,
    bookmarkAgeMs: h.lastBookmarkAt === undefined ? undefined : at - h.lastBookmarkAt,
    silentMs: at - h.lastHeardAt,
    consecutiveFailures: h.failures,
    failingSince: h.failingSince,
    lastFailure: h.lastFailure,
    resourceVersion: h.resourceVersion,
    at,
  };
}

/**
 * An informer's health: a snapshot at subscription, after every step of its
 * pipeline, and every `intervalMs` (default 10 s) so that the ages move on.
 * Subscribing subscribes `state$` (it starts the informer, and shares it).
 *
 * ```
 * state$:   s--r--w--b--e----x--w--x--w-----e---
 *           s: start, r: list, w: watch opened, b: bookmark, e: event, x: failure
 * health$:  h--h--h--h--h----h--h--h--h-----h---  (and one every intervalMs)
 *           watching:  f  f  t  t    f  f  f  f     t
 *           failures:  0  0  0  0    1  1  2  2     0
 * ```
 *
 * `watching` turns true at the first frame of a watch (or when it ends without failing), not when it is opened:
 * see {@link healthStep}.
 */
export function informerHealth<T>(
  name: string,
  state$: Observable<InformerState<T>>,
  options: { readonly scheduler?: SchedulerLike; readonly intervalMs?: number } = {},
): Observable<InformerHealth> {
  const scheduler = options.scheduler ?? monotonicScheduler;
  const intervalMs = options.intervalMs ?? HEALTH_INTERVAL_MS;
  return new Observable<InformerHealth>((subscriber) => {
    let health = initialHealth(scheduler.now());
    const emit = () => subscriber.next(healthSnapshot(name, health, scheduler.now()));
    const subscription = state$.subscribe(
      forward(subscriber, (state) => {
        health = healthStep(health, state, scheduler.now());
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

/**
 * Why an informer is stale at `now`, or undefined when it is not. `now` is on the health's clock: the scheduler's
 * (default: the default scheduler's monotonic clock; `Date.now()` is not it once the wall clock has stepped).
 */
export function isStale(health: InformerHealth, now: number = defaultNow(), options: StalenessOptions = {}): string | undefined {
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

/** Ready: every informer synced and none stale (`now` as {@link isStale}'s). The reasons when not. */
export function readiness(
  healths: readonly InformerHealth[],
  now: number = defaultNow(),
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
