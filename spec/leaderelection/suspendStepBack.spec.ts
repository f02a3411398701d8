/**
 * A leader stepped down by a suspend stays down until it writes again (mutation testing, gaps102): `leading()` reads
 * the wall clock's gain on the monotonic one, and a wall clock stepped back after the resume (NTP correcting it) takes
 * that gain away; the step-down must not be undone by it. Virtual time: vitest's fake timers fake the timers, `Date`
 * and `performance`; `vi.setSystemTime` moves `Date` alone, as a resume or a step of the wall clock does.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

const FAKED = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] as const;

afterEach(() => {
  vi.useRealTimers();
});

describe('leaderElection at the defaults: a suspend, then the wall clock stepped back', () => {
  it('a leader stepped down by a suspend does not lead again when the wall clock is corrected back, its API still cut off', () => {
    vi.useFakeTimers({ toFake: [...FAKED], now: Date.UTC(2026, 10, 28, 2) });
    const start = performance.now();
    const server = new FakeLeaseServer();
    let partitioned = false;
    const log: string[] = [];
    const sub = leaderElection(server.clients({ client: 'a', partitioned: () => partitioned }).lease('ctrl'), {
      identity: 'a',
    }).leader$.subscribe((l) => log.push(`${Math.round(performance.now() - start)} ${l}`));
    vi.advanceTimersByTime(4_500);
    partitioned = true;
    vi.setSystemTime(Date.now() + 60_000); // suspended a minute
    vi.advanceTimersByTime(2_000); // the attempt at 6 007 sees the minute gained: down
    vi.setSystemTime(Date.now() - 60_000); // the wall clock corrected back
    vi.advanceTimersByTime(20_000);
    sub.unsubscribe();
    // Never true again: every renewal since the suspend failed (without the step-down kept, true at 8 007 until 14 005).
    expect(log).toEqual(['0 false', '3 true', '6007 false']);
  });
});
