import { InformerError, describeThrown, type ErrorReason, type InformerErrorDetails } from '../0-model/errors.ts';
import type { UnobservedReporter } from '../5-informer/unobservedErrors.ts';

/** The Lease request that failed. */
export type LeaseOperation = 'get' | 'create' | 'update' | 'list' | 'release' | 'delete';

/**
 * A failed Lease request, as data: reported on `errors$`, never ending a stream. An {@link InformerError} (the
 * library's one kind of error: `err instanceof InformerError` and a `switch (err.reason)` hold for leader election
 * and sharding too), named `LeaseError`, with the request's `operation` and `lease` beside the informer's fields.
 * `reason` uses the informer's vocabulary (`Conflict` for 409 on a stale resourceVersion or an existing name,
 * `ServerError` for 5xx but 504, `Timeout` (no answer in time, or 504), `NetworkError` for a refused or dropped
 * connection, `Forbidden` when RBAC denies the Lease API); `request` and `unreachable` are the transport's, when it
 * made the request.
 */
export class LeaseError extends InformerError {
  override readonly name = 'LeaseError';
  readonly operation: LeaseOperation;
  /** The Lease's name (`<name>-member-*` for a listing of a sharding group's members). */
  readonly lease: string;

  /** `status`: HTTP status, when there was a response; `details`: the rest of an {@link InformerError}'s fields. */
  constructor(
    reason: ErrorReason,
    operation: LeaseOperation,
    lease: string,
    message: string,
    status?: number,
    details: Omit<InformerErrorDetails, 'status'> = {},
  ) {
    super(reason, `${operation} lease ${lease}: ${message}`, { ...details, status });
    this.operation = operation;
    this.lease = lease;
    this.said = message;
  }

  /** The message without its `operation lease name: ` prefix. */
  private readonly said: string;

  /** The same LeaseError, naming the request that failed (one that names a request already is kept). */
  override forRequest(request: string): LeaseError {
    if (this.request !== undefined) return this;
    const named = this.with({ request });
    named.stack = this.stack;
    return named;
  }

  /** The same LeaseError, seen from another phase. */
  override inPhase(phase: NonNullable<InformerErrorDetails['phase']>): LeaseError {
    return this.phase === phase ? this : this.with({ phase });
  }

  private with(change: Partial<InformerErrorDetails>): LeaseError {
    const { status, ...details } = { ...this.details(), ...change };
    return new LeaseError(this.reason, this.operation, this.lease, this.said, status, details);
  }

  /**
   * Any failure of a Lease request as a LeaseError: one already is kept; an {@link InformerError} (the transport's,
   * or a `LeaseClient` of the caller's own) keeps its reason, message and every field (status, phase, request, key,
   * resourceVersion, issues…; before, phase, key, resourceVersion and issues were dropped); anything else thrown gets
   * `fallback` as its reason (what the caller knows of it: an rxjs `timeout()` is a `Timeout`).
   */
  static of(error: unknown, operation: LeaseOperation, lease: string, fallback: ErrorReason): LeaseError {
    if (error instanceof LeaseError) {
      if (error.operation === operation && error.lease === lease) return error;
      // Named again by the caller, who knows more (a sharding group's listing, `*` to the client): audit25.
      const { status, ...details } = error.details();
      return new LeaseError(error.reason, operation, lease, error.said, status, { ...details, cause: error });
    }
    if (error instanceof InformerError) {
      // Each of its fields (a new one of InformerErrorDetails is a type error here until kept): `details()` is
      // protected, not to be called on an InformerError of another class.
      const kept = {
        phase: error.phase,
        retryAfterSeconds: error.retryAfterSeconds,
        key: error.key,
        resourceVersion: error.resourceVersion,
        issues: error.issues,
        statusObject: error.statusObject,
        unreachable: error.unreachable,
        request: error.request,
        execPlugin: error.execPlugin,
      } satisfies Record<keyof Omit<InformerErrorDetails, 'status' | 'cause'>, unknown>;
      return new LeaseError(error.reason, operation, lease, error.message, error.status, { ...kept, cause: error });
    }
    return new LeaseError(fallback, operation, lease, describeThrown(error), undefined, { cause: error });
  }
}

export function isConflict(error: unknown): boolean {
  return error instanceof LeaseError && error.reason === 'Conflict';
}

/**
 * The `Conflict`s that are no race but a misuse: another candidate renews under our identity (leaderElection.ts's
 * `identityInUse`, said once per campaign). The instance itself is marked: it reaches the report unchanged, from the
 * campaign and through a sharding group's elections.
 */
const misuses = new WeakSet<LeaseError>();

/** Marks `error` as a misuse (see {@link reportUnobserved}), and returns it. */
export function misuse(error: LeaseError): LeaseError {
  misuses.add(error);
  return error;
}

/**
 * Hands a failed Lease request to the one report of faults nobody subscribes to (src/5-informer/unobservedErrors.ts):
 * a warning while nothing observes `errors$` (a Lease API denied by RBAC: nobody ever leads, else silently). A
 * `Conflict` is not reported: it is the protocol's own race (two candidates wrote at once; the loser reads again). A
 * misuse is ({@link misuse}: one identity, two candidates, both leading): said once, it must reach a user who
 * subscribes to nothing.
 */
export function reportUnobserved(reporter: UnobservedReporter, error: LeaseError): void {
  if (isConflict(error) && !misuses.has(error)) return;
  reporter.report(error);
}
