/**
 * How a dynamic factory runs its discovery rounds, given when it wants one (`triggers$`: now, the CRD watch listed, the
 * debounced CRD changes and 404s of `discoveryTriggers`) and what one round is.
 *
 * A round in flight is never cancelled: a trigger that comes during it runs one more round once it ends (however many
 * came meanwhile: the next round reads what all of them changed). Cancelling the round in flight (`switchMap`, as
 * before) starved discovery: with rounds longer than the debounce's longest wait (hundreds of group versions, or one
 * aggregated API that does not answer until the 30 s request timeout), CRDs changing every second meant no round ever
 * finished, and nothing installed meanwhile started. Now a change waits at most the round in flight, plus its own.
 *
 * After a round with faults another runs by itself after `retryInMs` (see `discoveryRetryStep`), asked of the last
 * outcome of a round that ends with no trigger waiting (one waiting runs at once, and its own outcome decides: the
 * backoff steps once per fault the factory is left with, not per round a change superseded); a trigger meanwhile
 * takes the retry's place.
 */
import { Observable, Subscription, timer, type SchedulerLike } from 'rxjs';

/**
 * @param triggers$ when a round is wanted
 * @param round one discovery round: emits its outcome(s), then completes; never cancelled by a trigger
 * @param retryInMs after a round with no trigger waiting, from its last outcome: when to run another by itself (undefined: not)
 * @return every outcome, in the order the rounds ran (one round at a time)
 */
export function discoveryRounds<R>(
  triggers$: Observable<unknown>,
  round: () => Observable<R>,
  retryInMs: (outcome: R) => number | undefined,
  scheduler: SchedulerLike,
): Observable<R> {
  return new Observable<R>((subscriber) => {
    let busy = false;
    let pending = false;
    let retry: Subscription | undefined;
    let current: Subscription | undefined;
    const run = (): void => {
      // A loop, not recursion: rounds that complete at once (in tests) must not take the stack one level deeper each.
      while (pending && !busy && !subscriber.closed) {
        pending = false;
        busy = true;
        retry?.unsubscribe();
        retry = undefined;
        let inLoop = true;
        let last: { readonly outcome: R } | undefined;
        current = round().subscribe({
          next: (outcome) => {
            last = { outcome };
            subscriber.next(outcome);
          },
          error: (error: unknown) => subscriber.error(error),
          complete: () => {
            busy = false;
            // A round already wanted runs now and decides the retry itself: this one's fault does not step the backoff.
            const inMs = pending || !last ? undefined : retryInMs(last.outcome);
            if (inMs !== undefined) retry = timer(inMs, scheduler).subscribe(trigger);
            if (!inLoop) run();
          },
        });
        inLoop = false;
      }
    };
    const trigger = (): void => {
      pending = true;
      run();
    };
    const triggers = triggers$.subscribe({ next: trigger, error: (error: unknown) => subscriber.error(error) });
    return () => {
      triggers.unsubscribe();
      current?.unsubscribe();
      retry?.unsubscribe();
    };
  });
}
