/**
 * When a dynamic factory discovers again by itself: the rule, as a pure step over the backoff's state.
 *
 * A discovery that failed (`/api` or `/apis`) or came back with `failures` (a group version it could not read) is
 * not the last word: nothing else may ever ask again (no CRD changes, no informer meets a 404), and the resources
 * of a group version that 503'd once would never start. client-go refetches a group version cached with a
 * transient error on its next use (memcache.go) and its garbage collector re-discovers every 30 s.
 *
 * - a discovery that read everything: no retry, and the backoff starts over;
 * - one that failed, or has `failures`: another discovery after the next backoff step (the reflector's rule,
 *   `REFLECTOR_BACKOFF` in src/2-source/backoff.ts: 800 ms doubling to 30 s, jitter 1, from the start again after
 *   2 min without a fault), and at least the longest `Retry-After` of its faults (at most 300 s).
 *
 * Any fault counts, a lasting one too (a 403 on an aggregated API): past the first minutes that is one discovery
 * every 30–60 s, as client-go's garbage collector does. A discovery started meanwhile (a CRD change, a 404) takes
 * the retry's place; the backoff goes on from where it was.
 */
import type { InformerError } from '../0-model/errors.ts';
import { clampRetryAfter } from '../0-model/retryAfter.ts';
import { REFLECTOR_BACKOFF } from '../2-source/backoff.ts';
import { BACKOFF_START, backoffStep, type BackoffRule, type BackoffState } from '../util/backoff.ts';

/** What the step decides: the backoff after it, and when to discover again (undefined: not by itself). */
export interface DiscoveryRetry {
  readonly state: BackoffState;
  readonly retryInMs: number | undefined;
}

/**
 * The retry after a discovery that ended at `now` with `faults` (its error, or its `failures`' errors; none: it
 * read everything). Pure: `now` and `random` are given.
 */
export function discoveryRetryStep(
  state: BackoffState,
  faults: readonly InformerError[],
  now: number,
  random: () => number,
  rule: BackoffRule = REFLECTOR_BACKOFF,
): DiscoveryRetry {
  if (faults.length === 0) return { state: BACKOFF_START, retryInMs: undefined };
  const step = backoffStep(state, now, rule, random);
  const retryAfterMs = Math.max(0, ...faults.map((f) => clampRetryAfter(f.retryAfterSeconds ?? 0) * 1000));
  return { state: step.state, retryInMs: Math.max(step.waitMs, retryAfterMs) };
}
