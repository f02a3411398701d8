import { NEVER, concat, of } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { controller, done, requeueAfter } from '../../src/controller/index.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';

describe('controller timers (default options, fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('unsubscribing outcomes$ leaves no timer armed (a key waiting requeueAfter, a failing key in backoff); subscribing again re-arms', () => {
    vi.useFakeTimers();
    const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'), kubeObj('b'), kubeObj('c'))), NEVER));
    const ctl = controller({
      for: widgets,
      reconcile: (key) => {
        if (key === 'default/b') return requeueAfter(600_000);
        if (key === 'default/c') throw new Error('fails every time');
        return done();
      },
    });
    const outcomes: string[] = [];
    const subscription = ctl.outcomes$.subscribe((o) => outcomes.push(`${o.key} ${o.result}`));
    vi.advanceTimersByTime(100); // c fails at 0, 5, 15, 35, 75 ms
    expect(outcomes.filter((o) => o === 'default/c error')).toHaveLength(5);
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    subscription.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
    expect(ctl.queue.sizes().delayed).toBe(2); // still waiting, without a timer

    const again = ctl.outcomes$.subscribe();
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    again.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
  });
});
