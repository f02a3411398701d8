import { NEVER, Observable, map } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeObject } from '../../src/0-model/objects.ts';
import { decoder } from '../../src/2-source/decode.ts';
import { listAndWatch } from '../../src/2-source/listAndWatch.ts';
import { fakeListWatch, httpFailure, listPage } from '../../src/testing/fakeListWatch.ts';
import { monotonicNow, monotonicScheduler } from '../../src/util/monotonicNow.ts';
import { createDelayingQueue } from '../../src/workqueue/delayingQueue.ts';

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

describe("monotonicScheduler inside rxjs's TestScheduler.run()", () => {
  // A user's marble test that passes no scheduler ran in virtual time while the default was `asyncScheduler` (run()
  // patches its clock and timers); the monotonic default must too, clock and timers alike.
  it('now() is the virtual clock during run(), and the monotonic one again after', () => {
    const testScheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    const seen: number[] = [];
    testScheduler.run(({ flush }) => {
      seen.push(monotonicScheduler.now());
      monotonicScheduler.schedule(() => seen.push(monotonicScheduler.now()), 5_000);
      flush();
    });
    expect(seen).toEqual([0, 5_000]);
    const outside = monotonicScheduler.now();
    expect(Math.abs(outside - monotonicNow())).toBeLessThan(1_000);
  });

  it('a delaying queue given no scheduler runs its delays in virtual time: marbles hold', () => {
    const testScheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    testScheduler.run(({ expectObservable }) => {
      const q = createDelayingQueue<string>();
      q.addAfter('x', 3_000);
      q.addAfter('y', 1_000);
      const got$ = new Observable<string>((subscriber) => {
        const take = (): void => {
          q.get().subscribe((k) => {
            subscriber.next(k);
            q.done(k);
            take();
          });
        };
        take();
      });
      expectObservable(got$, '^ 5s !').toBe('1s y 1999ms x');
    });
  });

  it('a reflector given no scheduler times its backoff in virtual time', () => {
    const testScheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    testScheduler.run(({ cold, expectObservable }) => {
      const fake = fakeListWatch({
        lists: [cold('#', undefined, httpFailure(500, 'list')), cold('(p|)', { p: listPage('1', []) })],
        watches: [NEVER],
      });
      const kinds$ = listAndWatch(fake, { decode: decoder(KubeObject), random: () => 0 }).pipe(map((e) => e.type[0]));
      // The list fails at 0 (an error event), waits 800 ms (the backoff, no jitter), lists again and watches.
      expectObservable(kinds$, '^ 2s !').toBe('e 799ms (rw)');
    });
  });
});
