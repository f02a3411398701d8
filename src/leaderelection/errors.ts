import type { ErrorReason } from '../0-model/errors.ts';

/** The Lease request that failed. */
export type LeaseOperation = 'get' | 'create' | 'update' | 'list' | 'release';

/**
 * A failed Lease request, as data: reported on `errors$`, never ending a stream.
 * `reason` uses the informer's vocabulary (`Conflict` for 409 on a stale
 * resourceVersion or an existing name, `ServerError` for 5xx but 504, `Timeout` (no answer in time, or 504),
 * `NetworkError` for a refused or dropped connection).
 */
export class LeaseError extends Error {
  override readonly name = 'LeaseError';
  readonly reason: ErrorReason;
  readonly operation: LeaseOperation;
  /** The Lease's name. */
  readonly lease: string;
  /** HTTP status, when there was a response. */
  readonly status: number | undefined;

  constructor(reason: ErrorReason, operation: LeaseOperation, lease: string, message: string, status?: number) {
    super(`${operation} lease ${lease}: ${message}`);
    this.reason = reason;
    this.operation = operation;
    this.lease = lease;
    this.status = status;
  }
}

export function isConflict(error: unknown): boolean {
  return error instanceof LeaseError && error.reason === 'Conflict';
}
