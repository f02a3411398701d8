import { Observable } from 'rxjs';

/**
 * The promises a run of an item holds it by. A promise cannot be cancelled: a worker that returned one (or held one
 * it started, inside an Observable: `defer(async …)`, `from(api.patch(…))`) and was then unsubscribed runs on until it
 * settles, so its item must stay in flight until then, or a second run of it would start beside the first (client-go's
 * queue never hands out an item still processing; its workers are never cut short). One home for that rule:
 * `processItems` waits for a run's holds before it tells the queue the item is done; `controller()` uses the same
 * count for the room an abandoned reconcile keeps.
 */
export class Holds {
  private pending = 0;
  private after: (() => void)[] = [];

  /**
   * Holds until `value` settles if it is a promise (any thenable), and returns it as it is, so that
   * `from(hold(call()))` reads naturally whatever `call()` returns. A rejection stays the caller's to handle: this
   * only waits for it.
   */
  hold<V>(value: V): V {
    if (!isPromiseLike(value)) return value;
    const promise = value;
    this.pending += 1;
    const settled = (): void => {
      this.pending -= 1;
      if (this.pending > 0) return;
      const after = this.after;
      this.after = [];
      for (const then of after) then();
    };
    Promise.resolve(promise).then(settled, settled);
    return value;
  }

  /** Runs `then` now if nothing is held, else once every held promise has settled. */
  afterSettled(then: () => void): void {
    if (this.pending === 0) then();
    else this.after.push(then);
  }
}

/** Whether a worker's result is a promise (or any thenable): what a run holds by itself. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}

/**
 * What a worker is given besides its item: holds a promise it starts (anything else passes through), so that its
 * item stays in flight until it settles; returns it as it is.
 */
export type Hold = <V>(value: V) => V;

/**
 * An async iterable's values, each step held: an `async function*` worker's body runs between its `yield`s on promises
 * that cannot be cancelled, as an `async function`'s does, so its item must stay in flight while a step runs (rxjs's
 * `from()` holds none: a second run started beside an abandoned one, audit38). Unsubscribed, the iterator is asked to
 * return (held too: its `finally` blocks run once its current step ends); an error after that has nobody to go to, as
 * an abandoned promise's.
 */
export function heldIteration<T>(iterable: AsyncIterable<T>, hold: Hold): Observable<T> {
  return new Observable<T>((subscriber) => {
    const iterator = iterable[Symbol.asyncIterator]();
    let over = false;
    const step = (): void => {
      hold(iterator.next()).then(
        (result) => {
          if (over) return;
          if (result.done === true) {
            over = true;
            subscriber.complete();
            return;
          }
          subscriber.next(result.value);
          if (!over) step();
        },
        (error: unknown) => {
          if (over) return;
          over = true;
          subscriber.error(error);
        },
      );
    };
    step();
    return () => {
      if (over) return;
      over = true;
      if (typeof iterator.return === 'function') hold(iterator.return()).then(undefined, () => undefined);
    };
  });
}
