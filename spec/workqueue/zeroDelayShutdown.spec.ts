/**
 * A zero-delay re-add of an item in flight waits for a scheduler action (so a rate limiter that says 0 cannot spin); a
 * shut-down meanwhile queues it as `add()` would have (client-go's `AddAfter(item, 0)` is `Add`), and `get()` drains it.
 */
import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createDelayingQueue } from '../../src/workqueue/index.ts';
import { NOTHING, take } from './helpers.ts';

describe('delaying queue: addAfter(item in flight, 0) then shutDownWithDrain() (review audit38)', () => {
  it('the item asked for again before the shut-down still drains through get(), as an add() would', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.add('a');
    expect(take(q)).toBe('a');
    q.addAfter('a', 0); // a worker's rate limiter said 0 (qps: Infinity, base 0)
    q.shutDownWithDrain().subscribe();
    q.done('a');
    scheduler.flush();
    expect(take(q)).toBe('a');
  });
  it('control: add() in the same place drains', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createDelayingQueue<string>({ scheduler });
    q.add('a');
    expect(take(q)).toBe('a');
    q.add('a');
    q.shutDownWithDrain().subscribe();
    q.done('a');
    expect(take(q)).toBe('a');
    void NOTHING;
  });
});
