/**
 * `longTimeout(work, delayMs)`: `setTimeout` for a delay of any length. Node's timers take at most 2^31−1 ms (about
 * 24.8 days); a longer delay fires after 1 ms instead, with a `TimeoutOverflowWarning`. (The library has its own,
 * `scheduleAfter`; the emulator imports nothing of it.)
 */

/** The longest delay handed to `setTimeout` at once. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

export interface LongTimeout {
  /** Cancels the timer (whichever link of the chain is armed). */
  clear(): void;
}

/**
 * Runs `work` once, `delayMs` from now: a delay longer than {@link MAX_TIMEOUT_MS} is a chain of timers no longer
 * than it, one at a time. A delay ≤ 0 (or NaN) is 0.
 */
export function longTimeout(work: () => void, delayMs: number): LongTimeout {
  let left = delayMs > 0 ? delayMs : 0;
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const part = Math.min(left, MAX_TIMEOUT_MS);
    left -= part;
    timer = setTimeout(() => (left > 0 ? arm() : work()), part);
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}
