import { Subject, type Observable, type SchedulerLike } from 'rxjs';

/** Count and sum of observed durations (the `_count`/`_sum` of a Prometheus histogram). */
export interface DurationSummary {
  readonly count: number;
  readonly sumSeconds: number;
}

/** A point-in-time view of a queue's metrics; times come from the queue's scheduler. */
export interface WorkQueueMetrics {
  /** The queue's `name` option, the `name` label in controller-runtime. */
  readonly name: string;
  /** Items added and not yet taken by `get` (client-go's dirty set). */
  readonly depth: number;
  /**
   * `depth` split by the priority each item is queued at, highest first, priorities with no item
   * left out (controller-runtime's `workqueue_depth` with a `priority` label).
   */
  readonly depthByPriority: readonly { readonly priority: number; readonly depth: number }[];
  readonly addsTotal: number;
  /** Time from add to get. */
  readonly queueDurationSeconds: DurationSummary;
  /** Time from get to done. */
  readonly workDurationSeconds: DurationSummary;
  /** Sum over in-flight items of the time since they were taken. */
  readonly unfinishedWorkSeconds: number;
  /** Age of the oldest in-flight item. */
  readonly longestRunningProcessorSeconds: number;
  /** Calls to `addAfter`/`addRateLimited` (client-go counts every delayed add). */
  readonly retriesTotal: number;
}

/** Snapshot field -> controller-runtime metric name. */
export const WORKQUEUE_METRIC_NAMES = {
  depth: 'workqueue_depth',
  addsTotal: 'workqueue_adds_total',
  queueDurationSeconds: 'workqueue_queue_duration_seconds',
  workDurationSeconds: 'workqueue_work_duration_seconds',
  unfinishedWorkSeconds: 'workqueue_unfinished_work_seconds',
  longestRunningProcessorSeconds: 'workqueue_longest_running_processor_seconds',
  retriesTotal: 'workqueue_retries_total',
  depthByPriority: 'workqueue_depth',
} as const satisfies Record<Exclude<keyof WorkQueueMetrics, 'name'>, string>;

/**
 * One metric observation, emitted synchronously by `metrics$`.
 * - `add`: adds_total += 1, depth := depth, depth{priority} += 1
 * - `get`: depth := depth, depth{priority} -= 1, queue_duration observes queueDurationSeconds
 * - `raise`: a queued item was added again at a higher priority: depth{from} -= 1, depth{to} += 1
 *   (not an add: adds_total and depth stay)
 * - `done`: work_duration observes workDurationSeconds
 * - `retry`: retries_total += 1
 */
export type WorkQueueMetricEvent<K> =
  | { readonly type: 'add'; readonly name: string; readonly item: K; readonly depth: number; readonly priority: number }
  | {
      readonly type: 'get';
      readonly name: string;
      readonly item: K;
      readonly depth: number;
      readonly priority: number;
      readonly queueDurationSeconds: number;
    }
  | { readonly type: 'raise'; readonly name: string; readonly item: K; readonly from: number; readonly to: number }
  | { readonly type: 'done'; readonly name: string; readonly item: K; readonly workDurationSeconds: number }
  | { readonly type: 'retry'; readonly name: string; readonly item: K };

/**
 * Seconds from `from` to `to`, never below 0: a scheduler given whose clock steps back (the default's does not) would
 * otherwise add a negative duration to a summary's `_sum`, which Prometheus's rate() reads as a counter reset.
 */
const elapsedSeconds = (to: number, from: number): number => Math.max(0, to - from) / 1000;

/** Internal bookkeeping behind `metrics()` and `metrics$`; per-item entries live only while needed. */
export class MetricsRecorder<K> {
  readonly events$: Observable<WorkQueueMetricEvent<K>>;
  private readonly events = new Subject<WorkQueueMetricEvent<K>>();
  private readonly name: string;
  private readonly scheduler: SchedulerLike;
  private readonly addTimes = new Map<K, number>();
  private readonly startTimes = new Map<K, number>();
  /** Queued items per priority; a priority leaves the map when its count drops to zero. */
  private readonly byPriority = new Map<number, number>();
  private addsTotal = 0;
  private retriesTotal = 0;
  private queueCount = 0;
  private queueSum = 0;
  private workCount = 0;
  private workSum = 0;

  constructor(name: string, scheduler: SchedulerLike) {
    this.name = name;
    this.scheduler = scheduler;
    this.events$ = this.events.asObservable();
  }

  get trackedItems(): number {
    return this.addTimes.size + this.startTimes.size;
  }

  add(item: K, depth: number, priority: number): void {
    this.addsTotal += 1;
    this.count(priority, 1);
    if (!this.addTimes.has(item)) this.addTimes.set(item, this.scheduler.now());
    if (this.events.observed) this.events.next({ type: 'add', name: this.name, item, depth, priority });
  }

  raise(item: K, from: number, to: number): void {
    this.count(from, -1);
    this.count(to, 1);
    if (this.events.observed) this.events.next({ type: 'raise', name: this.name, item, from, to });
  }

  get(item: K, depth: number, priority: number): void {
    this.count(priority, -1);
    const now = this.scheduler.now();
    this.startTimes.set(item, now);
    const addedAt = this.addTimes.get(item);
    let seconds = 0;
    if (addedAt !== undefined) {
      this.addTimes.delete(item);
      seconds = elapsedSeconds(now, addedAt);
      this.queueCount += 1;
      this.queueSum += seconds;
    }
    if (this.events.observed) {
      this.events.next({ type: 'get', name: this.name, item, depth, priority, queueDurationSeconds: seconds });
    }
  }

  done(item: K): void {
    const startedAt = this.startTimes.get(item);
    if (startedAt === undefined) return;
    this.startTimes.delete(item);
    const seconds = elapsedSeconds(this.scheduler.now(), startedAt);
    this.workCount += 1;
    this.workSum += seconds;
    if (this.events.observed) this.events.next({ type: 'done', name: this.name, item, workDurationSeconds: seconds });
  }

  retry(item: K): void {
    this.retriesTotal += 1;
    if (this.events.observed) this.events.next({ type: 'retry', name: this.name, item });
  }

  snapshot(depth: number): WorkQueueMetrics {
    const now = this.scheduler.now();
    let unfinished = 0;
    let longest = 0;
    for (const startedAt of this.startTimes.values()) {
      const age = elapsedSeconds(now, startedAt);
      unfinished += age;
      if (age > longest) longest = age;
    }
    const depthByPriority = [...this.byPriority]
      .map(([priority, count]) => ({ priority, depth: count }))
      .sort((a, b) => b.priority - a.priority);
    return {
      name: this.name,
      depth,
      depthByPriority,
      addsTotal: this.addsTotal,
      queueDurationSeconds: { count: this.queueCount, sumSeconds: this.queueSum },
      workDurationSeconds: { count: this.workCount, sumSeconds: this.workSum },
      unfinishedWorkSeconds: unfinished,
      longestRunningProcessorSeconds: longest,
      retriesTotal: this.retriesTotal,
    };
  }

  private count(priority: number, delta: number): void {
    const next = (this.byPriority.get(priority) ?? 0) + delta;
    if (next === 0) this.byPriority.delete(priority);
    else this.byPriority.set(priority, next);
  }
}
