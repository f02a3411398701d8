/**
 * The informer's clock in the conformance harness: real time plus jumps the
 * harness makes. Backoff, Retry-After and the other short waits run in real
 * time; the watch stall rule runs at its default margin (30 s), so it never
 * fires by itself in a run however slow the machine is, and fires at once
 * when the harness sees, in the emulator's request log, that the informer's
 * watch is stalled and moves the clock past the margin. No wall-clock margin
 * decides whether a watch counts as stalled.
 */
import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';

/** What the clock keeps of a scheduled action. */
interface Armed {
  due: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  run(): void;
}

class ClockAction<T> extends Subscription implements SchedulerAction<T>, Armed {
  due = 0;
  timer: ReturnType<typeof setTimeout> | undefined;
  private state: T | undefined;
  private rescheduled = false;
  private readonly clock: HarnessClock;
  private readonly work: (this: SchedulerAction<T>, state?: T) => void;

  constructor(clock: HarnessClock, work: (this: SchedulerAction<T>, state?: T) => void) {
    super(() => clock.cancel(this));
    this.clock = clock;
    this.work = work;
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.state = state;
    this.rescheduled = true;
    this.clock.arm(this, delay);
    return this;
  }

  run(): void {
    if (this.closed) return;
    this.clock.cancel(this);
    this.rescheduled = false;
    this.work.call(this, this.state);
    // As rxjs's AsyncAction: an action that did not schedule itself again is done.
    if (!this.rescheduled) this.unsubscribe();
  }
}

export class HarnessClock implements SchedulerLike {
  /** How far the clock was moved ahead of real time, in total. */
  offsetMs = 0;
  private readonly pending = new Set<Armed>();

  now(): number {
    return performance.now() + this.offsetMs;
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    return new ClockAction<T>(this, work).schedule(state, delay);
  }

  /**
   * Moves the clock `ms` ahead (never back: a negative `ms` moves it by 0) and runs, in due order and at
   * once, every action that is due by then, also those that fell due in real time since they were armed;
   * the others get real timers for what is left of their wait.
   */
  advance(ms: number): void {
    this.offsetMs += Math.max(0, ms);
    const now = this.now();
    const due = [...this.pending].filter((a) => a.due <= now).sort((a, b) => a.due - b.due);
    for (const action of due) if (this.pending.has(action)) action.run();
    for (const action of this.pending) {
      clearTimeout(action.timer);
      action.timer = setTimeout(() => action.run(), Math.max(0, action.due - this.now()));
    }
  }

  /** When each action armed now falls due, on this clock, earliest first: what the informer is waiting for. */
  armed(): number[] {
    return [...this.pending].map((a) => a.due).sort((a, b) => a - b);
  }

  /** @internal */
  arm(action: Armed, delay: number): void {
    clearTimeout(action.timer);
    action.due = this.now() + Math.max(0, delay);
    this.pending.add(action);
    action.timer = setTimeout(() => action.run(), Math.max(0, delay));
  }

  /** @internal */
  cancel(action: Armed): void {
    clearTimeout(action.timer);
    action.timer = undefined;
    this.pending.delete(action);
  }
}
