import { checkBackoffOptions } from './checkReflectorOptions.ts';
import { BACKOFF_START, backoffStep, type BackoffRule, type BackoffState } from '../util/backoff.ts';

/**
 * client-go's reflector backoff (`NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`): the defaults of
 * {@link BackoffOptions}, and the rule of every retry that is the reflector's (a dynamic factory's rediscovery too).
 * The one home of these numbers.
 */
export const REFLECTOR_BACKOFF: BackoffRule = {
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  jitter: 1,
  resetAfterMs: 120_000,
  quietFrom: 'failure',
};

/** The shape of a reconnect backoff (defaults are client-go's reflector backoff, {@link REFLECTOR_BACKOFF}). */
export interface BackoffOptions {
  /** First wait before jitter. Default 800 ms. Must be > 0: a wait of 0 never grows (0 × factor), a retry loop. */
  readonly initialMs?: number;
  /** Largest wait before jitter. Default 30 s. Must be > 0: 0 makes every wait after the first 0, a retry loop. */
  readonly maxMs?: number;
  /** Growth per failure. Default 2. */
  readonly factor?: number;
  /** Each wait is `d + random() * jitter * d`, so in [d, (1 + jitter) d). Default 1. */
  readonly jitter?: number;
  /** Start again from `initialMs` once this long has passed since the last backoff. Default 2 min. */
  readonly resetAfterMs?: number;
}

/**
 * Exponential backoff with jitter and a reset after a quiet period, as
 * client-go's `NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`:
 * waits fall in [0.8, 1.6), [1.6, 3.2), … up to [30, 60) seconds, and a
 * failure more than two minutes after the previous one starts over. Every
 * wait is at most Node's timer limit (about 24.8 days).
 *
 * A thin shell over the pure `backoffStep` (src/util/backoff.ts), the rule it
 * shares with the reachability probe; the caller passes the current time, so
 * it runs in virtual time.
 */
export class Backoff {
  private readonly rule: BackoffRule;
  private readonly random: () => number;
  private state: BackoffState = BACKOFF_START;

  constructor(options: BackoffOptions = {}, random: () => number = Math.random) {
    // As an informer's `backoff`: 0 or NaN is refused, not taken for the default in silence.
    checkBackoffOptions('Backoff', options);
    this.rule = backoffRule(options);
    this.random = random;
  }

  /** Starts over from `initialMs` (the source made progress since the last failure). */
  reset(): void {
    this.state = BACKOFF_START;
  }

  /** How long to wait after a failure that happens at `now`. */
  next(now: number): number {
    const { waitMs, state } = backoffStep(this.state, now, this.rule, this.random);
    this.state = state;
    return waitMs;
  }
}

/** The rule of a reflector's backoff: `options` over {@link REFLECTOR_BACKOFF} (the reflector's `step` and `Backoff`). */
export function backoffRule(options: BackoffOptions = {}): BackoffRule {
  return {
    initialMs: positiveOr(options.initialMs, REFLECTOR_BACKOFF.initialMs),
    maxMs: positiveOr(options.maxMs, REFLECTOR_BACKOFF.maxMs),
    factor: options.factor ?? REFLECTOR_BACKOFF.factor,
    jitter: options.jitter ?? REFLECTOR_BACKOFF.jitter,
    resetAfterMs: options.resetAfterMs ?? REFLECTOR_BACKOFF.resetAfterMs,
    quietFrom: REFLECTOR_BACKOFF.quietFrom,
  };
}

/** `value` when it is a number > 0 (Infinity too), else `fallback` (undefined, 0, NaN, negative). */
function positiveOr(value: number | undefined, fallback: number): number {
  return value !== undefined && value > 0 ? value : fallback;
}
