import { asyncScheduler, type SchedulerLike } from 'rxjs';

/**
 * Milliseconds since the epoch by a clock that never steps: `performance.timeOrigin + performance.now()`, which an NTP
 * step, a manual `date -s` or a VM resume leaves alone (unlike `Date.now()`). For durations and deadlines; a time
 * written for others to read (a Lease's `renewTime`) stays `Date.now()`'s.
 */
export function monotonicNow(): number {
  return performance.timeOrigin + performance.now();
}

/** `asyncScheduler`'s timers (Node's are monotonic already) with {@link monotonicNow} as its `now()`. */
export const monotonicScheduler: SchedulerLike = {
  now: monotonicNow,
  schedule: asyncScheduler.schedule.bind(asyncScheduler),
};
