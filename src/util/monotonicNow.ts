import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { dateTimestampProvider } from 'rxjs/internal/scheduler/dateTimestampProvider';

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

/**
 * The default clock of every duration and deadline: {@link monotonicNow}, except inside rxjs's `TestScheduler.run()`,
 * which points `asyncScheduler.now()` at its virtual clock while it runs (through `dateTimestampProvider.delegate`,
 * set and cleared by `run()`; exported by rxjs 7 as `rxjs/internal/*`): then that, so that a user's marble test that
 * passes no scheduler keeps running in virtual time, timers and clock alike (our timers are `asyncScheduler`'s, which
 * `run()` makes virtual too). One property read: this clock is read several times an event.
 */
export function defaultNow(): number {
  return dateTimestampProvider.delegate ? dateTimestampProvider.now() : monotonicNow();
}

/**
 * `asyncScheduler`'s timers (Node's are monotonic already) with {@link defaultNow} as its `now()`: the default
 * scheduler wherever a duration is measured (rxjs's `asyncScheduler.now()` is `Date.now()`, which a wall-clock step
 * moves: a deadline set before a step back by an hour waited an hour more).
 */
export const monotonicScheduler: SchedulerLike = {
  now: defaultNow,
  schedule: asyncScheduler.schedule.bind(asyncScheduler),
};
