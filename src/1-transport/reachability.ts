import {
  Observable,
  asyncScheduler,
  catchError,
  concatMap,
  defer,
  filter,
  map,
  of,
  repeat,
  share,
  take,
  timer,
  type SchedulerLike,
} from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import { BACKOFF_START, backoffStep, type BackoffState } from '../util/backoff.ts';

// One probe per server: while some informer waits after a failure no server answered (a refused connection, a
// reset, DNS, a connect timeout: a restarting API server), one cheap request (`GET /version`) asks, backed off and
// jittered, whether the server answers again; the first answer ends every such wait at once. docs/reliability.md,
// "Back after a control-plane restart", says why and what it costs; docs/transport.md, "Reachability", the details.

/** How the probe of a server that does not answer is paced (see docs/transport.md, "Reachability"). */
export interface ReachabilityOptions {
  /** Wait before the first probe, before jitter. Default 500 ms. */
  readonly initialMs?: number;
  /** Longest wait between probes, before jitter. Default 2 s (so at most 4 s with the jitter). */
  readonly maxMs?: number;
  /** Each wait is `d + random() · jitter · d`, as the reflector's backoff. Default 1. */
  readonly jitter?: number;
  /** The waits start over from `initialMs` after this long without a probe. Default 2 min (client-go's backoff reset). */
  readonly resetAfterMs?: number;
  /** A probe with no response headers within this long counts as unanswered. Default 5 s. */
  readonly probeTimeoutMs?: number;
  /** Runs the waits, and its `now()` is their clock. Default `monotonicScheduler` (`asyncScheduler`'s timers, a monotonic clock: src/util/monotonicNow.ts). */
  readonly scheduler?: SchedulerLike;
  /** Random numbers in [0, 1) for the jitter. Default `Math.random`. */
  readonly random?: () => number;
}

export const DEFAULT_PROBE_INITIAL_MS = 500;
export const DEFAULT_PROBE_MAX_MS = 2_000;
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;
const DEFAULT_PROBE_RESET_AFTER_MS = 120_000;

/** What the waits between probes remember: the state of the backoff rule they share with the reflector. */
export type ProbePace = BackoffState;

export const NO_PROBES: ProbePace = BACKOFF_START;

/**
 * The wait before the next probe, sent at `now`, and the pace after it: `initialMs` doubling to `maxMs`, jittered
 * upwards, at most Node's timer limit; from `initialMs` again once `resetAfterMs` passed without a probe (measured
 * from the last probe sent, not from the start of its wait). An answer does not start the waits over: a server that
 * answers the probe while the informers' own requests still go unanswered is probed (and so retried) at most once
 * per `maxMs`, not in a tight loop. Pure: `now` and `random` are given. The rule is the reflector's
 * (`backoffStep`, src/util/backoff.ts) with the probe's defaults.
 */
export function nextProbe(
  pace: ProbePace,
  now: number,
  options: ReachabilityOptions,
  random: () => number,
): { waitMs: number; pace: ProbePace } {
  const rule = {
    initialMs: options.initialMs ?? DEFAULT_PROBE_INITIAL_MS,
    maxMs: options.maxMs ?? DEFAULT_PROBE_MAX_MS,
    factor: 2,
    jitter: options.jitter ?? 1,
    resetAfterMs: options.resetAfterMs ?? DEFAULT_PROBE_RESET_AFTER_MS,
    quietFrom: 'retry',
  } as const;
  const { waitMs, state } = backoffStep(pace, now, rule, random);
  return { waitMs, pace: state };
}

/**
 * Whether a probe's outcome means the server answered: a response with headers, whatever its status (a 403 or
 * a 503 is an answer: the informers' own requests then meet it, and back off as client-go does); not a request
 * that failed before any response (refused, reset, a timeout) or could not be sent (credentials).
 */
export function isAnswer(outcome: unknown): boolean {
  return !(outcome instanceof Error) || (outcome instanceof InformerError && outcome.status !== undefined);
}

/**
 * The shared signal of one server: subscribing starts the probes (or joins those under way); the first probe
 * answered emits once and completes for every subscriber; unsubscribing the last one stops them (and aborts a
 * probe in flight). `probe` is one request: it emits or errors (the probe's outcome for {@link isAnswer}).
 */
export function probeSignal(probe: Observable<unknown>, options: ReachabilityOptions = {}): Observable<void> {
  const scheduler = options.scheduler ?? monotonicScheduler;
  const random = options.random ?? Math.random;
  let pace = NO_PROBES;
  const once = defer(() => {
    const next = nextProbe(pace, scheduler.now(), options, random);
    pace = next.pace;
    return timer(next.waitMs, scheduler).pipe(
      concatMap(() =>
        probe.pipe(
          take(1),
          catchError((error: unknown) => of(error)),
        ),
      ),
      map(isAnswer),
    );
  });
  return once.pipe(
    repeat(),
    filter((answered) => answered),
    take(1),
    map((): void => undefined),
    share(),
  );
}

/** Per KubeConfig, per server and user: its signal. */
const signals = new WeakMap<KubeConfig, Map<string, Observable<void>>>();

/**
 * The signal of the server `kc` talks to now (its current cluster and user), made on first use with `probe` and
 * `options` and shared by every ListWatch of that KubeConfig and server; undefined when `kc` has no current cluster.
 */
export function reachable(kc: KubeConfig, probe: Observable<unknown>, options: ReachabilityOptions = {}): Observable<void> | undefined {
  const cluster = kc.getCurrentCluster();
  if (!cluster) return undefined;
  let byServer = signals.get(kc);
  if (!byServer) signals.set(kc, (byServer = new Map()));
  const key = JSON.stringify([cluster.name, kc.getCurrentUser()?.name ?? '', cluster.server]);
  let signal = byServer.get(key);
  if (!signal) byServer.set(key, (signal = probeSignal(probe, options)));
  return signal;
}
