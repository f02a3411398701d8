import { asyncScheduler, Observable, type ObservableInput, type SchedulerLike, type Subscriber } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import { checkOptionNames } from '../util/optionNames.ts';
import { WorkQueueError } from './errors.ts';
import { MetricsRecorder, type WorkQueueMetricEvent, type WorkQueueMetrics } from './metrics.ts';
import { PriorityHeap } from './priorityHeap.ts';
import { processItems, type Hold, type WorkEvent } from './processItems.ts';

/** The priority of an add that names none. */
export const DEFAULT_PRIORITY = 0;
/**
 * The priority `controller()` gives keys from initial-list and resync events (controller-runtime's
 * `handler.LowPriority`): below the default, with room for priorities of your own in between.
 */
export const LOW_PRIORITY = -100;

/** @throws WorkQueueError `InvalidArgument` unless `priority` is a finite number. */
export function checkPriority(priority: number): number {
  if (typeof priority !== 'number' || !Number.isFinite(priority)) {
    throw new WorkQueueError('InvalidArgument', `priority must be a finite number, got ${String(priority)}`);
  }
  return priority;
}

export interface WorkQueueOptions {
  /** Label for metrics (client-go's `Name`). Default `''`. */
  readonly name?: string;
  /** Clock and timers for metrics and delays. Default `monotonicScheduler` (`asyncScheduler`'s timers, a monotonic clock: src/util/monotonicNow.ts). */
  readonly scheduler?: SchedulerLike;
}

/** Every option of a work queue, from its type (a new one is an error here until listed). */
export const WORK_QUEUE_OPTION_NAMES: readonly string[] = Object.keys({ name: true, scheduler: true } satisfies Record<
  keyof WorkQueueOptions,
  true
>);

/** Sizes of every per-item structure, for diagnostics and leak tests. */
export interface WorkQueueSizes {
  /** Items ready for `get` (client-go `Len()`). */
  readonly queued: number;
  readonly dirty: number;
  readonly processing: number;
  /** Items waiting in `addAfter`'s heap. */
  readonly delayed: number;
  /** Pending `get()` subscriptions. */
  readonly waitingGets: number;
  /** Per-item timestamps held for metrics. */
  readonly metricsEntries: number;
}

/**
 * A work queue with client-go semantics. Items are compared with SameValueZero
 * (use string keys, as controllers do).
 *
 * - an item is queued at most once (dirty set);
 * - an item added while it is being processed is queued again only on `done(item)`,
 *   so it never runs concurrently with itself;
 * - items come out highest priority first (default {@link DEFAULT_PRIORITY}), FIFO within a priority;
 *   adding a queued item again at a higher priority moves it there (behind the items already
 *   there), a lower one changes nothing;
 * - after `shutDown()` adds are ignored, `get()` still drains what is queued, then completes empty.
 */
export class WorkQueue<K> {
  readonly name: string;
  /** Metric observations, emitted synchronously; never completes. */
  readonly metrics$: Observable<WorkQueueMetricEvent<K>>;
  protected readonly scheduler: SchedulerLike;
  private readonly recorder: MetricsRecorder<K>;
  private readonly ready = new PriorityHeap<K>();
  /** Items added and not yet taken (ready, or waiting for their run to end), with their priority. */
  private readonly dirty = new Map<K, number>();
  /** Items being processed, with the priority they were taken at. */
  private readonly processing = new Map<K, number>();
  private readonly waiters = new Set<Subscriber<K>>();
  private readonly drainListeners = new Set<() => void>();
  private isShuttingDown = false;
  private drain = false;
  private dispatching = false;

  constructor(options: WorkQueueOptions = {}) {
    this.name = options.name ?? '';
    this.scheduler = options.scheduler ?? monotonicScheduler;
    this.recorder = new MetricsRecorder<K>(this.name, this.scheduler);
    this.metrics$ = this.recorder.events$;
  }

  /** Items ready to be taken (client-go `Len()`): excludes in-flight and delayed items. */
  get length(): number {
    return this.ready.length;
  }

  get shuttingDown(): boolean {
    return this.isShuttingDown;
  }

  /**
   * Marks the item as needing processing, at `priority` (higher first; default 0). If it is
   * already queued, it keeps the higher of the two priorities: raised, it moves behind the items
   * already queued at its new priority. No-op after shutdown. O(log n).
   *
   * ```
   * add a@-100, b@-100, c@0, then b@0:
   * get(): c b a
   * ```
   *
   * @throws WorkQueueError `InvalidArgument` unless `priority` is a finite number.
   */
  add(item: K, priority: number = DEFAULT_PRIORITY): void {
    checkPriority(priority);
    if (this.isShuttingDown) return;
    const queuedAt = this.dirty.get(item);
    if (queuedAt !== undefined) {
      if (priority > queuedAt) {
        this.dirty.set(item, priority);
        this.ready.raise(item, priority); // no-op while the item is in flight: it is queued at `done`
        this.recorder.raise(item, queuedAt, priority);
      }
      return;
    }
    this.dirty.set(item, priority);
    const inFlight = this.processing.has(item);
    if (!inFlight) this.ready.push(item, priority);
    this.recorder.add(item, this.dirty.size, priority);
    if (!inFlight) this.dispatch();
  }

  /**
   * The priority the item is queued at; for an item in flight and not added again, the priority
   * it was taken at (what `controller()` requeues a failed key with). `undefined` otherwise.
   */
  priorityOf(item: K): number | undefined {
    return this.dirty.get(item) ?? this.processing.get(item);
  }

  /**
   * Takes the next item (it is then "processing" until `done(item)`). Cold: the item is
   * taken on subscribe, or as soon as one is added; unsubscribing before that takes nothing.
   * Completes without a value once the queue is shut down and empty.
   *
   * ```
   * add:   -----a-----
   * get(): ^----(a|)
   *
   * shutDown, queue empty:
   *        --S--
   * get(): ^-|
   * ```
   */
  get(): Observable<K> {
    return new Observable<K>((subscriber) => {
      this.waiters.add(subscriber);
      this.dispatch();
      return () => {
        this.waiters.delete(subscriber);
      };
    });
  }

  /**
   * Marks the item finished. If it was added again meanwhile it is queued now, at the highest
   * priority it was added at, behind the items already queued at that priority.
   * Ignored for an item that is not being processed (client-go would duplicate it).
   */
  done(item: K): void {
    if (!this.processing.delete(item)) return;
    const priority = this.dirty.get(item);
    const requeue = priority !== undefined;
    if (requeue) this.ready.push(item, priority);
    this.recorder.done(item);
    if (requeue) this.dispatch();
    if (this.processing.size === 0) this.notifyDrain();
  }

  /** Stops accepting adds; pending `get()`s complete once the queue is empty. Idempotent. */
  shutDown(): void {
    this.drain = false;
    this.beginShutDown();
    this.notifyDrain();
  }

  /**
   * Shuts down now and returns an Observable that emits once and completes when no item is
   * being processed any more (queued items still drain through `get()` but are not waited for).
   * A later plain `shutDown()` stops the waiting, as in client-go.
   *
   * ```
   * in flight: a===|  b=======|
   * call:      --D------------
   * result:    ^----------(x|)    (x = undefined, when b is done)
   * ```
   */
  shutDownWithDrain(): Observable<void> {
    this.drain = true;
    this.beginShutDown();
    return new Observable<void>((subscriber) => {
      const check = (): boolean => {
        if (this.drain && this.processing.size > 0) return false;
        subscriber.next();
        subscriber.complete();
        return true;
      };
      if (check()) return undefined;
      const listener = (): void => {
        if (check()) this.drainListeners.delete(listener);
      };
      this.drainListeners.add(listener);
      return () => {
        this.drainListeners.delete(listener);
      };
    });
  }

  /**
   * Runs `worker` on queued items with up to `concurrency` at a time; see {@link processItems}.
   */
  process<R>(worker: (item: K, hold: Hold) => ObservableInput<R>, concurrency = 1): Observable<WorkEvent<K, R>> {
    return processItems(this, worker, concurrency);
  }

  /** Current metric values (see `WORKQUEUE_METRIC_NAMES`). */
  metrics(): WorkQueueMetrics {
    return this.recorder.snapshot(this.dirty.size);
  }

  /** Sizes of the internal per-item structures (diagnostics). */
  sizes(): WorkQueueSizes {
    return {
      queued: this.ready.length,
      dirty: this.dirty.size,
      processing: this.processing.size,
      delayed: this.delayedCount(),
      waitingGets: this.waiters.size,
      metricsEntries: this.recorder.trackedItems,
    };
  }

  /** Whether the item is being processed (taken and not yet `done`). */
  protected inFlight(item: K): boolean {
    return this.processing.has(item);
  }

  /** Counts a retry (client-go counts every delayed add). */
  protected recordRetry(item: K): void {
    this.recorder.retry(item);
  }

  /** Called once, when the queue starts shutting down, before adds are refused. */
  protected onShutDown(): void {}

  protected delayedCount(): number {
    return 0;
  }

  private beginShutDown(): void {
    if (!this.isShuttingDown) {
      this.onShutDown(); // before the flag: it may still queue what is due (delayingQueue.ts)
      this.isShuttingDown = true;
    }
    this.dispatch();
  }

  /** Hands queued items to waiting getters in order. Re-entrant calls fold into the running loop. */
  private dispatch(): void {
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      for (;;) {
        const next = this.waiters.values().next();
        if (next.done === true) return;
        const waiter = next.value;
        if (this.ready.length > 0) {
          this.waiters.delete(waiter);
          const { item, priority } = this.ready.pop();
          this.dirty.delete(item);
          this.processing.set(item, priority);
          this.recorder.get(item, this.dirty.size, priority);
          waiter.next(item);
          waiter.complete();
        } else if (this.isShuttingDown) {
          this.waiters.delete(waiter);
          waiter.complete();
        } else {
          return;
        }
      }
    } finally {
      this.dispatching = false;
    }
  }

  private notifyDrain(): void {
    for (const listener of [...this.drainListeners]) listener();
  }
}

/** Creates a plain {@link WorkQueue}. */
export function createWorkQueue<K>(options: WorkQueueOptions = {}): WorkQueue<K> {
  checkOptionNames('createWorkQueue', options, WORK_QUEUE_OPTION_NAMES);
  return new WorkQueue<K>(options);
}
