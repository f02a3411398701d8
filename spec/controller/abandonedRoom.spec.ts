/**
 * A reconcile promise that never settles, abandoned at a leadership flip, holds its room of `concurrency` for good
 * (room.ts): at concurrency 1 the controller then starts nothing, and said nothing. It now says so on `errors$` once a
 * slot has waited {@link ABANDONED_ROOM_REPORT_MS} (60 s) for room it would have but for abandoned reconciles: once,
 * and again only after that cleared and came back. Default options, in virtual time (fake timers and clock).
 */
import { BehaviorSubject, EMPTY, NEVER, VirtualTimeScheduler, concat, of, switchMap, type Subscription } from 'rxjs';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { ABANDONED_ROOM_REPORT_MS, AbandonedRoomError, controller, done } from '../../src/controller/index.ts';
import type { InformerError } from '../../src/index.ts';
import { Room, type RoomStall } from '../../src/controller/room.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/marbles.ts';

beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] }));
afterEach(() => void vi.useRealTimers());

const never = () => new Promise<never>(() => undefined);

/** A controller over a whose reconcile is `slow` (b and c, queued later, done), its errors, and a leadership flip. */
function setup(slow: () => Promise<ReturnType<typeof done>>, concurrency = 1) {
  const widgets = fakeInformer(fakeResource(), concat(of(listed('1', kubeObj('a'))), NEVER));
  const reconciled: string[] = [];
  const ctl = controller({
    for: widgets,
    concurrency,
    reconcile: (key) => {
      reconciled.push(key);
      return key === 'default/a' ? slow() : done();
    },
  });
  const errors: InformerError[] = [];
  const subscriptions: Subscription[] = [widgets.store$.subscribe(), ctl.errors$.subscribe((e) => errors.push(e))];
  const leader$ = new BehaviorSubject(true);
  subscriptions.push(leader$.pipe(switchMap((leading) => (leading ? ctl.outcomes$ : EMPTY))).subscribe());
  const stalls = () => errors.filter((e) => e instanceof AbandonedRoomError);
  /** New work: b and c changed. */
  const work = () => ['default/b', 'default/c'].forEach((key) => ctl.queue.add(key));
  return { work, ctl, reconciled, errors, stalls, leader$, end: () => subscriptions.forEach((s) => s.unsubscribe()) };
}

it('a promise that never settles, abandoned at a flip: reported once after 60 s, naming how many and for how long', async () => {
  expect(ABANDONED_ROOM_REPORT_MS).toBe(60_000);
  const { work, reconciled, errors, stalls, leader$, end } = setup(never);
  await vi.advanceTimersByTimeAsync(10);
  work();
  expect(reconciled).toEqual(['default/a']); // a runs, b and c wait for it
  leader$.next(false); // lost: a is abandoned, its promise runs on
  await vi.advanceTimersByTimeAsync(5_000);
  leader$.next(true); // regained: the slot waits for the room a still holds
  await vi.advanceTimersByTimeAsync(ABANDONED_ROOM_REPORT_MS - 1);
  expect(stalls()).toHaveLength(0);
  await vi.advanceTimersByTimeAsync(1);
  expect(stalls()).toHaveLength(1);
  const stall = stalls()[0] as AbandonedRoomError;
  expect(stall.reason).toBe('Timeout');
  expect(stall).toMatchObject({ abandoned: 1, abandonedForMs: 65_000, waitedMs: 60_000 });
  expect(stall.message).toBe(
    'controller widget: no reconcile could start for 60 s (reported after 60 s): 1 abandoned reconcile holds the room of concurrency 1, ' +
      'abandoned 65 s ago (outcomes$ unsubscribed mid-reconcile, as on a lost leadership) and its promise not settled; pass ' +
      'context.signal on so that it ends when aborted',
  );
  // Said once while it lasts.
  await vi.advanceTimersByTimeAsync(600_000);
  expect(stalls()).toHaveLength(1);
  expect(reconciled).toEqual(['default/a']);

  // Cleared (no slot waits: leadership lost again) and back: said again, once.
  leader$.next(false);
  await vi.advanceTimersByTimeAsync(1_000);
  leader$.next(true);
  await vi.advanceTimersByTimeAsync(ABANDONED_ROOM_REPORT_MS);
  expect(stalls()).toHaveLength(2);
  expect(stalls()[1]).toMatchObject({ abandoned: 1, waitedMs: 60_000, abandonedForMs: 60_000 + 1_000 + 665_000 });
  await vi.advanceTimersByTimeAsync(600_000);
  expect(stalls()).toHaveLength(2);
  expect(errors).toHaveLength(2); // nothing else
  end();
});

it('an abandoned promise that settles within 60 s is not reported, and the waiting keys then run', async () => {
  const { work, reconciled, stalls, leader$, end } = setup(() => new Promise((resolve) => setTimeout(() => resolve(done()), 59_000)));
  await vi.advanceTimersByTimeAsync(10);
  work();
  leader$.next(false);
  leader$.next(true);
  await vi.advanceTimersByTimeAsync(120_000);
  expect(stalls()).toHaveLength(0);
  expect(reconciled).toEqual(expect.arrayContaining(['default/b', 'default/c'])); // (and a again: its run was abandoned)
  end();
});

it('a reconcile that is not abandoned is not reported however long it runs (the controller is busy, not stalled)', async () => {
  const { work, reconciled, stalls, end } = setup(never);
  work();
  await vi.advanceTimersByTimeAsync(3_600_000);
  expect(reconciled).toEqual(['default/a']);
  expect(stalls()).toHaveLength(0);
  end();
});

it('concurrency 2: a slot kept waiting by one abandoned reconcile beside a live one is reported, naming the one', async () => {
  const { work, reconciled, stalls, leader$, end } = setup(never, 2);
  await vi.advanceTimersByTimeAsync(10); // a hangs in one slot; the other waits for a key
  leader$.next(false);
  leader$.next(true); // one slot has room (a holds the other's), takes b and c; the second waits
  work();
  await vi.advanceTimersByTimeAsync(ABANDONED_ROOM_REPORT_MS - 1);
  expect(reconciled).toEqual(['default/a', 'default/b', 'default/c']);
  expect(stalls()).toHaveLength(0);
  await vi.advanceTimersByTimeAsync(1);
  expect(stalls()).toHaveLength(1);
  expect(stalls()[0]).toMatchObject({ abandoned: 1 });
  end();
});

it('Room: the watch starts when a slot waits on abandoned room only, and a settled promise ends it before the report', () => {
  const clock = new VirtualTimeScheduler();
  const stalls: RoomStall[] = [];
  const room = new Room(1, { scheduler: clock, report: (stall) => stalls.push(stall) });
  const live = room.started();
  const taken: string[] = [];
  const slot = room.whenRoom(() => of('k')).subscribe((key) => taken.push(key));
  expect(clock.actions).toHaveLength(0); // waiting on a live reconcile: busy, not watched
  live.abandon();
  expect(clock.actions.map((a) => a.delay)).toEqual([ABANDONED_ROOM_REPORT_MS]);
  live(); // settled: the slot takes its key, the watch is cancelled
  expect(taken).toEqual(['k']);
  clock.flush();
  expect(stalls).toEqual([]);
  slot.unsubscribe();
});
