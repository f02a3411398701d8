import { InformerError, type ErrorReason } from '../0-model/errors.ts';
import type { UnobservedReporter } from '../5-informer/unobservedErrors.ts';

/** The Lease request that failed. */
export type LeaseOperation = 'get' | 'create' | 'update' | 'list' | 'release' | 'delete';

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

/**
 * Hands a failed Lease request to the one report of faults nobody subscribes to (src/5-informer/unobservedErrors.ts):
 * a warning while nothing observes `errors$` (a Lease API denied by RBAC: nobody ever leads, else silently). A
 * `Conflict` is not reported: it is the protocol's own race (two candidates wrote at once; the loser reads again).
 */
export function reportUnobserved(reporter: UnobservedReporter, error: LeaseError): void {
  if (isConflict(error)) return;
  reporter.report(new InformerError(error.reason, error.message, { status: error.status, cause: error }));
}
