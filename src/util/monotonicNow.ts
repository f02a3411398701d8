import { asyncScheduler, type SchedulerLike } from 'rxjs';

/**
 * Milliseconds since the epoch by a clock that never steps: `performance.timeOrigin + performance.now()`, which an NTP
 * step or a manual `date -s` leaves alone (unlike `Date.now()`). For durations and deadlines; a time written for others
 * to read (a Lease's `renewTime`) stays `Date.now()`'s. It does not count a suspend (on Linux CLOCK_MONOTONIC stops
 * while the host sleeps): whatever must not outlive real time across one, as a leader's renew deadline, also reads the
 * wall clock's gain on it (src/leaderelection/machine.ts `leading`).
 */
export function monotonicNow(): number {
  return performance.timeOrigin + performance.now();
}

/** `asyncScheduler`'s timers (Node's are monotonic already) with {@link monotonicNow} as its `now()`. */
export const monotonicScheduler: SchedulerLike = {
  now: monotonicNow,
  schedule: asyncScheduler.schedule.bind(asyncScheduler),
};
