export { WorkQueue, createWorkQueue, type WorkQueueOptions, type WorkQueueSizes } from './work-queue.ts';
export { DelayingWorkQueue, createDelayingQueue } from './delaying-queue.ts';
export { RateLimitingWorkQueue, createRateLimitingQueue, type RateLimitingQueueOptions } from './rate-limiting-queue.ts';
export { processItems, type WorkEvent, type WorkSource } from './process-items.ts';
export type { RateLimiter } from './rate-limiter.ts';
export {
  itemExponentialFailureRateLimiter,
  type ItemExponentialFailureRateLimiter,
} from './item-exponential-failure-rate-limiter.ts';
export { bucketRateLimiter, type BucketRateLimiterOptions } from './bucket-rate-limiter.ts';
export { maxOfRateLimiter } from './max-of-rate-limiter.ts';
export { defaultControllerRateLimiter } from './default-controller-rate-limiter.ts';
export {
  WORKQUEUE_METRIC_NAMES,
  type DurationSummary,
  type WorkQueueMetricEvent,
  type WorkQueueMetrics,
} from './metrics.ts';
export { WorkQueueError, type WorkQueueErrorReason, type WorkerFailed } from './errors.ts';
