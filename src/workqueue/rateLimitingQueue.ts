import { defaultControllerRateLimiter } from './defaultControllerRateLimiter.ts';
import { DelayingWorkQueue } from './delayingQueue.ts';
import type { RateLimiter } from './rateLimiter.ts';
import { checkOptionNames } from '../util/optionNames.ts';
import { checkPriority, DEFAULT_PRIORITY, type WorkQueueOptions } from './workQueue.ts';

export interface RateLimitingQueueOptions<K> extends WorkQueueOptions {
  /** Default `defaultControllerRateLimiter(scheduler)`. */
  readonly rateLimiter?: RateLimiter<K>;
}

/** Every option of a rate-limiting queue, from its type. */
const RATE_LIMITING_QUEUE_OPTION_NAMES: readonly string[] = Object.keys({
  name: true,
  scheduler: true,
  rateLimiter: true,
} satisfies Record<keyof RateLimitingQueueOptions<unknown>, true>);

/** A {@link DelayingWorkQueue} whose retries are spaced by a {@link RateLimiter}. */
export class RateLimitingWorkQueue<K> extends DelayingWorkQueue<K> {
  readonly rateLimiter: RateLimiter<K>;

  constructor(options: RateLimitingQueueOptions<K> = {}) {
    super(options);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>(this.scheduler);
  }

  /**
   * `addAfter(item, rateLimiter.when(item), priority)`. Ignored after shutdown (the limiter is not consulted).
   *
   * ```
   * exponential 5 ms, item fails each time it runs (runs are instant):
   * runs: a----a---------a-------------------a----...   (frames 0, 5, 15, 35)
   * ```
   */
  addRateLimited(item: K, priority: number = DEFAULT_PRIORITY): void {
    checkPriority(priority);
    if (this.shuttingDown) return;
    this.addAfter(item, this.rateLimiter.when(item), priority);
  }

  /** Resets the item's backoff (call after it succeeds). Does not remove it from the queue. */
  forget(item: K): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: K): number {
    return this.rateLimiter.numRequeues(item);
  }
}

/** Creates a {@link RateLimitingWorkQueue}. */
export function createRateLimitingQueue<K>(options: RateLimitingQueueOptions<K> = {}): RateLimitingWorkQueue<K> {
  checkOptionNames('createRateLimitingQueue', options, RATE_LIMITING_QUEUE_OPTION_NAMES);
  return new RateLimitingWorkQueue<K>(options);
}
