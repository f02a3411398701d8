import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  bucketRateLimiter,
  createRateLimitingQueue,
  defaultControllerRateLimiter,
  itemExponentialFailureRateLimiter,
  maxOfRateLimiter,
  type RateLimiter,
} from '../../src/workqueue/index.ts';
import { caught, take } from './helpers.ts';

const times = <K>(limiter: RateLimiter<K>, item: K, n: number): number[] => Array.from({ length: n }, () => limiter.when(item));

describe('itemExponentialFailureRateLimiter', () => {
  it('doubles from 5 ms per item and counts requeues', () => {
    const limiter = itemExponentialFailureRateLimiter<string>();
    expect(times(limiter, 'a', 6)).toEqual([5, 10, 20, 40, 80, 160]);
    expect(limiter.numRequeues('a')).toBe(6);
    expect(limiter.when('b')).toBe(5);
    expect(limiter.numRequeues('b')).toBe(1);
  });

  it('caps at the max, default 1000 s, without overflowing', () => {
    const limiter = itemExponentialFailureRateLimiter<string>();
    const delays = times(limiter, 'a', 2000);
    expect(delays[17]).toBe(5 * 2 ** 17);
    expect(delays[18]).toBe(1_000_000);
    expect(delays[1999]).toBe(1_000_000);
    expect(itemExponentialFailureRateLimiter<string>(1, 1000).when('x')).toBe(1);
    const capped = itemExponentialFailureRateLimiter<string>(1, 3);
    expect(times(capped, 'x', 4)).toEqual([1, 2, 3, 3]);
  });

  it('forget resets the backoff and drops per-item state', () => {
    const limiter = itemExponentialFailureRateLimiter<string>(1, 1000);
    times(limiter, 'a', 3);
    times(limiter, 'b', 1);
    expect(limiter.size).toBe(2);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(limiter.size).toBe(1);
    expect(limiter.when('a')).toBe(1);
  });

  it('rejects invalid delays with a typed error', () => {
    expect(caught(() => itemExponentialFailureRateLimiter(-1, 10))).toMatchObject({ reason: 'InvalidArgument' });
    expect(caught(() => itemExponentialFailureRateLimiter(1, Number.NaN))).toMatchObject({
      reason: 'InvalidArgument',
    });
    // Infinity would be reached after ~1,021 failures: the key would then wait for ever, with no timer.
    expect(caught(() => itemExponentialFailureRateLimiter(5, Infinity))).toMatchObject({ reason: 'InvalidArgument' });
    expect(caught(() => itemExponentialFailureRateLimiter(Infinity, 10))).toMatchObject({ reason: 'InvalidArgument' });
  });
});

describe('bucketRateLimiter', () => {
  it('allows the burst, then spaces reservations at 1/qps', () => {
    const scheduler = new VirtualTimeScheduler();
    const limiter = bucketRateLimiter<string>({ qps: 10, burst: 100, scheduler });
    const delays = Array.from({ length: 103 }, (_, i) => limiter.when(`item-${i}`));
    expect(delays.slice(0, 100).every((d) => d === 0)).toBe(true);
    expect(delays.slice(100)).toEqual([100, 200, 300]);
    expect(limiter.numRequeues('item-0')).toBe(0);
  });

  it('refills with time, never above the burst', () => {
    const scheduler = new VirtualTimeScheduler();
    const limiter = bucketRateLimiter<string>({ qps: 10, burst: 2, scheduler });
    expect(times(limiter, 'a', 3)).toEqual([0, 0, 100]);
    scheduler.frame = 150;
    // debt of 1 token paid at 100 ms, half a token since: next token in 50 ms
    expect(limiter.when('a')).toBe(50);
    scheduler.frame = 10_000;
    expect(times(limiter, 'a', 3)).toEqual([0, 0, 100]);
  });

  it('uses the scheduler clock, and qps Infinity never delays', () => {
    const scheduler = new VirtualTimeScheduler();
    scheduler.frame = 5_000;
    const limiter = bucketRateLimiter<string>({ qps: 4, burst: 1, scheduler });
    expect(times(limiter, 'a', 3)).toEqual([0, 250, 500]);
    const unlimited = bucketRateLimiter<string>({ qps: Number.POSITIVE_INFINITY, burst: 1, scheduler });
    expect(times(unlimited, 'a', 5)).toEqual([0, 0, 0, 0, 0]);
  });

  it('rejects invalid options', () => {
    expect(caught(() => bucketRateLimiter({ qps: 0 }))).toMatchObject({ reason: 'InvalidArgument' });
    expect(caught(() => bucketRateLimiter({ burst: 0 }))).toMatchObject({ reason: 'InvalidArgument' });
    expect(caught(() => bucketRateLimiter({ burst: 1.5 }))).toMatchObject({ reason: 'InvalidArgument' });
  });
});

describe('maxOfRateLimiter and defaultControllerRateLimiter', () => {
  it('takes the longest delay and the largest requeue count; forget reaches all', () => {
    const scheduler = new VirtualTimeScheduler();
    // The limiter that counts requeues last: a forget that reached only the first would leave its count at 4.
    const limiter = maxOfRateLimiter<string>(
      bucketRateLimiter({ qps: 10, burst: 1, scheduler }),
      itemExponentialFailureRateLimiter(5, 1000),
    );
    expect(times(limiter, 'a', 4)).toEqual([5, 100, 200, 300]);
    expect(limiter.numRequeues('a')).toBe(4);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(maxOfRateLimiter<string>().when('a')).toBe(0);
  });

  it('default: exponential 5 ms .. 1000 s combined with 10 qps, burst 100', () => {
    const scheduler = new VirtualTimeScheduler();
    const limiter = defaultControllerRateLimiter<string>(scheduler);
    expect(times(limiter, 'a', 5)).toEqual([5, 10, 20, 40, 80]);
    expect(limiter.numRequeues('a')).toBe(5);
    for (let i = 0; i < 95; i += 1) expect(limiter.when(`other-${i}`)).toBe(5);
    expect(limiter.when('b')).toBe(100);
    expect(limiter.when('c')).toBe(200);
    const slow = defaultControllerRateLimiter<string>(scheduler);
    expect(times(slow, 'a', 30).at(-1)).toBe(1_000_000);
  });
});

describe('RateLimitingWorkQueue', () => {
  it('addRateLimited delays by the limiter; forget and numRequeues delegate', () => {
    const scheduler = new VirtualTimeScheduler();
    const rateLimiter = itemExponentialFailureRateLimiter<string>(10, 1000);
    const q = createRateLimitingQueue<string>({ scheduler, rateLimiter });
    q.addRateLimited('a');
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(2);
    scheduler.maxFrames = 9;
    scheduler.flush();
    expect(q.length).toBe(0);
    scheduler.maxFrames = 10;
    scheduler.flush();
    expect(take(q)).toBe('a');
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    expect(rateLimiter.size).toBe(0);
    expect(q.metrics().retriesTotal).toBe(2);
  });

  it('does not consult the limiter after shutdown', () => {
    const rateLimiter = itemExponentialFailureRateLimiter<string>();
    const q = createRateLimitingQueue<string>({ scheduler: new VirtualTimeScheduler(), rateLimiter });
    q.shutDown();
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(0);
  });

  it('defaults to defaultControllerRateLimiter on the queue scheduler', () => {
    const scheduler = new VirtualTimeScheduler();
    const q = createRateLimitingQueue<string>({ scheduler });
    q.addRateLimited('a');
    expect(scheduler.actions[0]?.delay).toBe(5);
    expect(q.numRequeues('a')).toBe(1);
  });
});
