import type { ErrorReason } from '../0-model/errors.ts';

/** The Lease request that failed. */
export type LeaseOperation = 'get' | 'create' | 'update' | 'list' | 'release';

/**
 * A failed Lease request, as data: reported on `errors$`, never ending a stream.
 * `reason` uses the informer's vocabulary (`Conflict` for 409 on a stale
 * resourceVersion or an existing name, `ServerError` for 5xx, `Timeout`,
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

/** The reason for an HTTP status, as the informer names them. */
export function reasonOfStatus(status: number): ErrorReason {
  if (status === 409) return 'Conflict';
  if (status === 404) return 'NotFound';
  if (status === 401) return 'Unauthorized';
  if (status === 403) return 'Forbidden';
  if (status === 400) return 'BadRequest';
  if (status === 422) return 'Invalid';
  if (status === 429) return 'TooManyRequests';
  if (status === 504) return 'Timeout';
  if (status >= 500) return 'ServerError';
  return 'Unknown';
}

export function isConflict(error: unknown): boolean {
  return error instanceof LeaseError && error.reason === 'Conflict';
}
