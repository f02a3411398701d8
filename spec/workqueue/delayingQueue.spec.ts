import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createDelayingQueue } from '../../src/workqueue/index.ts';
import { getNow, NOTHING, take } from './helpers.ts';

/** Runs the scheduler up to (and including) `frame`. */
function advanceTo(scheduler: VirtualTimeScheduler, frame: number): void {
  scheduler.maxFrames = frame;
  scheduler.flush();
  scheduler.frame = frame;
}

describe('DelayingWorkQueue.addAfter', () => {
  it('adds immediately for a delay <= 0 or NaN', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    q.addAfter('c', Number.NaN);
    expect([take(q), take(q), take(q)]).toEqual(['a', 'b', 'c']);
    expect(scheduler.actions).toHaveLength(0);
  });

  it('an item in flight delayed by <= 0 or NaN waits for a zero-delay action of the scheduler: a worker cannot take it again within one task', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    for (const delay of [0, -5, Number.NaN]) {
      q.add('a');
      expect(take(q)).toBe('a');
      q.addAfter('a', delay);
      q.done('a');
      expect(q.length).toBe(0); // not yet: it would be taken again at once
      expect(q.sizes().delayed).toBe(1);
      scheduler.flush(); // the same virtual frame
      expect(scheduler.frame).toBe(0);
      expect(take(q)).toBe('a');
      q.done('a');
    }
  });

  it('a synchronous worker whose limiter says 0 runs its item once per scheduler action, not in a loop within one', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    let runs = 0;
    q.add('a');
    const subscription = q
      .process((item) => {
        runs += 1;
        if (runs < 100) q.addAfter(item, 0); // a rate limiter with no delay (qps: Infinity); bounded for the test without the fix
        return [];
      })
      .subscribe();
    expect(runs).toBe(1);
    for (let action = 1; action <= 5; action += 1) {
      scheduler.actions[0]?.execute(undefined, 0);
      scheduler.actions.shift();
      expect(runs).toBe(action + 1);
    }
    subscription.unsubscribe();
  });

  it('adds the item when the delay has passed', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.addAfter('a', 50);
    advanceTo(scheduler, 49);
    expect(q.length).toBe(0);
    advanceTo(scheduler, 50);
    expect(take(q)).toBe('a');
    expect(q.sizes().delayed).toBe(0);
  });

  it('keeps the earliest time for a duplicate pending item', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.addAfter('a', 50);
    q.addAfter('a', 20);
    q.addAfter('a', 100);
    expect(q.sizes().delayed).toBe(1);
    advanceTo(scheduler, 20);
    expect(take(q)).toBe('a');
    q.done('a');
    advanceTo(scheduler, 200);
    expect(q.length).toBe(0);
  });

  it('releases items in deadline order, FIFO for equal deadlines', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.addAfter('late', 30);
    q.addAfter('x', 10);
    q.addAfter('y', 10);
    q.addAfter('early', 5);
    advanceTo(scheduler, 30);
    expect([take(q), take(q), take(q), take(q)]).toEqual(['early', 'x', 'y', 'late']);
  });

  it('keeps one scheduled action, for the earliest deadline', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<number>({ scheduler });
    for (let i = 1; i <= 100; i += 1) q.addAfter(i, 1000 - i);
    expect(scheduler.actions).toHaveLength(1);
    expect(scheduler.actions[0]?.delay).toBe(900);
    advanceTo(scheduler, 950);
    expect(q.length).toBe(51);
    expect(scheduler.actions).toHaveLength(1);
  });

  it('is a no-op for an item already queued when it fires', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.add('a');
    q.addAfter('a', 10);
    advanceTo(scheduler, 10);
    expect(q.length).toBe(1);
    expect(q.metrics().addsTotal).toBe(1);
    expect(q.metrics().retriesTotal).toBe(1);
  });

  it('waits out delays longer than a Node timer can hold, and never fires Infinity', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.addAfter('far', 3_000_000_000);
    q.addAfter('never', Number.POSITIVE_INFINITY);
    advanceTo(scheduler, 2_999_999_999);
    expect(q.length).toBe(0);
    advanceTo(scheduler, 3_000_000_000);
    expect(take(q)).toBe('far');
    expect(q.sizes().delayed).toBe(1);
    expect(scheduler.actions).toHaveLength(0);
  });

  it('shutdown drops waiting items and frees the timer; later addAfter is ignored', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.addAfter('a', 10);
    q.shutDown();
    expect(scheduler.actions.filter((a) => !a.closed)).toHaveLength(0);
    q.addAfter('b', 0);
    q.addAfter('c', 5);
    advanceTo(scheduler, 100);
    expect(getNow(q.get())).toEqual({ value: NOTHING, completed: true });
    expect(q.sizes().delayed).toBe(0);
    expect(q.metrics().retriesTotal).toBe(1);
  });

  it('pauseDelays keeps waiting items with no timer armed; resumeDelays adds the due ones and re-arms for the rest', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.addAfter('a', 10);
    q.pauseDelays();
    q.addAfter('b', 30);
    expect(scheduler.actions.filter((a) => !a.closed)).toHaveLength(0);
    advanceTo(scheduler, 20);
    expect(q.length).toBe(0);
    expect(q.sizes().delayed).toBe(2);
    q.resumeDelays();
    expect(take(q)).toBe('a');
    expect(scheduler.actions.filter((a) => !a.closed)).toHaveLength(1);
    advanceTo(scheduler, 30);
    expect(take(q)).toBe('b');
  });

  it('counts every addAfter as a retry, as client-go does', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.addAfter('a', 0);
    q.addAfter('a', 10);
    q.addAfter('b', 10);
    expect(q.metrics().retriesTotal).toBe(3);
  });
});
