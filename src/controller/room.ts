import { Observable } from 'rxjs';

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

  constructor(size: number) {
    this.size = size;
  }

  /** `activeWorkers`: reconciles running, abandoned ones still settling included. */
  get active(): number {
    return this.running;
  }

  /** A reconcile starts (its slot's reservation becomes it); the function returned ends it, once. */
  started(): () => void {
    this.running++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.running--;
      this.wake();
    };
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
      /** Gives the reservation up; `wake: false` when it passes to the reconcile the key starts (no room freed). */
      const release = (wake = true) => {
        if (!holding) return;
        holding = false;
        this.reserved--;
        if (wake) this.wake();
      };
      const enter = () => {
        waiter = undefined;
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
      return () => {
        const at = waiter === undefined ? -1 : this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        inner?.unsubscribe();
        release();
      };
    });
  }

  /** Room was freed: the slots waiting for it try again, in order (those that find none wait again). */
  private wake(): void {
    if (this.waiting.length === 0 || this.running + this.reserved >= this.size) return;
    const waiting = this.waiting.splice(0);
    for (const enter of waiting) enter();
  }
}
