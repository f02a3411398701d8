export {
  DEFAULT_PRIORITY,
  LOW_PRIORITY,
  WorkQueue,
  createWorkQueue,
  type WorkQueueOptions,
  type WorkQueueSizes,
} from './workQueue.ts';
export { DelayingWorkQueue, createDelayingQueue } from './delayingQueue.ts';
export { RateLimitingWorkQueue, createRateLimitingQueue, type RateLimitingQueueOptions } from './rateLimitingQueue.ts';
export { processItems, type WorkEvent, type WorkSource } from './processItems.ts';
export type { RateLimiter } from './rateLimiter.ts';
export {
  itemExponentialFailureRateLimiter,
  type ItemExponentialFailureRateLimiter,
} from './itemExponentialFailureRateLimiter.ts';
export { bucketRateLimiter, type BucketRateLimiterOptions } from './bucketRateLimiter.ts';
export { maxOfRateLimiter } from './maxOfRateLimiter.ts';
export { defaultControllerRateLimiter } from './defaultControllerRateLimiter.ts';
export {
  WORKQUEUE_METRIC_NAMES,
  type DurationSummary,
  type WorkQueueMetricEvent,
  type WorkQueueMetrics,
} from './metrics.ts';
export { WorkQueueError, type WorkQueueErrorReason, type WorkerFailed } from './errors.ts';
