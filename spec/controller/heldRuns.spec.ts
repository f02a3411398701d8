/**
 * What a reconcile holds keeps its key and its room until it settles (review audit38): an `async function*` reconcile's
 * steps (its body runs on promises between its yields, which an unsubscribe cannot stop), and a promise given to
 * `context.hold` by an Observable reconcile that ends first (bounded by `timeout()`, as docs/controllers.md suggests).
 */
import { BehaviorSubject, EMPTY, NEVER, concat, from, map, of, switchMap, timeout } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { controller, done, requeueAfter } from '../../src/controller/index.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('controller: an async function* reconcile across a leadership flip is held as a promise one (fake timers, default options)', () => {
  afterEach(() => void vi.useRealTimers());
  for (const shape of ['async function*', 'async function'] as const) {
    it(`${shape}: the key never runs twice at once`, async () => {
      vi.useFakeTimers();
      const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'))), NEVER));
      let running = 0;
      let overlap = 0;
      const body = async () => {
        running++;
        overlap = Math.max(overlap, running);
        await sleep(1000); // an API call that does not end on the signal
        running--;
      };
      const ctl = controller({
        for: widgets,
        concurrency: 1,
        reconcile:
          shape === 'async function*'
            ? async function* () {
                await body();
                yield done();
              }
            : async () => {
                await body();
                return done();
              },
      });
      const warm = widgets.store$.subscribe();
      const leader$ = new BehaviorSubject(true);
      const sub = leader$.pipe(switchMap((leading) => (leading ? ctl.outcomes$ : EMPTY))).subscribe();
      await vi.advanceTimersByTimeAsync(50);
      leader$.next(false);
      await vi.advanceTimersByTimeAsync(10);
      ctl.queue.add('default/a'); // an event for the key meanwhile
      leader$.next(true);
      await vi.advanceTimersByTimeAsync(50);
      const active = ctl.metrics().activeWorkers;
      await vi.advanceTimersByTimeAsync(3000);
      sub.unsubscribe();
      warm.unsubscribe();
      expect(overlap, 'two runs of default/a at once').toBe(1);
      expect(active).toBe(1);
    });
  }
});

describe('controller: a context.hold promise outliving its Observable reconcile (timeout) keeps its room too (fake timers)', () => {
  afterEach(() => void vi.useRealTimers());
  it('concurrency 1: no other reconcile runs while the held call runs, and it counts in activeWorkers', async () => {
    vi.useFakeTimers();
    const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'), kubeObj('b'))), NEVER));
    const log: string[] = [];
    let aCallRunning = false;
    const ctl = controller({
      for: widgets,
      concurrency: 1,
      reconcile: (key, context) => {
        if (key.endsWith('/a')) {
          const call = (async () => {
            aCallRunning = true;
            log.push('a call start');
            await sleep(1000);
            log.push('a call end');
            aCallRunning = false;
          })();
          // As docs/controllers.md suggests: hold the promise, bound the Observable reconcile with timeout().
          return from(context.hold(call)).pipe(
            timeout(100),
            map(() => done()),
          );
        }
        log.push(`b start (a's held call running: ${aCallRunning}, activeWorkers ${ctl.metrics().activeWorkers})`);
        return requeueAfter(50);
      },
    });
    const warm = widgets.store$.subscribe();
    const errors = ctl.errors$.subscribe();
    const sub = ctl.outcomes$.subscribe();
    await vi.advanceTimersByTimeAsync(150); // a's reconcile has timed out; its held call runs until 1000
    const activeWhileHeld = ctl.metrics().activeWorkers;
    await vi.advanceTimersByTimeAsync(2000);
    sub.unsubscribe();
    errors.unsubscribe();
    warm.unsubscribe();
    expect(activeWhileHeld, 'activeWorkers while a held call runs').toBe(1);
    expect(
      log.filter((l) => l.includes('running: true')),
      'b reconciled while a held call still ran (concurrency 1)',
    ).toEqual([]);
  });
});
