import { defer, finalize, Observable, Subscription, type ObservableInput, type Subscriber } from 'rxjs';
import { WorkQueueError } from './errors.ts';
import { Holds, heldIteration, type Hold } from './holds.ts';
import { isAsyncIterable } from '../util/isWork.ts';
import {
  initialSlots,
  runStep,
  slotStep,
  startRun,
  type RunEffect,
  type RunInput,
  type SlotInput,
  type SlotState,
  type WorkEvent,
} from './processItemsStep.ts';

export type { WorkEvent } from './processItemsStep.ts';
export type { Hold } from './holds.ts';

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
 * completed or errored and finalized (right after emitting the `done`/`error` event), and the promises the run holds
 * have settled: the one the worker returned, and any it gave `hold` (a promise it started inside an Observable). The
 * queue never hands out an item that is still in flight, so an item never runs concurrently with itself, not even
 * after an unsubscribe cut a run whose promise runs on.
 *
 * Worker failures are data (`{ type: 'error', error: { reason: 'WorkerFailed', cause } }`);
 * the stream itself never errors. It completes when the queue is shut down and drained.
 * Unsubscribing cancels in-flight workers (tears them down first) and re-adds their items at the priority they were
 * taken at (ignored after shutdown), then marks them done once their holds have settled, so no work is lost. (The rules are two
 * pure machines, `slotStep` and `runStep` in processItemsStep.ts; this function is their shell.)
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
  worker: (item: K, hold: Hold) => ObservableInput<R>,
  concurrency = 1,
): Observable<WorkEvent<K, R>> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new WorkQueueError('InvalidArgument', `concurrency must be a positive integer, got ${concurrency}`);
  }
  return new Observable<WorkEvent<K, R>>((subscriber) => {
    const slots = new Slots(queue, worker, concurrency, subscriber);
    slots.pump();
    return () => slots.close();
  });
}

/** One subscription's slots: the shell of {@link slotStep} and {@link runStep}, carrying out their effects. */
class Slots<K, R> {
  private readonly queue: WorkSource<K>;
  private readonly worker: (item: K, hold: Hold) => ObservableInput<R>;
  private readonly concurrency: number;
  private readonly subscriber: Subscriber<WorkEvent<K, R>>;
  /** Slots waiting on `queue.get()`. */
  private readonly getting = new Set<Subscription>();
  /** Slots running a worker. */
  private readonly working = new Set<Subscription>();
  private state: SlotState;
  private pumping = false;

  constructor(
    queue: WorkSource<K>,
    worker: (item: K, hold: Hold) => ObservableInput<R>,
    concurrency: number,
    subscriber: Subscriber<WorkEvent<K, R>>,
  ) {
    this.queue = queue;
    this.worker = worker;
    this.concurrency = concurrency;
    this.subscriber = subscriber;
    this.state = initialSlots(concurrency);
  }

  /**
   * Fills the free slots. Iterative, so that synchronous workers do not grow the stack: a slot
   * released meanwhile is taken by this loop.
   */
  pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.subscriber.closed && this.step({ type: 'pump' }) > 0);
    } finally {
      this.pumping = false;
    }
  }

  /** Unsubscribed: stops waiting first, so that items released below are not handed back to this closing stream. */
  close(): void {
    for (const slot of [...this.getting]) slot.unsubscribe();
    this.getting.clear();
    for (const slot of [...this.working]) slot.unsubscribe();
    this.working.clear();
  }

  /** Steps the slots and carries out the effects; returns how many there were. */
  private step(input: SlotInput): number {
    const step = slotStep(this.state, input, this.concurrency);
    this.state = step.state;
    for (const effect of step.effects) {
      switch (effect.type) {
        case 'take':
          this.take();
          break;
        case 'pump':
          this.pump();
          break;
        case 'complete':
          this.subscriber.complete();
          break;
      }
    }
    return step.effects.length;
  }

  private take(): void {
    const slot = new Subscription();
    let taken = false;
    this.getting.add(slot);
    slot.add(
      this.queue.get().subscribe({
        next: (item) => {
          taken = true;
          this.getting.delete(slot);
          this.run(item);
        },
        complete: () => {
          if (taken) return;
          this.getting.delete(slot);
          this.step({ type: 'empty' });
        },
      }),
    );
  }

  private run(item: K): void {
    const slot = new Subscription();
    const holds = new Holds();
    const hold: Hold = (promise) => holds.hold(promise);
    let run = startRun(item, this.queue.priorityOf?.(item));
    const step = (input: RunInput<R>): void => {
      const next = runStep<K, R>(run, input);
      run = next.run;
      for (const effect of next.effects) this.carryOut(slot, holds, effect);
    };
    this.working.add(slot);
    slot.add(
      defer(() => {
        const result = this.worker(item, hold);
        return isAsyncIterable(result) ? heldIteration(result, hold) : hold(result);
      })
        .pipe(finalize(() => step({ type: 'settled' })))
        .subscribe({
          next: (value) => step({ type: 'value', value }),
          error: (cause: unknown) => step({ type: 'errored', cause }),
          complete: () => step({ type: 'completed' }),
        }),
    );
    // After the worker's teardown: the item is given back only once this run is torn down, not while it still runs.
    slot.add(() => step({ type: 'cancelled' }));
  }

  private carryOut(slot: Subscription, holds: Holds, effect: RunEffect<K, R>): void {
    switch (effect.type) {
      case 'emit':
        // Finished work: an unsubscribe from inside next() must not cancel it.
        if (effect.event.type !== 'value') this.working.delete(slot);
        return this.subscriber.next(effect.event);
      case 'add':
        return this.queue.add(effect.item, effect.priority);
      case 'done':
        // A promise cannot be cancelled: until the run's held ones settle, the item stays in flight.
        return holds.afterSettled(() => this.queue.done(effect.item));
      case 'release':
        this.step({ type: 'released' });
        return;
    }
  }
}
