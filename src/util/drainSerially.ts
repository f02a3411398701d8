import { from, type ObservableInput, type Subscriber, type Subscription } from 'rxjs';

/** The loop of {@link drainSerially}. */
export interface SerialDrain {
  /** Runs items from the backlog until it is empty or an item's work is still running. */
  pump(): void;
  /** The source completed: the subscriber completes once the backlog is empty and no work runs. */
  end(): void;
  /** Ends the work running now (the operator's teardown). */
  unsubscribe(): void;
}

/**
 * The pump both backlog operators share (`processDeltas`, `handleEvents`):
 * takes the next item off a backlog (`next`) and runs its work (`run`), one
 * item at a time. Work that is done at once (`run` returns undefined, or an
 * input that completes synchronously) lets the loop go on; work still running
 * holds the loop until it completes. The work's values and error go to
 * `subscriber`. A subscriber that left (during a value, say) gets no further
 * `run`.
 */
export function drainSerially<I, R>(
  subscriber: Subscriber<R>,
  next: () => I | undefined,
  run: (item: I) => ObservableInput<R> | undefined,
): SerialDrain {
  let busy: Subscription | undefined;
  let waiting = false;
  let ended = false;

  const pump = (): void => {
    while (!waiting && !subscriber.closed) {
      const item = next();
      if (item === undefined) {
        if (ended) subscriber.complete();
        return;
      }
      const work = run(item);
      if (work === undefined) continue;
      waiting = true;
      let synchronous = true;
      const running = from(work).subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          waiting = false;
          busy = undefined;
          // Finished later: carry on from here. Finished at once: the loop carries on.
          if (!synchronous) pump();
        },
      });
      synchronous = false;
      // Teardown ran while the work was subscribing: it could not see it, so end it here.
      if (subscriber.closed) running.unsubscribe();
      else if (waiting) busy = running;
    }
  };

  return {
    pump,
    end: () => {
      ended = true;
      if (!waiting) pump();
    },
    unsubscribe: () => busy?.unsubscribe(),
  };
}
