/**
 * The one rule of exponential backoff with jitter and a reset after a quiet period, as client-go's
 * `wait.Backoff.Step` driven by `exponentialBackoffManagerImpl` (k8s.io/apimachinery/pkg/util/wait): a pure step
 * over a small state, used by the reflector's `Backoff` (2-source/backoff.ts) and the reachability probe's pace
 * (1-transport/reachability.ts), each with its own defaults.
 *
 * ```
 * step n (no reset):  base_0 = initialMs, base_n = min(base_{n-1} · factor, maxMs)   (factor ≤ 0: base_n = base_{n-1})
 * the wait:           min(base_n + random() · jitter · base_n, MAX_TIMER_DELAY_MS)
 * reset:              state.lastAt undefined, or now − state.lastAt > resetAfterMs  →  from base_0 again
 * lastAt after:       now ('failure', client-go) or now + the wait ('retry')
 * ```
 */
import { capDelay } from './scheduleAfter.ts';

/** The rule's parameters, every one given (each caller has its own defaults). */
export interface BackoffRule {
  /** The first base wait. */
  readonly initialMs: number;
  /** The largest base wait (a larger `initialMs` is still the first one, as client-go's). */
  readonly maxMs: number;
  /** Growth per step; 0 or less: no growth (client-go's `Factor: 0`). */
  readonly factor: number;
  /** Each wait is `d + random() · jitter · d`, so in [d, (1 + jitter) d). */
  readonly jitter: number;
  /** Start again from `initialMs` once more than this long has passed since `lastAt`. */
  readonly resetAfterMs: number;
  /**
   * What the quiet period is measured from: `'failure'`, the step before (client-go's reflector: the last
   * backoff's start), or `'retry'`, the end of its wait (the reachability probe: the last probe sent, so that a
   * wait longer than `resetAfterMs` does not start the waits over each time).
   */
  readonly quietFrom: 'failure' | 'retry';
}

/** What a backoff remembers between two steps. */
export interface BackoffState {
  /** The base of the next wait, before jitter; undefined: `initialMs`. */
  readonly currentMs: number | undefined;
  /** When the quiet period began (see {@link BackoffRule.quietFrom}); undefined: never. */
  readonly lastAt: number | undefined;
}

/** A backoff that has not waited yet, or starts over (client-go's reset on progress). */
export const BACKOFF_START: BackoffState = { currentMs: undefined, lastAt: undefined };

/**
 * The wait after a failure at `now`, and the state after it. Pure: `now` and `random` (numbers in [0, 1)) are
 * given. Every wait is at most Node's timer limit ({@link capDelay}: a longer timer would fire after 1 ms, a retry
 * each millisecond), and at least 0 (NaN options: 0).
 */
export function backoffStep(
  state: BackoffState,
  now: number,
  rule: BackoffRule,
  random: () => number,
): { readonly waitMs: number; readonly state: BackoffState } {
  const quiet = state.lastAt === undefined || now - state.lastAt > rule.resetAfterMs;
  const base = quiet || state.currentMs === undefined ? rule.initialMs : state.currentMs;
  const nextMs = rule.factor > 0 ? Math.min(base * rule.factor, rule.maxMs) : base;
  const jitter = random() * rule.jitter * base; // NaN when base is Infinity and random() 0: no jitter, not no wait
  const waitMs = capDelay(base + (Number.isNaN(jitter) ? 0 : jitter));
  return { waitMs, state: { currentMs: nextMs, lastAt: rule.quietFrom === 'failure' ? now : now + waitMs } };
}
