import type { KubeConfig } from '@kubernetes/client-node';
import {
  Observable,
  Subscription,
  asyncScheduler,
  distinctUntilChanged,
  filter,
  map,
  of,
  share,
  shareReplay,
  throwError,
  timeout,
  timer,
  type SchedulerLike,
} from 'rxjs';
import { LeaseError, isConflict } from './errors.ts';
import { httpLeaseClients } from './httpLeaseClient.ts';
import type { LeaseClient } from './leaseClient.ts';
import {
  DEFAULT_TIMING,
  afterRead,
  afterWrite,
  begin,
  initialElection,
  leading,
  MIN_WAKE_MS,
  nextAttemptIn,
  observe,
  release,
  stepDown,
  timingProblem,
  type Candidate,
  type ElectionState,
  type LeaseRequest,
} from './machine.ts';
import type { LeaseSnapshot } from './record.ts';

export interface LeaderElectionOptions {
  /** Namespace of the Lease (with a KubeConfig). Default: the KubeConfig context's namespace, else `default`. */
  readonly namespace?: string;
  /** The Lease's name (with a KubeConfig). */
  readonly name?: string;
  /** Who we are; unique per process (e.g. the pod name plus a random suffix). */
  readonly identity: string;
  /** Default 15 000. */
  readonly leaseDurationMs?: number;
  /** Default 10 000. */
  readonly renewDeadlineMs?: number;
  /** Default 2 000. */
  readonly retryPeriodMs?: number;
  /** A candidate's wait is stretched by up to this × retryPeriod at random. Default 0 (see docs/replicas.md). */
  readonly jitterFactor?: number;
  /** Each Lease request gives up after this long (`Timeout` on errors$). Default renewDeadline / 2. */
  readonly requestTimeoutMs?: number;
  /**
   * Whether to hold the Lease (default: always). While false we only watch
   * the Lease; turning false while leading steps down at once and releases it.
   */
  readonly want$?: Observable<boolean>;
  /** Clock and timers. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /** Source of jitter, in [0, 1). Default Math.random. */
  readonly random?: () => number;
}

/** What we know, after every change. */
export interface ElectionStatus {
  readonly leader: boolean;
  /** The holder in the Lease as last seen ("" released, undefined not seen yet or missing). */
  readonly holderIdentity: string | undefined;
  /** leaseTransitions as last seen. */
  readonly leaseTransitions: number;
}

export interface LeaderElection {
  readonly name: string;
  readonly identity: string;
  /**
   * true while we lead, false otherwise; starts with false. Cold and shared:
   * the first subscriber starts campaigning, the last one leaving stops it and,
   * if we held the Lease, releases it (holderIdentity "", as client-go's ReleaseOnCancel).
   * "Held" is as last seen: after losing the Lease unseen (partitioned) we still try, quoting
   * the old resourceVersion, which the server refuses (409) if someone took it since.
   */
  readonly leader$: Observable<boolean>;
  /** leader$ with the holder and transition count seen (replays the latest; runs the election too). */
  readonly status$: Observable<ElectionStatus>;
  /** Every failed Lease request (conflicts, 5xx, timeouts, dropped connections). Runs the election too. */
  readonly errors$: Observable<LeaseError>;
}

type ElectionEvent = { readonly type: 'status'; readonly status: ElectionStatus } | { readonly type: 'error'; readonly error: LeaseError };

function isLeaseClient(source: KubeConfig | LeaseClient): source is LeaseClient {
  return typeof (source as Partial<LeaseClient>).update === 'function';
}

function send(client: LeaseClient, request: LeaseRequest): Observable<LeaseSnapshot | null> {
  switch (request.type) {
    case 'get':
      return client.get();
    case 'create':
      return client.create(request.record);
    case 'update':
      return client.update(request.resourceVersion, request.record);
    default: {
      const unknown: never = request;
      return throwError(() => new Error(`unknown request ${String(unknown)}`));
    }
  }
}

/**
 * Campaigns for one Lease and says, as it changes, whether we lead.
 *
 * ```
 * leader$ at the defaults (lease 15 s, renew deadline 10 s, retry 2 s), frames in ms, instant answers.
 * We take a free Lease at once, renew every retryPeriod (2 000, 4 000 ✓), lose the API at 4 500
 * (renewals ✗ at 6 000 … 12 000) and step down at 14 000: renewDeadline after the start of the
 * last good renewal, request in flight or not:
 *   (ft) 13996ms f
 * Another candidate, subscribed at 1 000, polling every retryPeriod; its read at 5 000 was the last
 * to show the record changing, so it takes over at 5 000 + leaseDuration (and after we stepped down):
 *   1000ms f 18999ms t
 * ```
 *
 * ## Example
 * ```ts
 * const election = leaderElection(kc, { namespace: 'ops', name: 'my-controller', identity: `${os.hostname()}-${process.pid}` });
 * election.leader$.pipe(switchMap((lead) => (lead ? controller.outcomes$ : EMPTY))).subscribe();
 * ```
 *
 * @param source A KubeConfig (the Lease `options.namespace`/`options.name` over HTTP) or any {@link LeaseClient}.
 * @return leader$, status$ and errors$, sharing one campaign.
 * @throws TypeError when the timing breaks client-go's rules (leaseDuration > renewDeadline > 1.2 × retryPeriod).
 */
export function leaderElection(source: KubeConfig | LeaseClient, options: LeaderElectionOptions): LeaderElection {
  const timing = {
    leaseDurationMs: options.leaseDurationMs ?? DEFAULT_TIMING.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs ?? DEFAULT_TIMING.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs ?? DEFAULT_TIMING.retryPeriodMs,
  };
  const problem = timingProblem(timing);
  if (problem) throw new TypeError(`leaderElection: ${problem}`);
  let client: LeaseClient;
  if (isLeaseClient(source)) client = source;
  else {
    if (!options.name) throw new TypeError('leaderElection: `name` (the Lease) is required with a KubeConfig');
    client = httpLeaseClients(source, { namespace: options.namespace, requestTimeoutMs: options.requestTimeoutMs }).lease(options.name);
  }
  const events$ = campaign(client, { identity: options.identity, timing }, options).pipe(share());
  const status$ = events$.pipe(
    filter((e): e is Extract<ElectionEvent, { type: 'status' }> => e.type === 'status'),
    map((e) => e.status),
    shareReplay({ bufferSize: 1, refCount: true }),
  );
  return {
    name: client.name,
    identity: options.identity,
    status$,
    leader$: status$.pipe(
      map((s) => s.leader),
      distinctUntilChanged(),
    ),
    // Holds status$ too, so that the latest status is kept for a leader$ subscriber who comes later.
    errors$: new Observable<LeaseError>((subscriber) => {
      const keep = status$.subscribe();
      keep.add(
        events$
          .pipe(
            filter((e): e is Extract<ElectionEvent, { type: 'error' }> => e.type === 'error'),
            map((e) => e.error),
          )
          .subscribe(subscriber),
      );
      return keep;
    }),
  };
}

function campaign(client: LeaseClient, candidate: Candidate, options: LeaderElectionOptions): Observable<ElectionEvent> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;
  const jitterFactor = options.jitterFactor ?? 0;
  const requestTimeoutMs = options.requestTimeoutMs ?? candidate.timing.renewDeadlineMs / 2;
  const want$ = options.want$ ?? of(true);

  return new Observable<ElectionEvent>((subscriber) => {
    let state: ElectionState = initialElection;
    let want = false;
    let busy = false;
    let reported: ElectionStatus | undefined;
    const requests = new Subscription();
    let wake: Subscription | undefined;
    let deadline: Subscription | undefined;
    const now = () => scheduler.now();

    const report = () => {
      const t = now();
      const status: ElectionStatus = {
        leader: leading(state, t),
        holderIdentity: state.observed ? state.observed.record.holderIdentity : undefined,
        leaseTransitions: state.observed ? state.observed.record.leaseTransitions : 0,
      };
      if (
        !reported ||
        reported.leader !== status.leader ||
        reported.holderIdentity !== status.holderIdentity ||
        reported.leaseTransitions !== status.leaseTransitions
      ) {
        reported = status;
        subscriber.next({ type: 'status', status });
      }
      // Step down on our own clock the moment the renew deadline passes, request in flight or not.
      deadline?.unsubscribe();
      deadline = status.leader ? timer(Math.max(state.leaderUntil - t, MIN_WAKE_MS), scheduler).subscribe(report) : undefined;
    };

    const operationOf = (request: LeaseRequest) => (request.type === 'update' && request.purpose === 'release' ? 'release' : request.type);
    const fail = (request: LeaseRequest, cause: unknown): LeaseError =>
      cause instanceof LeaseError ? cause : new LeaseError('Unknown', operationOf(request), client.name, String(cause));

    const call = (request: LeaseRequest, done: (result: LeaseSnapshot | null) => void, failed: (error: LeaseError) => void) => {
      const operation = operationOf(request);
      requests.add(
        send(client, request)
          .pipe(
            timeout({
              first: requestTimeoutMs,
              scheduler,
              with: () => throwError(() => new LeaseError('Timeout', operation, client.name, `no answer within ${requestTimeoutMs} ms`)),
            }),
          )
          .subscribe({ next: done, error: (e: unknown) => failed(fail(request, e)) }),
      );
    };

    const finish = () => {
      busy = false;
      if (!want) {
        // A write that was in flight when we stopped wanting may have made us holder again.
        if (leading(state, now())) state = stepDown(state);
        giveBack(requests);
      }
      report();
      wake?.unsubscribe();
      wake = timer(nextAttemptIn(state, now(), candidate, random(), jitterFactor), scheduler).subscribe(attempt);
    };

    const write = (request: LeaseRequest) => {
      const startedAt = now();
      call(
        request,
        (written) => {
          if (written) state = afterWrite(state, written, startedAt, now(), candidate);
          finish();
        },
        (error) => {
          subscriber.next({ type: 'error', error });
          // A renewal refused on a stale resourceVersion: read and try again (client-go's slow path).
          if (request.type === 'update' && request.purpose === 'renew' && isConflict(error)) read();
          else finish();
        },
      );
    };

    const read = () =>
      call(
        { type: 'get' },
        (got) => {
          const step = afterRead(state, got, now(), candidate, want);
          state = step.state;
          report();
          if (step.next) write(step.next);
          else finish();
        },
        (error) => {
          subscriber.next({ type: 'error', error });
          finish();
        },
      );

    function attempt() {
      if (busy) return;
      busy = true;
      wake?.unsubscribe();
      const request = begin(state, now(), candidate, want);
      if (request.type === 'get') read();
      else write(request);
    }

    let releasing = false;
    const giveBack = (onto: Subscription | undefined) => {
      const request = release(state, now(), candidate.identity);
      if (!request || releasing) return;
      releasing = true;
      const go = (r: LeaseRequest, retries: number): Subscription =>
        send(client, r)
          .pipe(timeout({ first: candidate.timing.renewDeadlineMs, scheduler }))
          .subscribe({
            next: (written) => {
              releasing = false;
              if (written) state = { ...state, observed: written, observedAt: now() };
            },
            error: (error: unknown) => {
              releasing = false;
              if (!subscriber.closed) subscriber.next({ type: 'error', error: fail(r, error) });
              // Our own renewal may have landed meanwhile: read, and release what is still ours.
              if (retries > 0 && isConflict(error))
                send(client, { type: 'get' }).subscribe({
                  next: (got) => {
                    state = observe(state, got, now());
                    const again = release(state, now(), candidate.identity);
                    if (again && !releasing) {
                      releasing = true;
                      const sub = go(again, retries - 1);
                      onto?.add(sub);
                    }
                  },
                  error: () => undefined,
                });
            },
          });
      const sub = go(request, 2);
      onto?.add(sub);
    };

    report();
    const wants = want$.pipe(distinctUntilChanged()).subscribe((w) => {
      want = w;
      if (!w && leading(state, now())) {
        state = stepDown(state);
        report();
        giveBack(requests);
      } else if (w && !busy) {
        attempt();
      }
    });
    if (!want && !busy) attempt(); // not wanting: still watch the Lease

    return () => {
      wants.unsubscribe();
      wake?.unsubscribe();
      deadline?.unsubscribe();
      requests.unsubscribe();
      // Outlives the subscription on purpose (client-go releases with its own timeout).
      giveBack(undefined);
    };
  });
}
