import { defer, finalize, Observable, Subscription, type ObservableInput } from 'rxjs';
import { WorkQueueError, type WorkerFailed } from './errors.ts';

/** What `process` reports, per item. Exactly one `done` or `error` ends each run of an item. */
export type WorkEvent<K, R> =
  | { readonly type: 'value'; readonly item: K; readonly value: R }
  | { readonly type: 'done'; readonly item: K }
  | { readonly type: 'error'; readonly item: K; readonly error: WorkerFailed };

/** The calls `processItems` needs from a queue. */
export interface WorkSource<K> {
  get(): Observable<K>;
  add(item: K, priority?: number): void;
  done(item: K): void;
  /** The priority an item in flight was taken at, so that a cancelled run is queued again at it. */
  priorityOf?(item: K): number | undefined;
}

/**
 * Runs `worker` on items taken from `queue`, at most `concurrency` at a time. A slot takes an
 * item only when it is free, and calls `queue.done(item)` once the worker's Observable has
 * completed or errored and finalized (right after emitting the `done`/`error` event). The queue never hands
 * out an item that is still in flight, so an item never runs concurrently with itself.
 *
 * Worker failures are data (`{ type: 'error', error: { reason: 'WorkerFailed', cause } }`);
 * the stream itself never errors. It completes when the queue is shut down and drained.
 * Unsubscribing cancels in-flight workers and re-adds their items at the priority they were
 * taken at (ignored after shutdown), then marks them done, so no work is lost.
 *
 * ```
 * queue:       a-b-c----------      (each worker takes 4 frames, concurrency 2)
 * process(w):  ----A-B---C------    (A = { type: 'done', item: 'a' }, ...)
 * ```
 *
 * @throws WorkQueueError `InvalidArgument` if `concurrency` is not a positive integer.
 */
export function processItems<K, R>(
  queue: WorkSource<K>,
  worker: (item: K) => ObservableInput<R>,
  concurrency = 1,
): Observable<WorkEvent<K, R>> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new WorkQueueError('InvalidArgument', `concurrency must be a positive integer, got ${concurrency}`);
  }
  return new Observable<WorkEvent<K, R>>((subscriber) => {
    const getting = new Set<Subscription>();
    const working = new Set<Subscription>();
    let free = concurrency;
    let ended = 0;
    let pumping = false;

    const run = (item: K): void => {
      const slot = new Subscription();
      let held = true;
      const priority = queue.priorityOf?.(item);
      working.add(slot);
      // Teardown while in flight: the work is abandoned, so queue the item again.
      slot.add(() => {
        if (!held) return;
        held = false;
        queue.add(item, priority);
        queue.done(item);
      });
      let outcome: WorkEvent<K, R> | undefined;
      // Settle only after the worker's own teardown (e.g. its finalize) has run, so a re-added
      // item cannot start again while the previous run is still cleaning up.
      const settle = (): void => {
        if (outcome === undefined) return; // cancelled: the slot teardown above re-queues
        working.delete(slot); // finished work: an unsubscribe from inside next() must not re-queue it
        subscriber.next(outcome);
        if (held) {
          held = false;
          queue.done(item);
        }
        free += 1;
        pump();
      };
      slot.add(
        defer(() => worker(item))
          .pipe(finalize(settle))
          .subscribe({
            next: (value) => subscriber.next({ type: 'value', item, value }),
            error: (cause: unknown) => {
              outcome = { type: 'error', item, error: { reason: 'WorkerFailed', cause } };
            },
            complete: () => {
              outcome = { type: 'done', item };
            },
          }),
      );
    };

    const take = (): void => {
      const slot = new Subscription();
      let taken = false;
      getting.add(slot);
      slot.add(
        queue.get().subscribe({
          next: (item) => {
            taken = true;
            getting.delete(slot);
            run(item);
          },
          complete: () => {
            if (taken) return;
            getting.delete(slot);
            ended += 1;
            if (ended === concurrency) subscriber.complete();
          },
        }),
      );
    };

    // Iterative so that synchronous workers do not grow the stack.
    const pump = (): void => {
      if (pumping) return;
      pumping = true;
      try {
        while (free > 0 && !subscriber.closed) {
          free -= 1;
          take();
        }
      } finally {
        pumping = false;
      }
    };

    pump();

    return () => {
      // Stop waiting first, so items released below are not handed back to this closing stream.
      for (const slot of [...getting]) slot.unsubscribe();
      getting.clear();
      for (const slot of [...working]) slot.unsubscribe();
      working.clear();
    };
  });
}
