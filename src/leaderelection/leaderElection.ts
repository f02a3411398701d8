import type { KubeConfig } from '@kubernetes/client-node';
import {
  BehaviorSubject,
  Observable,
  Subscription,
  asyncScheduler,
  defer,
  distinctUntilChanged,
  filter,
  finalize,
  map,
  of,
  share,
  shareReplay,
  tap,
  throwError,
  timeout,
  take,
  timer,
  type SchedulerLike,
  type Subscriber,
} from 'rxjs';
import { LeaseError, isConflict, misuse, reportUnobserved } from './errors.ts';
import { httpLeaseClients } from './httpLeaseClient.ts';
import type { LeaseClient } from './leaseClient.ts';
import {
  DEFAULT_TIMING,
  afterRead,
  afterWrite,
  noOwnWrites,
  sentWrite,
  sharedIdentity,
  type OwnWrites,
  begin,
  initialElection,
  leading,
  MIN_WAKE_MS,
  nextAttemptIn,
  observe,
  release,
  leaseRequestTimeoutMs,
  requestTimeoutProblem,
  stepDown,
  timingProblem,
  type Candidate,
  type ElectionState,
  type LeaseRequest,
} from './machine.ts';
import type { LeaseSnapshot } from './record.ts';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import { unobservedReporter } from '../5-informer/unobservedErrors.ts';
import { checkOptionNames } from '../util/optionNames.ts';

export interface LeaderElectionOptions {
  /** Namespace of the Lease (with a KubeConfig). Default: the KubeConfig context's namespace, else `default`. */
  readonly namespace?: string;
  /** The Lease's name (with a KubeConfig). */
  readonly name?: string;
  /**
   * Who we are; unique per process: client-go's convention is the host name plus a random suffix,
   * `${os.hostname()}_${crypto.randomUUID()}` (not the pid: in a container it is often 1 in every pod, and two
   * candidates of one identity both lead). Must not be empty (`""` is a released Lease).
   */
  readonly identity: string;
  /**
   * How long a candidate waits, after seeing the same record, before it takes a held Lease (ms; client-go's
   * `LeaseDuration`, here with `Ms` in the name: a `leaseDuration` is no option). Default 15 000.
   */
  readonly leaseDurationMs?: number;
  /** How long a leader keeps leading after its last successful renewal began (ms; client-go's `RenewDeadline`). Default 10 000. */
  readonly renewDeadlineMs?: number;
  /** How often a candidate tries and a leader renews (ms; client-go's `RetryPeriod`). Default 2 000. */
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
  /**
   * Clock and timers, used as is (a TestScheduler: virtual time for both). Default `asyncScheduler`'s timers timed by
   * a monotonic clock (`performance.timeOrigin + performance.now()`): a step of the wall clock moves no deadline;
   * `Date.now()` is written into the Lease (`acquireTime`, `renewTime`), and its gain on the monotonic clock counts
   * against the renew deadline as time suspended (docs/replicas.md, Suspend).
   */
  readonly scheduler?: SchedulerLike;
  /** Source of jitter, in [0, 1). Default Math.random. */
  readonly random?: () => number;
  /**
   * A failed Lease request (a `Conflict` aside) while nothing subscribes to `errors$` is reported with
   * `process.emitWarning` (type `RxInformerWarning`, the reason as `code`, rate limited per reason), as an informer's
   * fault is: a Lease API denied by RBAC would otherwise leave every replica a follower, silently. `false`: none.
   * Default true.
   */
  readonly reportUnobservedErrors?: boolean;
}

/** Every option of {@link leaderElection}, from its type (a new one is an error here until listed). */
const LEADER_ELECTION_OPTION_NAMES = Object.keys({
  namespace: true,
  name: true,
  identity: true,
  leaseDurationMs: true,
  renewDeadlineMs: true,
  retryPeriodMs: true,
  jitterFactor: true,
  requestTimeoutMs: true,
  want$: true,
  scheduler: true,
  random: true,
  reportUnobservedErrors: true,
} satisfies Record<keyof LeaderElectionOptions, true>);

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
  /**
   * Emits once and completes when no release of the Lease is in flight: at once if none is, else once it has been
   * answered (written, refused, or timed out: each request gives up after `requestTimeoutMs`; after a 409 the release
   * reads and is sent again, twice at most, so 5 requests and 5 × `requestTimeoutMs` at worst, 25 s at the defaults).
   * Does not run the election. Subscribe after the last `leader$` subscriber has left (a SIGTERM), then exit: the next
   * leader takes over within a retry period, not a lease duration.
   */
  readonly released$: Observable<void>;
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
 * const election = leaderElection(kc, { namespace: 'ops', name: 'my-controller', identity: `${os.hostname()}-${randomUUID()}` });
 * election.leader$.pipe(switchMap((lead) => (lead ? controller.outcomes$ : EMPTY))).subscribe();
 * ```
 *
 * @param source A KubeConfig (the Lease `options.namespace`/`options.name` over HTTP) or any {@link LeaseClient}.
 * @return leader$, status$ and errors$, sharing one campaign.
 * @throws TypeError when the timing breaks client-go's rules (leaseDuration > renewDeadline > 1.2 × retryPeriod), or
 *   `identity` is empty (a Lease held by `""` reads as released: every such candidate would take it, and lead).
 */
export function leaderElection(source: KubeConfig | LeaseClient, options: LeaderElectionOptions): LeaderElection {
  checkOptionNames('leaderElection', options, LEADER_ELECTION_OPTION_NAMES);
  return countedElection(source, options, new BehaviorSubject(0));
}

/**
 * {@link leaderElection} counting its releases in flight in `releases`, which several elections may share: `sharding()`
 * gives all of its elections one, so that its `released$` waits for every one of them.
 */
export function countedElection(
  source: KubeConfig | LeaseClient,
  options: LeaderElectionOptions,
  releases: BehaviorSubject<number>,
): LeaderElection {
  const timing = {
    leaseDurationMs: options.leaseDurationMs ?? DEFAULT_TIMING.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs ?? DEFAULT_TIMING.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs ?? DEFAULT_TIMING.retryPeriodMs,
  };
  const problem = timingProblem(timing);
  if (problem) throw new TypeError(`leaderElection: ${problem}`);
  const timeoutProblem = requestTimeoutProblem(options.requestTimeoutMs);
  if (timeoutProblem) throw new TypeError(`leaderElection: ${timeoutProblem}`);
  if (typeof options.identity !== 'string' || options.identity === '')
    throw new TypeError('leaderElection: `identity` must be a non-empty string, unique per process');
  let client: LeaseClient;
  if (isLeaseClient(source)) client = source;
  else {
    if (!options.name) throw new TypeError('leaderElection: `name` (the Lease) is required with a KubeConfig');
    // The transport's own timers follow the same default as the campaign's outer bound (renewDeadline / 2).
    const requestTimeoutMs = leaseRequestTimeoutMs(options.requestTimeoutMs, timing);
    client = httpLeaseClients(source, { namespace: options.namespace, requestTimeoutMs }).lease(options.name);
  }
  const { scheduler } = electionClocks(options.scheduler);
  const unobserved = unobservedReporter(`leader election ${client.name}`, () => scheduler.now(), options.reportUnobservedErrors !== false);
  const events$ = campaign(client, { identity: options.identity, timing }, options, releases).pipe(
    tap((e) => e.type === 'error' && reportUnobserved(unobserved, e.error)),
    share(),
  );
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
    // Each subscriber counts as an observer: while there is one, no fault is reported as unobserved.
    errors$: new Observable<LeaseError>((subscriber) => {
      subscriber.add(unobserved.observed()); // first: a fault of the campaign this starts is observed
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
    released$: releasedOf(releases),
  };
}

/** Emits once and completes when the count of releases in flight is 0 (at once if it is). */
export const releasedOf = (releases: BehaviorSubject<number>): Observable<void> =>
  releases.pipe(
    filter((n) => n === 0),
    take(1),
    map(() => undefined),
  );

/**
 * The clocks of an election (and of `sharding()`): a scheduler given is used as is, for durations and for the times
 * written into Leases; by default durations are monotonic (see machine.ts) and written times `Date.now()`.
 */
export function electionClocks(scheduler: SchedulerLike | undefined): { readonly scheduler: SchedulerLike; readonly wall: () => number } {
  // `asyncScheduler.now()`: `Date.now()`, or virtual time inside `TestScheduler.run()`, as the default's `now()` is.
  return scheduler ? { scheduler, wall: () => scheduler.now() } : { scheduler: monotonicScheduler, wall: () => asyncScheduler.now() };
}

/** One campaign's shell: the machine's state, and the requests and timers carrying out its decisions. */
interface Campaign {
  readonly client: LeaseClient;
  readonly candidate: Candidate;
  readonly scheduler: SchedulerLike;
  /** The wall time written into the Lease. */
  readonly wall: () => number;
  readonly random: () => number;
  readonly jitterFactor: number;
  readonly requestTimeoutMs: number;
  readonly subscriber: Subscriber<ElectionEvent>;
  /** The requests of the campaign (a release when it ends outlives it). */
  readonly requests: Subscription;
  /** How many requests of a release are in flight (for `released$`). */
  readonly releases: BehaviorSubject<number>;
  state: ElectionState;
  /** The `renewTime`s we sent, to tell another candidate with our identity. */
  own: OwnWrites;
  /** Whether we want the Lease (want$). */
  want: boolean;
  /** An attempt (a read, a write) is in flight. */
  busy: boolean;
  /** A release is in flight. */
  releasing: boolean;
  reported: ElectionStatus | undefined;
  /** The next attempt. */
  wake: Subscription | undefined;
  /** Stepping down at the renew deadline. */
  deadline: Subscription | undefined;
}

function campaign(
  client: LeaseClient,
  candidate: Candidate,
  options: LeaderElectionOptions,
  releases: BehaviorSubject<number>,
): Observable<ElectionEvent> {
  const want$ = options.want$ ?? of(true);
  return new Observable<ElectionEvent>((subscriber) => {
    const c: Campaign = {
      client,
      candidate,
      ...electionClocks(options.scheduler),
      random: options.random ?? Math.random,
      jitterFactor: options.jitterFactor ?? 0,
      requestTimeoutMs: leaseRequestTimeoutMs(options.requestTimeoutMs, candidate.timing),
      subscriber,
      requests: new Subscription(),
      releases,
      state: initialElection,
      own: noOwnWrites,
      want: false,
      busy: false,
      releasing: false,
      reported: undefined,
      wake: undefined,
      deadline: undefined,
    };
    report(c);
    const wants = want$.pipe(distinctUntilChanged()).subscribe((w) => {
      c.want = w;
      if (!w && leading(c.state, c.scheduler.now(), c.wall())) {
        c.state = stepDown(c.state);
        report(c);
        giveBack(c, c.requests);
      } else if (w && !c.busy) {
        attempt(c);
      }
    });
    if (!c.want && !c.busy) attempt(c); // not wanting: still watch the Lease
    return () => {
      wants.unsubscribe();
      c.wake?.unsubscribe();
      c.deadline?.unsubscribe();
      c.requests.unsubscribe();
      // Outlives the subscription on purpose (client-go releases with its own timeout).
      giveBack(c, undefined);
    };
  });
}

/**
 * Emits the status when it changed, and steps down on our own clock the moment the renew deadline passes, request in
 * flight or not (or once the wall clock's gain on ours, a suspend, has used it up: see `leading`).
 */
function report(c: Campaign): void {
  const t = c.scheduler.now();
  const wall = c.wall();
  if (c.state.leaderUntil > t && !leading(c.state, t, wall)) c.state = stepDown(c.state);
  const { observed } = c.state;
  const status: ElectionStatus = {
    leader: leading(c.state, t, wall),
    holderIdentity: observed ? observed.record.holderIdentity : undefined,
    leaseTransitions: observed ? observed.record.leaseTransitions : 0,
  };
  const { reported } = c;
  if (
    !reported ||
    reported.leader !== status.leader ||
    reported.holderIdentity !== status.holderIdentity ||
    reported.leaseTransitions !== status.leaseTransitions
  ) {
    c.reported = status;
    c.subscriber.next({ type: 'status', status });
  }
  c.deadline?.unsubscribe();
  // The last subscriber may have left inside that emission (`take(1)`, `first()`): its teardown has run, arm nothing.
  if (c.subscriber.closed) return;
  const left = c.state.leaderUntil - t - Math.max(0, wall - t - c.state.wallAhead);
  c.deadline = status.leader ? timer(Math.max(left, MIN_WAKE_MS), c.scheduler).subscribe(() => report(c)) : undefined;
}

const operationOf = (request: LeaseRequest) => (request.type === 'update' && request.purpose === 'release' ? 'release' : request.type);

const failure = (c: Campaign, request: LeaseRequest, cause: unknown): LeaseError =>
  LeaseError.of(cause, operationOf(request), c.client.name, 'Unknown');

/** Sends one request of an attempt, given up after `requestTimeoutMs`. */
function call(c: Campaign, request: LeaseRequest, done: (result: LeaseSnapshot | null) => void, failed: (error: LeaseError) => void): void {
  if (c.subscriber.closed) return; // torn down by an emission on the way here: no request the teardown cannot end
  const operation = operationOf(request);
  c.requests.add(
    send(c.client, request)
      .pipe(
        timeout({
          first: c.requestTimeoutMs,
          scheduler: c.scheduler,
          with: () => throwError(() => new LeaseError('Timeout', operation, c.client.name, `no answer within ${c.requestTimeoutMs} ms`)),
        }),
      )
      .subscribe({ next: done, error: (e: unknown) => failed(failure(c, request, e)) }),
  );
}

/** The next attempt: an attempt ends here. */
function attempt(c: Campaign): void {
  if (c.busy || c.subscriber.closed) return;
  c.busy = true;
  c.wake?.unsubscribe();
  report(c); // a suspend since the last attempt may have used up the renew deadline: say so before the round trip
  const request = begin(c.state, c.scheduler.now(), c.candidate, c.want, c.wall());
  if (request.type === 'get') read(c);
  else write(c, request);
}

/** `refused`: after our renewal got a 409 (then a Lease with our identity and a record we never sent is another's). */
function read(c: Campaign, refused = false): void {
  call(
    c,
    { type: 'get' },
    (got) => {
      if (refused) {
        const check = sharedIdentity(c.own, got, c.candidate.identity);
        c.own = check.own;
        if (check.shared) c.subscriber.next({ type: 'error', error: identityInUse(c) });
      }
      const step = afterRead(c.state, got, c.scheduler.now(), c.candidate, c.want, c.wall());
      c.state = step.state;
      report(c);
      if (step.next) write(c, step.next, true);
      else finish(c);
    },
    (error) => {
      c.subscriber.next({ type: 'error', error });
      finish(c);
    },
  );
}

/**
 * `slow`: the write after a read (client-go's slow path), whose failure ends the attempt: one read per attempt, or a
 * server that fails writes and answers reads would be asked write, read, write… with no wait.
 */
function write(c: Campaign, request: LeaseRequest, slow = false): void {
  const startedAt = c.scheduler.now();
  const startedWall = c.wall();
  c.own = sentWrite(c.own, request);
  call(
    c,
    request,
    (written) => {
      if (written) c.state = afterWrite(c.state, written, startedAt, c.scheduler.now(), c.candidate, startedWall);
      finish(c);
    },
    (error) => {
      c.subscriber.next({ type: 'error', error });
      // Any failed fast-path renewal reads and tries again (client-go's slow path, tryAcquireOrRenew: a Lease deleted by
      // hand reads as missing and is created again now, not lost at the renew deadline); `refused` after a 409 alone.
      if (!slow && request.type === 'update' && request.purpose === 'renew') read(c, isConflict(error));
      else finish(c);
    },
  );
}

/**
 * Another candidate holds the Lease under our identity: both lead, each renewing over the other's record. client-go
 * documents the misuse and says nothing; this says it once, on `errors$`, or as a warning while nobody subscribes to it
 * (a `Conflict` marked a misuse: the protocol's own races are not warned of).
 */
function identityInUse(c: Campaign): LeaseError {
  const identity = c.candidate.identity;
  const error = new LeaseError(
    'Conflict',
    'update',
    c.client.name,
    `another candidate uses the identity "${identity}": the Lease holds a renewal under it that this candidate never sent, ` +
      'so both lead, each renewing over the other (give each candidate an identity of its own, e.g. its pod name)',
    409,
  );
  return misuse(error);
}

/** The end of an attempt: report, and wake for the next one. */
function finish(c: Campaign): void {
  c.busy = false;
  if (!c.want) {
    // A write that was in flight when we stopped wanting may have made us holder again.
    if (leading(c.state, c.scheduler.now(), c.wall())) c.state = stepDown(c.state);
    giveBack(c, c.requests);
  }
  report(c);
  c.wake?.unsubscribe();
  if (c.subscriber.closed) return; // the report's emission ended the campaign: no next attempt
  c.wake = timer(nextAttemptIn(c.state, c.scheduler.now(), c.candidate, c.random(), c.jitterFactor), c.scheduler).subscribe(() =>
    attempt(c),
  );
}

/**
 * Hands the Lease back if it is ours as we know it (client-go's ReleaseOnCancel); on a Conflict (our own renewal may
 * have landed meanwhile) reads and releases what is still ours, twice at most. Added to `onto` when given.
 */
function giveBack(c: Campaign, onto: Subscription | undefined): void {
  const request = release(c.state, c.wall(), c.candidate.identity);
  if (!request || c.releasing) return;
  c.releasing = true;
  // Each request counted while in flight: the next is sent from the previous one's handler, before it is counted out.
  const counted = (r: LeaseRequest): Observable<LeaseSnapshot | null> =>
    defer(() => {
      c.releases.next(c.releases.value + 1);
      return send(c.client, r).pipe(
        // requestTimeoutMs, as every other request: a release chains 5 requests at most (docs/replicas.md, SIGTERM).
        timeout({
          first: c.requestTimeoutMs,
          scheduler: c.scheduler,
          with: () =>
            throwError(() => new LeaseError('Timeout', operationOf(r), c.client.name, `no answer within ${c.requestTimeoutMs} ms`)),
        }),
        finalize(() => c.releases.next(c.releases.value - 1)),
      );
    });
  const go = (r: LeaseRequest, retries: number): Subscription =>
    counted(r).subscribe({
      next: (written) => {
        c.releasing = false;
        if (written) c.state = { ...c.state, observed: written, observedAt: c.scheduler.now() };
      },
      error: (error: unknown) => {
        c.releasing = false;
        if (!c.subscriber.closed) c.subscriber.next({ type: 'error', error: failure(c, r, error) });
        if (retries > 0 && isConflict(error))
          counted({ type: 'get' }).subscribe({
            next: (got) => {
              c.state = observe(c.state, got, c.scheduler.now());
              const again = release(c.state, c.wall(), c.candidate.identity);
              if (again && !c.releasing) {
                c.releasing = true;
                const retry = go(again, retries - 1); // not inside `onto?.add(…)`: it must run without `onto` too
                onto?.add(retry);
              }
            },
            error: () => undefined,
          });
      },
    });
  const first = go(request, 2);
  onto?.add(first);
}
