import { EMPTY, filter, map, reduce, Subject, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  bucketRateLimiter,
  createRateLimitingQueue,
  itemExponentialFailureRateLimiter,
  type RateLimitingWorkQueue,
} from '../../src/workqueue/index.ts';
import { finished, testScheduler } from './helpers.ts';

/** Controller-style loop: failures go back rate-limited, successes are forgotten. */
function reconcileLoop(q: RateLimitingWorkQueue<string>, failTimes: number): Subject<string> {
  const starts = new Subject<string>();
  let runs = 0;
  q.process((k) => {
    starts.next(k);
    runs += 1;
    return runs <= failTimes ? throwError(() => new Error('not yet')) : EMPTY;
  }).subscribe((e) => {
    if (e.type === 'error') q.addRateLimited(e.item);
    if (e.type === 'done') q.forget(e.item);
  });
  return starts;
}

describe('rate limiting in virtual time', () => {
  it('default limiter: a failing item retries after 5, 10, 20, 40 ms, then is forgotten', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable, flush }) => {
      const q = createRateLimitingQueue<string>({ scheduler: ts });
      const starts = reconcileLoop(q, 4);
      expectObservable(starts).toBe('a 4ms a 9ms a 19ms a 39ms a');
      ts.schedule(() => q.add('a'), 0); // after expectObservable subscribed to the hot `starts`
      flush();
      expect(q.numRequeues('a')).toBe(0);
      expect(q.sizes()).toMatchObject({ delayed: 0, dirty: 0, processing: 0 });
    });
  });

  it('exponential backoff is capped at the max delay', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createRateLimitingQueue<string>({
        scheduler: ts,
        rateLimiter: itemExponentialFailureRateLimiter(5, 20),
      });
      // delays 5, 10, 20, 20, 20 -> runs at 0, 5, 15, 35, 55, 75
      expectObservable(reconcileLoop(q, 5)).toBe('a 4ms a 9ms a 19ms a 19ms a 19ms a');
      ts.schedule(() => q.add('a'), 0);
    });
  });

  it('bucket limiter: the burst goes at once, then one item per 1/qps', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createRateLimitingQueue<string>({
        scheduler: ts,
        rateLimiter: bucketRateLimiter({ qps: 10, burst: 3, scheduler: ts }),
      });
      expectObservable(finished(q.process(() => EMPTY))).toBe('(abc) 95ms d 99ms e');
      for (const k of ['a', 'b', 'c', 'd', 'e']) q.addRateLimited(k);
    });
  });

  it('default limiter with 102 distinct items: 100 after 5 ms, then 100 ms spacing', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createRateLimitingQueue<number>({ scheduler: ts });
      const framesHistogram = q
        .process(() => {
          const at = ts.now();
          return [at];
        })
        .pipe(
          filter((e) => e.type === 'value'),
          map((e) => e.value),
          reduce<number, Record<number, number>>((acc, at) => ({ ...acc, [at]: (acc[at] ?? 0) + 1 }), {}),
        );
      expectObservable(framesHistogram).toBe('1000ms (h|)', { h: { 5: 100, 100: 1, 200: 1 } });
      for (let i = 0; i < 102; i += 1) q.addRateLimited(i);
      ts.schedule(() => q.shutDown(), 1000);
    });
  });

  it('the 10-qps bucket spaces 5 distinct items 100 ms apart after the burst', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const limiter = bucketRateLimiter<number>({ scheduler: ts });
      const q = createRateLimitingQueue<number>({ scheduler: ts, rateLimiter: limiter });
      for (let i = 0; i < 100; i += 1) limiter.when(i); // use up the burst
      for (let i = 100; i < 105; i += 1) q.addRateLimited(i);
      expectObservable(finished(q.process(() => EMPTY))).toBe('100ms a 99ms b 99ms c 99ms d 99ms e', {
        a: 100,
        b: 101,
        c: 102,
        d: 103,
        e: 104,
      });
    });
  });
});
