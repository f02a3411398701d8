import type { Observable } from 'rxjs';
import type { LeaderElectionRecord, LeaseSnapshot } from './record.ts';

/**
 * One Lease, as the elector needs it. Each call is cold (nothing is sent until
 * subscribed), emits once and completes, or errors with a {@link LeaseError};
 * unsubscribing aborts the request (the server may still have applied it).
 */
export interface LeaseClient {
  readonly name: string;
  /** The Lease, or `null` when there is none (404). */
  get(): Observable<LeaseSnapshot | null>;
  /** POST; 409 `Conflict` (AlreadyExists) when someone created it first. */
  create(record: LeaderElectionRecord): Observable<LeaseSnapshot>;
  /** PUT quoting `resourceVersion`; 409 `Conflict` when the Lease has changed since. */
  update(resourceVersion: string, record: LeaderElectionRecord): Observable<LeaseSnapshot>;
  /**
   * DELETE with `preconditions.resourceVersion`: emits once the Lease is deleted; 409 `Conflict` when it has changed
   * since, 404 `NotFound` when it is gone. Optional (a client written before it still compiles): without it
   * `sharding()` never deletes a stale member Lease (see docs/replicas.md).
   */
  delete?(resourceVersion: string): Observable<void>;
}

/** The Leases of one namespace: one client per name, and a list by label (for membership). */
export interface LeaseClients {
  /** A client for the Lease `name`; `labels` are written on create and kept on update. */
  lease(name: string, labels?: Readonly<Record<string, string>>): LeaseClient;
  /** The Leases carrying these labels. */
  list(labels: Readonly<Record<string, string>>): Observable<readonly LeaseSnapshot[]>;
}
