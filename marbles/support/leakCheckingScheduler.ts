import { expect } from 'vitest';
import { TestScheduler } from 'rxjs/testing';

/**
 * A TestScheduler that asserts like vitest, whose flush stops at `bound` and
 * fails if a timer is still scheduled then: an operator that kept a timer
 * after its last subscriber left (a resync tick, a campaign's retry) would
 * otherwise make `run()` go on forever, or pass unnoticed.
 */
export function leakCheckingScheduler(bound: number): TestScheduler {
  class LeakChecking extends TestScheduler {
    override flush(): void {
      this.maxFrames = Math.min(this.maxFrames, bound);
      super.flush();
      expect(
        this.actions.map((action) => action.delay),
        `timers still scheduled at frame ${bound}`,
      ).toEqual([]);
    }
  }
  return new LeakChecking((actual, expected) => expect(actual).toEqual(expected));
}
