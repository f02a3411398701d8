/**
 * The room of `concurrency` across a leadership flip (src/controller/room.ts), from a review of its first version:
 * a slot let go of while `Room.wake()` runs the waiting slots (an earlier slot's synchronous outcome closed it)
 * asked the queue anyway, so a key went to a closed slot (never reconciled, never done: lost for good); and a slot
 * waiting for room across `stop()` took a queued key once the room freed, after `stop()` had said it drained.
 */
import { BehaviorSubject, EMPTY, NEVER, Subject, concat, of, switchMap, take, type Observable, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { controller, done } from '../../src/controller/index.ts';
import { Room } from '../../src/controller/room.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Room and a waiter closed during wake()', () => {
  it('a waiter unsubscribed while wake() runs an earlier waiter never asks the queue, and its room is not kept', () => {
    const room = new Room(2);
    const r1 = room.started(); // two abandoned promises hold all the room
    const r2 = room.started();
    let bSub: Subscription | undefined;
    let bAsked = 0;
    const queueB = new Subject<string>();
    // A: gets a key at once; its (synchronous) reconcile ends, and the consumer lets go of the run: B is closed.
    room
      .whenRoom(() => of('x'))
      .subscribe((key) => {
        const finish = room.started();
        finish(); // a synchronous reconcile
        expect(key).toBe('x');
        bSub?.unsubscribe(); // e.g. outcomes$.pipe(take(n)) or a switchMap that let go on this outcome
      });
    bSub = room
      .whenRoom((): Observable<string> => (bAsked++, queueB))
      .subscribe(() => {
        throw new Error('closed B got a key');
      });
    expect(bAsked).toBe(0);
    r1(); // wake(): A enters, runs, closes B; the loop then enters B anyway
    expect(bSub.closed).toBe(true);
    expect(bAsked, 'a closed waiter asked the queue for a key').toBe(0);
    r2();
    // All done: a new slot of a room of 2 must find room for two.
    let asked = 0;
    room.whenRoom(() => (asked++, new Subject<string>())).subscribe();
    room.whenRoom(() => (asked++, new Subject<string>())).subscribe();
    expect(asked, 'room leaked by the closed waiter').toBe(2);
  });
});

describe('a key handed to a slot closed during Room.wake()', () => {
  afterEach(() => void vi.useRealTimers());
  it('every key is reconciled by a later run', async () => {
    vi.useFakeTimers();
    const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'), kubeObj('b'), kubeObj('c'), kubeObj('d'))), NEVER));
    const reconciled = new Set<string>();
    const ctl = controller({
      for: widgets,
      concurrency: 2,
      reconcile: (key) => {
        if (key.endsWith('/a') || key.endsWith('/b'))
          return sleep(200).then(() => {
            reconciled.add(key);
            return done();
          });
        reconciled.add(key); // a synchronous reconcile
        return done();
      },
    });
    const warm = widgets.store$.subscribe();
    const leader$ = new BehaviorSubject(true);
    const first = leader$.pipe(switchMap((leading) => (leading ? ctl.outcomes$ : EMPTY))).subscribe();
    await vi.advanceTimersByTimeAsync(50); // a and b run (promises)
    leader$.next(false); // abandoned: they hold the room until 200
    first.unsubscribe();
    await vi.advanceTimersByTimeAsync(10);
    // A run that wants one outcome (as a switchMap that lets go on an outcome would)
    const second = ctl.outcomes$.pipe(take(1)).subscribe();
    await vi.advanceTimersByTimeAsync(500);
    second.unsubscribe();
    reconciled.clear();
    const third = ctl.outcomes$.subscribe();
    for (const k of ['a', 'b', 'c', 'd']) ctl.queue.add(`default/${k}`); // every key changed again
    await vi.advanceTimersByTimeAsync(2_000);
    // What the user suffers: one key is never reconciled again (in `processing` for ever, its adds parked in `dirty`).
    expect([...reconciled].sort()).toEqual(['default/a', 'default/b', 'default/c', 'default/d']);
    expect(ctl.queue.sizes()).toMatchObject({ queued: 0, dirty: 0, processing: 0 });
    expect(ctl.metrics().activeWorkers).toBe(0);
    third.unsubscribe();
    warm.unsubscribe();
  });
});

describe('no reconcile starts after stop()', () => {
  afterEach(() => void vi.useRealTimers());
  it('a slot waiting for room when stop() is called starts nothing once the room frees', async () => {
    vi.useFakeTimers();
    const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'), kubeObj('b'), kubeObj('c'))), NEVER));
    const starts: string[] = [];
    let stoppedAt: number | undefined;
    const ctl = controller({
      for: widgets,
      reconcile: async (key) => {
        starts.push(`${stoppedAt === undefined ? 'before' : 'after'} stop: ${key}`);
        await sleep(200);
        return done();
      },
    });
    const warm = widgets.store$.subscribe();
    const leader$ = new BehaviorSubject(true);
    const run = leader$.pipe(switchMap((leading) => (leading ? ctl.outcomes$ : EMPTY))).subscribe();
    await vi.advanceTimersByTimeAsync(50); // the first key runs (0–200)
    leader$.next(false); // abandoned
    await vi.advanceTimersByTimeAsync(10);
    leader$.next(true); // regained: its slot waits for the room
    await vi.advanceTimersByTimeAsync(40);
    stoppedAt = Date.now();
    let drained = false;
    ctl.stop().subscribe(() => (drained = true));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(drained).toBe(true);
    expect(starts.filter((s) => s.startsWith('after'))).toEqual([]);
    run.unsubscribe();
    warm.unsubscribe();
  });
});
