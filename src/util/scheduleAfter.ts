/**
 * `scheduleAfter(scheduler, work, delayMs)`: a timer of any length. Node's timers take at most 2^31−1 ms (about
 * 24.8 days); a longer delay fires after 1 ms instead, with a `TimeoutOverflowWarning`.
 */
import { Subscription, type SchedulerLike } from 'rxjs';

/** The longest delay handed to a scheduler at once: Node's timers overflow past 2^31−1 ms. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * Runs `work` once, `delayMs` from now on `scheduler`: a delay longer than {@link MAX_TIMER_DELAY_MS} is a chain of
 * timers no longer than it, one at a time. A delay ≤ 0 (or NaN) is 0; `Infinity` never runs. Unsubscribing cancels it.
 *
 * ```
 * delayMs 30 days:  timer 2^31−1 ms → timer 2^31−1 ms → timer the rest (about 10.4 days) → work
 * ```
 */
export function scheduleAfter(scheduler: SchedulerLike, work: () => void, delayMs: number): Subscription {
  let left = delayMs > 0 ? delayMs : 0;
  let current: Subscription | undefined;
  const arm = (): void => {
    const part = Math.min(left, MAX_TIMER_DELAY_MS);
    left -= part;
    current = scheduler.schedule(() => (left > 0 ? arm() : work()), part);
  };
  arm();
  return new Subscription(() => current?.unsubscribe());
}

/**
 * A duration as a timer length Node can hold: at most {@link MAX_TIMER_DELAY_MS} (a longer one would fire after
 * 1 ms, again and again), at least 0 (NaN too). The one cap every user-supplied duration goes through.
 */
export function capDelay(ms: number): number {
  return ms > 0 ? Math.min(ms, MAX_TIMER_DELAY_MS) : 0;
}

/**
 * A timeout option (`value`, else `fallback`) as a timer length ({@link capDelay}), or undefined for none (0 or
 * Infinity, as documented). NaN or a negative value is the fallback, never "none": the entry points refuse it
 * (`checkInformerOptions`), and one that slips past (`Number(process.env.X)` given straight to a transport) must not
 * remove the only bound of a request.
 */
export function timerMs(value: number | undefined, fallback: number): number | undefined {
  const ms = value !== undefined && value >= 0 ? value : fallback;
  if (!(ms > 0) || ms === Infinity) return undefined;
  return capDelay(ms);
}

/** A duration or count option: `value` when it is a number ≥ 0 (Infinity too), else `fallback` (undefined, NaN, negative). */
export function optionOr(value: number | undefined, fallback: number): number {
  return value !== undefined && value >= 0 ? value : fallback;
}
