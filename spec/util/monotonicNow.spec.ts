import { afterEach, describe, expect, it, vi } from 'vitest';
import { monotonicNow, monotonicScheduler } from '../../src/util/monotonicNow.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('monotonicNow', () => {
  it('is near the epoch time, and a step of the wall clock does not move it', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'], now: Date.UTC(2026, 10, 27, 12) });
    const start = monotonicNow();
    expect(start).toBe(Date.UTC(2026, 10, 27, 12));
    vi.advanceTimersByTime(1_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    vi.advanceTimersByTime(1_000);
    expect(monotonicNow() - start).toBe(2_000);
    expect(Date.now() - start).toBe(2_000 - 3_600_000);
  });

  it("monotonicScheduler: asyncScheduler's timers, monotonicNow as now()", () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
    const fired: number[] = [];
    const start = monotonicScheduler.now();
    monotonicScheduler.schedule(() => fired.push(monotonicScheduler.now() - start), 500);
    vi.setSystemTime(Date.now() + 60_000);
    vi.advanceTimersByTime(499);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([500]);
  });
});
