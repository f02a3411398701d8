import type { Subscription } from 'rxjs';
import { scheduleAfter } from '../util/scheduleAfter.ts';
import { DeadlineHeap } from './deadlineHeap.ts';
import { checkPriority, DEFAULT_PRIORITY, WorkQueue, type WorkQueueOptions } from './workQueue.ts';

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
   * adds now. If the item is already waiting, the earlier ready time and the higher priority win.
   * When the time comes it is `add`ed at that priority (a delayed add does not touch a copy of the
   * item that is queued meanwhile until then). Counts a retry. Ignored after shutdown; shutting
   * down drops every waiting item and the timer.
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
    if (!(delayMs > 0)) {
      this.add(item, priority);
      return;
    }
    this.waiting.upsert(item, this.scheduler.now() + delayMs, priority);
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

  protected override onShutDown(): void {
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

  private flushReady(): void {
    const now = this.scheduler.now();
    for (let next = this.waiting.peek(); next !== undefined && next.readyAt <= now; next = this.waiting.peek()) {
      this.waiting.pop();
      this.add(next.item, next.priority);
    }
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
  return new DelayingWorkQueue<K>(options);
}
