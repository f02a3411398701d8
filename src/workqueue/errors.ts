/** Why a work-queue call was rejected. */
export type WorkQueueErrorReason = 'InvalidArgument';

/**
 * Thrown synchronously for misuse (a bad concurrency, a negative rate, ...).
 * Runtime failures of workers are never thrown: they travel as {@link WorkerFailed} data.
 */
export class WorkQueueError extends Error {
  readonly reason: WorkQueueErrorReason;

  constructor(reason: WorkQueueErrorReason, message: string) {
    super(message);
    this.name = 'WorkQueueError';
    this.reason = reason;
  }
}

/** A worker's Observable errored (or the worker threw) while handling an item. */
export interface WorkerFailed {
  readonly reason: 'WorkerFailed';
  readonly cause: unknown;
}
