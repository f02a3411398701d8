import { Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { InformerError } from '../0-model/errors.ts';

/**
 * How long a slot waits for room held by abandoned reconciles before the controller says so (ms). This controller has
 * no reconcile timeout (controller-runtime has none by default either); a minute is kube-apiserver's default request
 * timeout (`--request-timeout`, 1 m), so a promise still unsettled after it is waiting on something that is no API call,
 * or on one without a timeout: it may never settle.
 */
export const ABANDONED_ROOM_REPORT_MS = 60_000;

/**
 * A controller that could start no reconcile for {@link ABANDONED_ROOM_REPORT_MS} because abandoned reconciles (their
 * `outcomes$` unsubscribed mid-reconcile, as on a lost leadership) still hold the room of `concurrency`: their promises
 * have not settled. Reported once on the controller's `errors$` (reason `Timeout`), again only after it cleared and
 * came back.
 */
export class AbandonedRoomError extends InformerError {
  /** Abandoned reconciles holding room now. */
  readonly abandoned: number;
  /** How long the oldest of them has been abandoned (ms). */
  readonly abandonedForMs: number;
  /** How long a slot has waited for room (ms). */
  readonly waitedMs: number;

  constructor(message: string, stall: RoomStall) {
    super('Timeout', message);
    this.name = 'AbandonedRoomError';
    this.abandoned = stall.abandoned;
    this.abandonedForMs = stall.abandonedForMs;
    this.waitedMs = stall.waitedMs;
  }
}

/** What {@link Room} reports when abandoned reconciles kept a slot waiting: see {@link AbandonedRoomError}. */
export interface RoomStall {
  readonly abandoned: number;
  readonly abandonedForMs: number;
  readonly waitedMs: number;
}

/** A reconcile holding room: call it once when it ends; `abandon()` when its outcome is no longer awaited. */
export type HeldRoom = (() => void) & { readonly abandon: () => void };

/**
 * Room for `concurrency` reconciles at once, abandoned ones included: a promise reconcile abandoned when `outcomes$`
 * was unsubscribed (leadership lost) runs on until it settles, and while it does it keeps its room, as it would had it
 * not been abandoned. A subscription meanwhile (leadership regained) starts new keys only into the room left, so the
 * user's external systems never see more than `concurrency` reconciles of this controller at once (a limit chosen for
 * them: an API's rate, a pool of connections). controller-runtime has no precedent: its process exits on a lost lease.
 *
 * A slot of a run waits for room before it asks the queue for a key, and holds it from then on: while it waits for a
 * key (a reservation), then while it reconciles (counted by `started()` until `finished`, an abandoned promise until it
 * settles). Each release lets the waiting slots try again, in the order they came.
 */
export class Room {
  private readonly size: number;
  /** Reconciles started and not finished (abandoned ones until they settle): `activeWorkers`. */
  private running = 0;
  /** Slots that took room and wait for a key. */
  private reserved = 0;
  private readonly waiting: (() => void)[] = [];
  /** The abandoned reconciles still holding room, each with when it was abandoned. */
  private readonly abandoned = new Map<HeldRoom, number>();
  /** Since when a slot has waited for room it would have but for the abandoned reconciles, and the report's timer. */
  private stall: { readonly since: number; readonly timer: Subscription } | undefined;

  private readonly watch: { readonly scheduler: SchedulerLike; readonly report: (stall: RoomStall) => void } | undefined;

  /** `watch`: where a stall by abandoned reconciles is reported (none: not watched). */
  constructor(size: number, watch?: { readonly scheduler: SchedulerLike; readonly report: (stall: RoomStall) => void }) {
    this.size = size;
    this.watch = watch;
  }

  /** `activeWorkers`: reconciles running, abandoned ones still settling included. */
  get active(): number {
    return this.running;
  }

  /**
   * A reconcile starts (its slot's reservation becomes it); the function returned ends it, once, and its `abandon()`
   * marks it abandoned (it holds its room until it ends).
   */
  started(): HeldRoom {
    this.running++;
    let ended = false;
    const held: HeldRoom = Object.assign(
      () => {
        if (ended) return;
        ended = true;
        this.running--;
        this.abandoned.delete(held);
        this.wake();
        this.watchStall();
      },
      {
        abandon: () => {
          if (ended || this.abandoned.has(held)) return;
          this.abandoned.set(held, this.watch?.scheduler.now() ?? 0);
          this.watchStall();
        },
      },
    );
    this.watchStall();
    return held;
  }

  /**
   * `take()` (a queue's `get()`: one key, or none) once there is room, holding it until the key is handed on (then
   * `started()` holds it) or the wait ends without one (unsubscribed, or `take()` completed empty).
   */
  whenRoom<K>(take: () => Observable<K>): Observable<K> {
    return new Observable<K>((subscriber) => {
      let holding = false;
      let waiter: (() => void) | undefined;
      let inner: { unsubscribe(): void } | undefined;
      // A slot let go of while `wake()` runs the waiting ones (an earlier one's work closed it): it takes no room.
      let closed = false;
      /** Gives the reservation up; `wake: false` when it passes to the reconcile the key starts (no room freed). */
      const release = (wake = true) => {
        if (!holding) return;
        holding = false;
        this.reserved--;
        if (!wake) return; // the reconcile's `started()` follows at once, and watches
        this.wake();
        this.watchStall();
      };
      const enter = () => {
        waiter = undefined;
        if (closed) return;
        if (this.running + this.reserved >= this.size) {
          this.waiting.push((waiter = enter));
          return;
        }
        holding = true;
        this.reserved++;
        inner = take().subscribe({
          next: (key) => {
            // The reservation becomes the reconcile: `started()` follows synchronously as the slot runs the key.
            release(false);
            subscriber.next(key);
          },
          error: (error: unknown) => {
            release();
            subscriber.error(error);
          },
          complete: () => {
            release();
            subscriber.complete();
          },
        });
      };
      enter();
      this.watchStall();
      return () => {
        closed = true;
        const at = waiter === undefined ? -1 : this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        inner?.unsubscribe();
        release();
        this.watchStall();
      };
    });
  }

  /**
   * A slot waits for room it would have but for the abandoned reconciles: from then on, {@link ABANDONED_ROOM_REPORT_MS}
   * later it is reported (once); when no slot waits so any more, the watch starts over.
   */
  private watchStall(): void {
    if (!this.starved()) {
      this.stall?.timer.unsubscribe();
      this.stall = undefined;
      return;
    }
    const watch = this.watch;
    if (this.stall || !watch) return;
    const since = watch.scheduler.now();
    const timer = watch.scheduler.schedule(() => {
      if (!this.starved()) return; // every change is watched; this only guards the report
      const now = watch.scheduler.now();
      const oldest = Math.min(...this.abandoned.values());
      watch.report({ abandoned: this.abandoned.size, abandonedForMs: Math.max(0, now - oldest), waitedMs: Math.max(0, now - since) });
    }, ABANDONED_ROOM_REPORT_MS);
    this.stall = { since, timer };
  }

  /** A slot waits for room it would have but for the abandoned reconciles. */
  private starved(): boolean {
    return this.waiting.length > 0 && this.abandoned.size > 0 && this.running - this.abandoned.size + this.reserved < this.size;
  }

  /** Room was freed: the slots waiting for it try again, in order (those that find none wait again). */
  private wake(): void {
    if (this.waiting.length === 0 || this.running + this.reserved >= this.size) return;
    const waiting = this.waiting.splice(0);
    for (const enter of waiting) enter();
  }
}
