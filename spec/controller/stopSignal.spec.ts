import { NEVER, concat, fromEvent, of, takeUntil, timer, map } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { controller, done } from '../../src/controller/index.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';

describe('controller stop() drains Observable reconciles; the docs recipe ends one on its signal (fake timers, default options)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('an Observable reconcile that never completes but ends on signal lets stop() finish at once; one that completes soon is drained', async () => {
    vi.useFakeTimers();
    const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('endless'), kubeObj('soon'))), NEVER));
    const ctl = controller({
      for: widgets,
      concurrency: 2,
      reconcile: (key, { signal }) =>
        key === 'default/endless' ? NEVER.pipe(takeUntil(fromEvent(signal, 'abort'))) : timer(100).pipe(map(() => done())),
    });
    const outcomes: string[] = [];
    ctl.outcomes$.subscribe((o) => outcomes.push(`${o.key}:${o.result}`));
    await vi.advanceTimersByTimeAsync(50);
    let stoppedAt: number | undefined;
    const from = Date.now();
    ctl.stop().subscribe(() => (stoppedAt = Date.now() - from));
    await vi.advanceTimersByTimeAsync(0);
    expect(stoppedAt).toBeUndefined(); // 'soon' is drained, not cut
    await vi.advanceTimersByTimeAsync(50);
    expect(stoppedAt).toBe(50);
    expect(outcomes.sort()).toEqual(['default/endless:success', 'default/soon:success']);
  });
});
