import { BehaviorSubject, EMPTY, NEVER, concat, defer, from, map, of, switchMap } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { controller, done } from '../../src/controller/index.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise reconcile of one key (200 ms, fake timers, default options), counting how many run at once. */
function slowController() {
  const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'))), NEVER));
  const seen = { running: 0, maxRunning: 0, starts: 0, aborted: 0 };
  const ctl = controller({
    for: widgets,
    reconcile: async (_key, { signal }) => {
      seen.starts++;
      seen.running++;
      seen.maxRunning = Math.max(seen.maxRunning, seen.running);
      await sleep(200);
      if (signal.aborted) seen.aborted++;
      seen.running--;
      return done();
    },
  });
  return { widgets, ctl, seen };
}

describe('controller: an abandoned promise reconcile keeps its key in flight until it settles (fake timers, default options)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('leadership lost and regained while a promise runs: the key waits for it (never twice at once), its signal aborted, counted active', async () => {
    vi.useFakeTimers();
    const { widgets, ctl, seen } = slowController();
    const leader$ = new BehaviorSubject(true);
    const warm = widgets.store$.subscribe();
    const subscription = leader$.pipe(switchMap((leading) => (leading ? ctl.outcomes$ : EMPTY))).subscribe();
    await vi.advanceTimersByTimeAsync(50); // a runs (0–200)
    expect(seen.running).toBe(1);
    leader$.next(false); // abandoned: the key given back, but its promise runs on
    await vi.advanceTimersByTimeAsync(10);
    expect(ctl.metrics().activeWorkers).toBe(1);
    leader$.next(true); // regained at 60: a must not start again before 200
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toMatchObject({ starts: 1, running: 1, maxRunning: 1 });
    await vi.advanceTimersByTimeAsync(50); // 210: the first settled (aborted), a starts again
    expect(seen).toMatchObject({ starts: 2, running: 1, maxRunning: 1, aborted: 1 });
    await vi.advanceTimersByTimeAsync(200);
    expect(seen).toMatchObject({ starts: 2, running: 0, maxRunning: 1, aborted: 1 });
    expect(ctl.metrics().activeWorkers).toBe(0);
    subscription.unsubscribe();
    warm.unsubscribe();
  });

  it('leadership regained while an abandoned promise runs: new keys start only into the room it leaves, never past concurrency (left62)', async () => {
    vi.useFakeTimers();
    for (const concurrency of [1, 2]) {
      const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'), kubeObj('b'), kubeObj('c'))), NEVER));
      const seen = { running: 0, maxRunning: 0, starts: [] as string[], maxActive: 0 };
      const ctl = controller({
        for: widgets,
        concurrency,
        reconcile: async (key) => {
          seen.starts.push(`${Date.now() - from} ${key}`);
          seen.running++;
          seen.maxRunning = Math.max(seen.maxRunning, seen.running);
          await sleep(200);
          seen.running--;
          return done();
        },
      });
      const from = Date.now();
      const leader$ = new BehaviorSubject(true);
      const warm = widgets.store$.subscribe();
      const subscription = leader$.pipe(switchMap((leading) => (leading ? ctl.outcomes$ : EMPTY))).subscribe();
      const watching = setInterval(() => (seen.maxActive = Math.max(seen.maxActive, ctl.metrics().activeWorkers)), 1);
      await vi.advanceTimersByTimeAsync(50); // `concurrency` keys run (0–200)
      leader$.next(false); // abandoned: their promises run on, holding their room
      await vi.advanceTimersByTimeAsync(10);
      leader$.next(true); // regained at 60: no key may start before the abandoned ones settle at 200
      await vi.advanceTimersByTimeAsync(100);
      expect(seen.starts, `concurrency ${concurrency}`).toHaveLength(concurrency);
      await vi.advanceTimersByTimeAsync(1_000);
      clearInterval(watching);
      // Every key ran (the abandoned again, its outcome dropped), never more than `concurrency` at once, nor counted so.
      expect(new Set(seen.starts.map((s) => s.split(' ')[1]))).toEqual(new Set(['default/a', 'default/b', 'default/c']));
      expect(seen.maxRunning, `concurrency ${concurrency}`).toBe(concurrency);
      expect(seen.maxActive, `concurrency ${concurrency}`).toBe(concurrency);
      expect(ctl.metrics().activeWorkers).toBe(0);
      subscription.unsubscribe();
      warm.unsubscribe();
    }
  });

  it('an Observable reconcile that holds the promise it starts (from(context.hold(call()))): after a flip the key waits for it too', async () => {
    vi.useFakeTimers();
    for (const shape of ['from', 'defer'] as const) {
      const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'))), NEVER));
      const seen = { running: 0, maxRunning: 0, starts: 0 };
      const patch = async () => {
        seen.starts++;
        seen.running++;
        seen.maxRunning = Math.max(seen.maxRunning, seen.running);
        await sleep(200); // the PATCH in flight
        seen.running--;
      };
      const ctl = controller({
        for: widgets,
        // The usual shape: an API call (a promise) inside an Observable pipeline, held.
        reconcile: (_key, context) =>
          (shape === 'from' ? from(context.hold(patch())) : defer(() => context.hold(patch()))).pipe(map(() => done())),
      });
      const leader$ = new BehaviorSubject(true);
      const warm = widgets.store$.subscribe();
      const subscription = leader$.pipe(switchMap((leading) => (leading ? ctl.outcomes$ : EMPTY))).subscribe();
      await vi.advanceTimersByTimeAsync(50);
      leader$.next(false); // the Observable is cancelled; the PATCH inside it runs on until 200
      await vi.advanceTimersByTimeAsync(10);
      expect(ctl.metrics().activeWorkers, shape).toBe(1);
      leader$.next(true);
      await vi.advanceTimersByTimeAsync(100);
      expect(seen, shape).toEqual({ starts: 1, running: 1, maxRunning: 1 });
      await vi.advanceTimersByTimeAsync(50); // 210: settled, a starts again
      expect(seen, shape).toEqual({ starts: 2, running: 1, maxRunning: 1 });
      subscription.unsubscribe();
      warm.unsubscribe();
      await vi.advanceTimersByTimeAsync(200);
    }
  });

  it('stop() after the outcomes were unsubscribed mid-reconcile waits for the abandoned promise, whose signal is aborted', async () => {
    vi.useFakeTimers();
    const { ctl, seen } = slowController();
    const subscription = ctl.outcomes$.subscribe();
    await vi.advanceTimersByTimeAsync(50);
    subscription.unsubscribe();
    let stoppedAt: number | undefined;
    ctl.stop().subscribe(() => (stoppedAt = Date.now()));
    const from = Date.now();
    await vi.advanceTimersByTimeAsync(100);
    expect(stoppedAt).toBeUndefined(); // the promise still runs
    await vi.advanceTimersByTimeAsync(100);
    expect(stoppedAt! - from).toBe(150);
    expect(seen).toMatchObject({ starts: 1, running: 0, aborted: 1 });
  });

  it('stop() aborts the signal of a reconcile in flight and emits once it has finished', async () => {
    vi.useFakeTimers();
    const { ctl, seen } = slowController();
    const outcomes: string[] = [];
    ctl.outcomes$.subscribe((o) => outcomes.push(`${o.key}:${o.result}`));
    await vi.advanceTimersByTimeAsync(50);
    let stopped = false;
    ctl.stop().subscribe(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(150);
    expect(stopped).toBe(true);
    expect(outcomes).toEqual(['default/a:success']);
    expect(seen.aborted).toBe(1);
  });
});
