import type { Subscription } from 'rxjs';
import { scheduleAfter } from '../util/scheduleAfter.ts';
import { DeadlineHeap } from './deadlineHeap.ts';
import { checkPriority, DEFAULT_PRIORITY, WORK_QUEUE_OPTION_NAMES, WorkQueue, type WorkQueueOptions } from './workQueue.ts';
import { checkOptionNames } from '../util/optionNames.ts';

/**
 * A {@link WorkQueue} with `addAfter`. Pending items sit in a min-heap keyed by ready time,
 * and a single scheduled action is armed for the earliest deadline.
 */
export class DelayingWorkQueue<K> extends WorkQueue<K> {
  private readonly waiting = new DeadlineHeap<K>();
  private timer: Subscription | undefined;
  private timerAt = Number.NaN;
  private timerToken: object | undefined;
  private paused = false;

  /**
   * Adds the item once `delayMs` has passed on the queue's scheduler. A delay `<= 0` (or NaN)
   * adds now, but for an item in flight: that one waits for a zero-delay action of the scheduler (a macrotask with
   * the default one), so that a worker whose rate limiter says 0 (`qps: Infinity`, a base delay of 0) cannot take its
   * item again and again within one task, starving every timer and I/O callback. If the item is already waiting,
   * the earlier ready time and the higher priority win. `Infinity` waits for ever (no timer: until `shutDown`, which
   * drops it); `controller()` never passes one (its rate limiters' non-finite delays are reported, guard.ts).
   * When the time comes it is `add`ed at that priority (a delayed add does not touch a copy of the
   * item that is queued meanwhile until then). Counts a retry. Ignored after shutdown; shutting
   * down drops the timer and every waiting item whose time has not come (those due are queued: `onShutDown`).
   *
   * ```
   * addAfter('a', 5) at 0, addAfter('a', 2) at 1, addAfter('a', 9) at 2
   * queue: ---a------        (once, at frame 3)
   * ```
   *
   * @throws WorkQueueError `InvalidArgument` unless `priority` is a finite number.
   */
  addAfter(item: K, delayMs: number, priority: number = DEFAULT_PRIORITY): void {
    checkPriority(priority);
    if (this.shuttingDown) return;
    this.recordRetry(item);
    const delay = delayMs > 0 ? delayMs : 0;
    if (delay === 0 && !this.inFlight(item)) {
      this.add(item, priority);
      return;
    }
    this.waiting.upsert(item, this.scheduler.now() + delay, priority);
    this.arm();
  }

  /**
   * Holds the delayed items without a timer: they stay waiting, and no scheduled action is left armed
   * (so a process with nothing else to do can exit). `addAfter` meanwhile only records the item. Used by
   * `controller()` while nobody subscribes to its outcomes. Undone by {@link resumeDelays}.
   */
  pauseDelays(): void {
    this.paused = true;
    this.cancelTimer();
  }

  /** Arms the timer again for the earliest waiting item; an item whose time passed while paused is added now. */
  resumeDelays(): void {
    if (!this.paused) return;
    this.paused = false;
    this.flushReady();
  }

  /**
   * Drops the waiting items and the timer; an item whose time has come is queued first, as `add()` (client-go's
   * `AddAfter(item, 0)`) would have: a zero-delay re-add of an item in flight waits for its scheduler action (above), and
   * a shut-down meanwhile must not lose it: `done` queues it again and `get()` drains it (audit38).
   */
  protected override onShutDown(): void {
    const now = this.scheduler.now();
    for (let next = this.waiting.peek(); next !== undefined && next.readyAt <= now; next = this.waiting.peek()) {
      this.waiting.pop();
      this.add(next.item, next.priority);
    }
    this.cancelTimer();
    this.waiting.clear();
  }

  protected override delayedCount(): number {
    return this.waiting.size;
  }

  /** Keeps exactly one scheduled action, for the earliest deadline (none if nothing waits). */
  private arm(): void {
    const next = this.waiting.peek();
    if (this.paused || next === undefined || !Number.isFinite(next.readyAt)) {
      this.cancelTimer();
      return;
    }
    if (this.timerToken !== undefined && this.timerAt === next.readyAt) return;
    this.cancelTimer();
    const token = {};
    this.timerToken = token;
    this.timerAt = next.readyAt;
    const subscription = scheduleAfter(
      this.scheduler,
      () => {
        if (this.timerToken !== token) return;
        this.timerToken = undefined;
        this.timer = undefined;
        this.flushReady();
      },
      next.readyAt - this.scheduler.now(),
    );
    if (this.timerToken === token) this.timer = subscription;
  }

  /**
   * Adds the items whose time has come. Taken out of the heap first, then added: an add may run a synchronous worker
   * that delays its item again by 0, and that add must wait for the next action, not be flushed by this loop.
   */
  private flushReady(): void {
    const now = this.scheduler.now();
    const ready: { readonly item: K; readonly priority: number }[] = [];
    for (let next = this.waiting.peek(); next !== undefined && next.readyAt <= now; next = this.waiting.peek()) {
      this.waiting.pop();
      ready.push(next);
    }
    for (const { item, priority } of ready) this.add(item, priority);
    this.arm();
  }

  private cancelTimer(): void {
    this.timerToken = undefined;
    this.timerAt = Number.NaN;
    const timer = this.timer;
    this.timer = undefined;
    timer?.unsubscribe();
  }
}

/** Creates a {@link DelayingWorkQueue}. */
export function createDelayingQueue<K>(options: WorkQueueOptions = {}): DelayingWorkQueue<K> {
  checkOptionNames('createDelayingQueue', options, WORK_QUEUE_OPTION_NAMES);
  return new DelayingWorkQueue<K>(options);
}
