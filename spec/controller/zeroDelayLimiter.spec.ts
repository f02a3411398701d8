import { NEVER, concat, of } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { controller, requeue } from '../../src/controller/index.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';
import { bucketRateLimiter, itemExponentialFailureRateLimiter } from '../../src/workqueue/index.ts';

const widgets = () => fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'))), NEVER));

/** A rate limiter with no delay at all, as a user may give one (and the docs' promise "a reconcile cannot spin"). */
describe('controller with a zero-delay rate limiter (default scheduler, fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a synchronous reconcile that fails or requeues runs once per timer task, not in a loop within subscribe()', () => {
    vi.useFakeTimers();
    for (const [name, rateLimiter] of [
      ['exponential 0', itemExponentialFailureRateLimiter<string>(0, 0)],
      ['bucket qps Infinity', bucketRateLimiter<string>({ qps: Infinity })],
      ['custom when() = 0', { when: () => 0, forget: () => {}, numRequeues: () => 0 }],
      ['custom when() = -5', { when: () => -5, forget: () => {}, numRequeues: () => 0 }],
    ] as const) {
      for (const fail of [false, true]) {
        let runs = 0;
        const ctl = controller({
          for: widgets(),
          rateLimiter,
          reconcile: () => {
            runs += 1;
            if (runs >= 1_000) return undefined; // without the fix: bounds the spin, so that the test can end
            if (fail) throw new Error('transient');
            return requeue();
          },
        });
        const subscription = ctl.outcomes$.subscribe();
        expect({ name, fail, runs }).toEqual({ name, fail, runs: 1 }); // everything inside subscribe() so far
        vi.advanceTimersToNextTimer();
        expect({ name, fail, runs }).toEqual({ name, fail, runs: 2 });
        subscription.unsubscribe();
      }
    }
  });

  it('an async reconcile that requeues lets a timer due now run after a run or two, not after 100,000 microtask runs', async () => {
    vi.useFakeTimers();
    let runs = 0;
    let runsWhenTimerFired = -1;
    setTimeout(() => (runsWhenTimerFired = runs), 0);
    const ctl = controller({
      for: widgets(),
      rateLimiter: bucketRateLimiter({ qps: Infinity }),
      reconcile: async () => {
        runs += 1;
        return runs >= 100_000 ? undefined : requeue();
      },
    });
    const subscription = ctl.outcomes$.subscribe();
    await vi.advanceTimersByTimeAsync(0);
    expect(runsWhenTimerFired).toBeGreaterThanOrEqual(1);
    expect(runsWhenTimerFired).toBeLessThanOrEqual(2);
    subscription.unsubscribe();
  });
});
