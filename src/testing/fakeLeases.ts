import { Observable, Subscription, asyncScheduler, type SchedulerLike } from 'rxjs';
import { LeaseError, type LeaseOperation } from '../leaderelection/errors.ts';
import type { LeaseClient, LeaseClients } from '../leaderelection/leaseClient.ts';
import type { LeaderElectionRecord, LeaseSnapshot } from '../leaderelection/record.ts';

/**
 * What happens to one request on its way:
 * - `ok`: applied, answered;
 * - `status500`: answered 500, not applied;
 * - `dropBefore`: connection lost before the server saw it;
 * - `dropAfter`: applied, but the answer is lost (the client sees a network error);
 * - `hang`: never answered (the client's timeout has to end it); applied or not, at random by `hangApplies`.
 */
export type FakeLeaseFault = 'ok' | 'status500' | 'dropBefore' | 'dropAfter' | 'hang';

export interface FakeLeaseRequest {
  readonly client: string;
  readonly operation: LeaseOperation;
  readonly lease: string;
}

export interface FakeClientOptions {
  /** Names the client in the write log. */
  readonly client: string;
  /** Milliseconds each way (to the server, back), asked per request. Default 0. */
  readonly latencyMs?: (request: FakeLeaseRequest) => number;
  /** What happens to a request. Default `ok`. */
  readonly fault?: (request: FakeLeaseRequest) => FakeLeaseFault;
  /** While true every request fails at once without reaching the server (a partitioned replica). */
  readonly partitioned?: () => boolean;
}

/** One applied write, for checking histories. */
export interface FakeLeaseWrite {
  readonly at: number;
  readonly client: string;
  readonly lease: string;
  readonly resourceVersion: string;
  readonly record: LeaderElectionRecord;
}

interface Stored {
  readonly resourceVersion: string;
  readonly record: LeaderElectionRecord;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * An in-memory Lease API with kube-apiserver's optimistic concurrency (a PUT
 * quoting a stale resourceVersion gets 409 Conflict, a second create gets 409
 * AlreadyExists, a DELETE whose resourceVersion precondition fails 409, of a Lease gone 404), one global revision counter, and per-client latencies,
 * faults and partitions, all timed on `scheduler` (a TestScheduler in
 * property tests). A request, once sent, reaches the server even if the
 * client stops waiting, as over a real network.
 */
export class FakeLeaseServer {
  readonly scheduler: SchedulerLike;
  /** Every create and update applied (a delete is not a write: `names()` and `get()` tell what is left). */
  readonly writes: FakeLeaseWrite[] = [];
  private readonly leases = new Map<string, Stored>();
  private revision = 100;

  constructor(scheduler: SchedulerLike = asyncScheduler) {
    this.scheduler = scheduler;
  }

  /** The names of the Leases stored now. */
  names(): string[] {
    return [...this.leases.keys()];
  }

  /** The Lease as stored now. */
  get(name: string): LeaseSnapshot | undefined {
    const stored = this.leases.get(name);
    return stored && { name, resourceVersion: stored.resourceVersion, record: stored.record };
  }

  private apply(client: string, request: Apply): LeaseSnapshot | null | LeaseError {
    const stored = this.leases.get(request.name);
    const conflict = (message: string) => new LeaseError('Conflict', request.operation, request.name, message, 409);
    switch (request.type) {
      case 'get':
        return stored ? { name: request.name, resourceVersion: stored.resourceVersion, record: stored.record } : null;
      case 'create':
        if (stored) return conflict(`leases.coordination.k8s.io "${request.name}" already exists`);
        return this.store(client, request.name, request.record, request.labels);
      case 'update':
        if (!stored)
          return new LeaseError('NotFound', request.operation, request.name, `leases.coordination.k8s.io "${request.name}" not found`, 404);
        if (stored.resourceVersion !== request.resourceVersion)
          return conflict(
            `Operation cannot be fulfilled on leases.coordination.k8s.io "${request.name}": the object has been ` +
              `modified; please apply your changes to the latest version and try again`,
          );
        return this.store(client, request.name, request.record, request.labels ?? stored.labels);
      case 'delete':
        if (!stored)
          return new LeaseError('NotFound', request.operation, request.name, `leases.coordination.k8s.io "${request.name}" not found`, 404);
        if (stored.resourceVersion !== request.resourceVersion)
          return conflict(
            `Operation cannot be fulfilled on leases.coordination.k8s.io "${request.name}": Precondition failed: ` +
              `ResourceVersion in precondition: ${request.resourceVersion}, ResourceVersion in object meta: ${stored.resourceVersion}`,
          );
        this.leases.delete(request.name);
        return { name: request.name, resourceVersion: stored.resourceVersion, record: stored.record };
    }
  }

  private store(
    client: string,
    name: string,
    record: LeaderElectionRecord,
    labels: Readonly<Record<string, string>> | undefined,
  ): LeaseSnapshot {
    const resourceVersion = String(++this.revision);
    this.leases.set(name, { resourceVersion, record, labels: labels ?? {} });
    this.writes.push({ at: this.scheduler.now(), client, lease: name, resourceVersion, record });
    return { name, resourceVersion, record };
  }

  private listed(labels: Readonly<Record<string, string>>): LeaseSnapshot[] {
    return [...this.leases.entries()]
      .filter(([, s]) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .map(([name, s]) => ({ name, resourceVersion: s.resourceVersion, record: s.record, labels: s.labels }));
  }

  /** A client of this server, with its own latencies, faults and partition switch. */
  clients(options: FakeClientOptions): LeaseClients {
    const roundTrip = <T>(operation: LeaseOperation, lease: string, run: () => T | LeaseError): Observable<T> =>
      new Observable<T>((subscriber) => {
        const request: FakeLeaseRequest = { client: options.client, operation, lease };
        const answers = new Subscription();
        const reply = (deliver: () => void, delay: number) => answers.add(this.scheduler.schedule(deliver, delay));
        const error = (e: LeaseError) => () => subscriber.error(e);
        const network = (message: string) => new LeaseError('NetworkError', operation, lease, message);
        if (options.partitioned?.()) {
          reply(error(network('connect ECONNREFUSED (partitioned)')), 0);
          return answers;
        }
        const fault = options.fault?.(request) ?? 'ok';
        const there = Math.max(0, options.latencyMs?.(request) ?? 0);
        const back = Math.max(0, options.latencyMs?.(request) ?? 0);
        // Not tied to the subscriber: a sent request arrives whether or not anyone still waits.
        this.scheduler.schedule(() => {
          switch (fault) {
            case 'dropBefore':
              reply(error(network('socket hang up')), 0);
              return;
            case 'status500':
              reply(error(new LeaseError('ServerError', operation, lease, 'Internal error occurred', 500)), back);
              return;
            case 'hang':
              return;
            case 'ok':
            case 'dropAfter': {
              const result = run();
              if (fault === 'dropAfter') reply(error(network('socket hang up')), back);
              else if (result instanceof LeaseError) reply(error(result), back);
              else
                reply(() => {
                  subscriber.next(result);
                  subscriber.complete();
                }, back);
              return;
            }
          }
        }, there);
        return answers;
      });

    const client = options.client;
    return {
      lease: (name, labels): LeaseClient => ({
        name,
        get: () => roundTrip('get', name, () => this.apply(client, { type: 'get', operation: 'get', name })),
        create: (record) =>
          roundTrip(
            'create',
            name,
            () => this.apply(client, { type: 'create', operation: 'create', name, record, labels }) as LeaseSnapshot | LeaseError,
          ),
        update: (resourceVersion, record) => {
          const operation: LeaseOperation = record.holderIdentity === '' ? 'release' : 'update';
          return roundTrip(
            operation,
            name,
            () => this.apply(client, { type: 'update', operation, name, resourceVersion, record, labels }) as LeaseSnapshot | LeaseError,
          );
        },
        delete: (resourceVersion) =>
          roundTrip('delete', name, () => {
            const result = this.apply(client, { type: 'delete', operation: 'delete', name, resourceVersion });
            return result instanceof LeaseError ? result : undefined;
          }),
      }),
      list: (labels) => roundTrip('list', '*', () => this.listed(labels)),
    };
  }
}

type Apply =
  | { readonly type: 'get'; readonly operation: LeaseOperation; readonly name: string }
  | {
      readonly type: 'create';
      readonly operation: LeaseOperation;
      readonly name: string;
      readonly record: LeaderElectionRecord;
      readonly labels: Readonly<Record<string, string>> | undefined;
    }
  | { readonly type: 'delete'; readonly operation: LeaseOperation; readonly name: string; readonly resourceVersion: string }
  | {
      readonly type: 'update';
      readonly operation: LeaseOperation;
      readonly name: string;
      readonly resourceVersion: string;
      readonly record: LeaderElectionRecord;
      readonly labels: Readonly<Record<string, string>> | undefined;
    };
