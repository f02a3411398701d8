import type { SchedulerAction, SchedulerLike, Subscription } from 'rxjs';

/**
 * A clock that runs `rate` times as fast as `base` and reads `offset` ahead of
 * it (a replica whose clock drifts), for tests. `now()` is skewed; a delay of
 * `d` on this clock waits `d / rate` on the base one. Rescheduling from inside
 * an action (`this.schedule`) is skewed too.
 *
 * @param base Usually a TestScheduler.
 * @param rate e.g. 1.05 for a clock 5 % fast.
 * @param offset ms added to the base clock's reading.
 */
export function driftingScheduler(base: SchedulerLike, rate: number, offset = 0): SchedulerLike {
  if (!(rate > 0)) throw new RangeError(`driftingScheduler: rate must be positive, got ${rate}`);
  return {
    now: () => offset + base.now() * rate,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      return base.schedule<T>(
        function (this: SchedulerAction<T>, s?: T) {
          const action = this;
          const skewed = Object.create(action) as SchedulerAction<T>;
          skewed.schedule = (next?: T, d = 0) => action.schedule(next, d / rate);
          work.call(skewed, s);
        },
        delay / rate,
        state,
      );
    },
  };
}
