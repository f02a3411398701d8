import {
  BehaviorSubject,
  EMPTY,
  Observable,
  Subject,
  Subscription,
  defer,
  distinctUntilChanged,
  filter,
  finalize,
  map,
  share,
  shareReplay,
  takeUntil,
  tap,
  timeout,
  timer,
  type ObservableInput,
  type SchedulerLike,
  type Subscriber,
  type TeardownLogic,
} from 'rxjs';
import { LeaseError, isConflict, reportUnobserved } from './errors.ts';
import { shardOf } from './hash.ts';
import { countedElection, electionClocks, releasedOf, type LeaderElectionOptions } from './leaderElection.ts';
import type { LeaseClients } from './leaseClient.ts';
import { DEFAULT_TIMING, leaseRequestTimeoutMs, requestTimeoutProblem, timingProblem, type ElectionTiming } from './machine.ts';
import {
  initialSharding,
  MAX_IDENTITY_LENGTH,
  SHARDS_LABEL,
  STALE_MEMBER_MS,
  stepSharding,
  type ShardingConfig,
  type ShardingEffect,
  type ShardingInput,
  type ShardStatus,
} from './shardingMachine.ts';
import { keeping, sameSet } from '../util/keeping.ts';
import { unobservedReporter, type UnobservedReporter } from '../5-informer/unobservedErrors.ts';
import { checkOptionNames } from '../util/optionNames.ts';

/**
 * How many requests' time a members' listing is given as a whole: it emits once, after its last page, so a bound of
 * one request would fail every listing of a group past one page (500 members) on a server slower than ~1 s a page
 * (audit25), and stale members would never be cleaned. 10 pages are 5,000 members.
 */
const LISTING_PAGES_TIMED = 10;

export interface ShardingOptions extends Partial<ElectionTiming> {
  /** Names the Leases: `<name>-shard-<i>` and `<name>-member-<identity>`. */
  readonly name: string;
  /** How many shards the keys are spread over (fixed for the life of the deployment). */
  readonly shards: number;
  /**
   * Unique per process (not the pid: in a container it is often 1 in every pod), e.g.
   * `${os.hostname().toLowerCase()}-${crypto.randomUUID()}`. It names the member Lease, `<name>-member-<identity>`: a Kubernetes
   * object name's characters (lowercase letters, digits, `-`, `.`), 253 at most in all. Not empty.
   */
  readonly identity: string;
  /**
   * Each Lease request gives up after this long. Default renewDeadline / 2. The clients' own timers (set by
   * `httpLeaseClients(kc, { requestTimeoutMs })`, default 5 s) bound each request too: the shorter wins. The members'
   * listing is paged (500 Leases a page) and timed as a whole: it gives up after 10 times this long (each of its
   * pages bounded by the client's own timer).
   */
  readonly requestTimeoutMs?: number;
  /**
   * How long a shard handed over to a joining replica waits for its in-flight `gate()` work before it is released
   * anyway, that work cancelled as at a lost lead. Default `leaseDurationMs`: a join then moves a shard no slower than a
   * death does, and one hung reconcile cannot leave the shard with no reconciler for ever. `Infinity`: no bound.
   */
  readonly handoverDrainMs?: number;
  /** Clock and timers, as {@link LeaderElectionOptions.scheduler}: default timed by a monotonic clock, one given used as is. */
  readonly scheduler?: SchedulerLike;
  readonly random?: () => number;
  /**
   * A failed Lease request (a `Conflict` aside) while nothing subscribes to `errors$` is reported with
   * `process.emitWarning`, as {@link LeaderElectionOptions.reportUnobservedErrors}: a Lease API denied by RBAC would
   * otherwise leave every shard unheld, silently. `false`: none. Default true.
   */
  readonly reportUnobservedErrors?: boolean;
}

/** Every option of {@link sharding}, from its type (a new one is an error here until listed). */
const SHARDING_OPTION_NAMES = Object.keys({
  name: true,
  shards: true,
  identity: true,
  leaseDurationMs: true,
  renewDeadlineMs: true,
  retryPeriodMs: true,
  handoverDrainMs: true,
  requestTimeoutMs: true,
  scheduler: true,
  random: true,
  reportUnobservedErrors: true,
} satisfies Record<keyof ShardingOptions, true>);

export type { ShardStatus } from './shardingMachine.ts';

export interface Sharding {
  readonly name: string;
  readonly shards: number;
  /**
   * The shards this replica may reconcile, after every change (replays the
   * latest; starts empty). Cold and shared: subscribing joins the group, the
   * last unsubscribe leaves it and releases every Lease held.
   */
  readonly held$: Observable<ReadonlySet<number>>;
  /**
   * The shards the assignment gives us (see {@link ShardStatus.assigned}), after every change
   * (replays the latest). They come before `held$`: a dead member's shards are assigned here
   * when its member Lease lapses for us, and held once their own Leases are taken. A sharded
   * informer starts caching them then. Emits nothing until the members have been listed once
   * (the first emission is the first assignment known, empty or not).
   */
  readonly assigned$: Observable<ReadonlySet<number>>;
  /** held$ with the membership view. */
  readonly status$: Observable<ShardStatus>;
  /** Each shard as it becomes ours (re-enqueue its keys then). */
  readonly acquired$: Observable<number>;
  /** Every failed Lease request. */
  readonly errors$: Observable<LeaseError>;
  /**
   * Emits once and completes when no release of its Leases (the shards' and our member Lease's) is in flight: at once if
   * none is, else once each has been answered, refused or timed out, as `leaderElection().released$` (5 ×
   * `requestTimeoutMs` at worst, the releases running side by side). Does not join the group. Subscribe after the last
   * subscriber has left (a SIGTERM), then exit: peers take the shards over within a retry period, not a lease duration.
   */
  readonly released$: Observable<void>;
  /** The shard of a key (FNV-1a of the key, modulo `shards`). */
  shardOf(key: string): number;
  /** Whether we may reconcile `key` now. */
  owns(key: string): boolean;
  /**
   * Runs `work` for `key` only if its shard is ours now (otherwise completes
   * at once, doing nothing), counting it in flight: a shard we hand over is
   * released once its in-flight work has finished, or after `handoverDrainMs`
   * (that work cancelled); a shard we *lose* (renewals failed for a renew
   * deadline) cancels its in-flight work at once. Cancelling unsubscribes, and
   * aborts the signal `work` is given: a promise runs on unless it honours it
   * (docs/replicas.md).
   */
  gate<R>(key: string, work: (signal: AbortSignal) => ObservableInput<R>): Observable<R>;
}

const LABEL = 'rx-informer.io/sharding';

/** A Kubernetes object name (DNS-1123 subdomain, its length checked apart). */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Spreads keys over `shards` shards, each held through its own Lease with the
 * same leader-election rules; replicas agree who should hold which shard by
 * capped rendezvous hashing over the live members (one member Lease each,
 * renewed like a leader's; at most ⌈shards / members⌉ each), so a joining
 * replica takes over its share and a dying one's shards are taken over as its
 * Leases lapse. Who may reconcile a key is decided by the shard's Lease alone:
 * views of the membership may differ for a while, never two holders.
 *
 * ```
 * 4 shards, replicas a (from 0) and b (from 5 000), default timing, instant answers, frames in ms;
 * a key of shard 0 in flight at a (gate) from 5 500 to 8 500:
 *   a held$:  (eabcd) 5993ms h            e {}  a {0}  b {0,1}  c {0,1,2}  d {0,1,2,3}  h {2,3}
 *   b held$:  5000ms e 1999ms x 1999ms b  x {1}, b {0,1} as above
 * a's listing at 6 000 sees b's member Lease: 0 and 1 are b's by right, so a takes no new key of
 * theirs from then on, releases 1 at once and 0 once its in-flight key finished (8 500); b takes
 * each at its next read (7 000, 9 000). Which shards move depends on the identities (hashing).
 * ```
 *
 * ## Example
 * ```ts
 * const shards = sharding(httpLeaseClients(kc, { namespace: 'ops' }), { name: 'apples', shards: 8, identity });
 * // A promise is not stopped by cancelling: reconcileApple must honour the signal (aborted when the shard is lost or
 * // handed over; the controller's own when it stops), or be shorter than leaseDuration − renewDeadline.
 * const apples = controller({
 *   for: informer,
 *   reconcile: (key, ctx) => shards.gate(key, (signal) => reconcileApple(key, { ...ctx, signal: AbortSignal.any([ctx.signal, signal]) })),
 * });
 * merge(apples.outcomes$, shards.acquired$.pipe(tap((s) => requeueShard(s)))).subscribe();
 * ```
 *
 * @throws TypeError when `shards` is not a positive integer, `identity` is empty or longer than 253 characters, a Lease
 *   name (`<name>-member-<identity>`, `<name>-shard-<i>`) is no DNS-1123 subdomain of 253 characters at most,
 *   `requestTimeoutMs` is not a positive number, or the timing breaks client-go's rules
 *   (leaseDuration > renewDeadline > 1.2 × retryPeriod), as {@link leaderElection}.
 */
export function sharding(clients: LeaseClients, options: ShardingOptions): Sharding {
  checkOptionNames('sharding', options, SHARDING_OPTION_NAMES);
  if (!Number.isInteger(options.shards) || options.shards < 1)
    throw new TypeError(`sharding: shards must be a positive integer, got ${options.shards}`);
  // Every other member ignores a longer one (MAX_IDENTITY_LENGTH): we would hold shards nobody else counts.
  if (typeof options.identity !== 'string' || options.identity === '' || options.identity.length > MAX_IDENTITY_LENGTH)
    throw new TypeError(`sharding: identity must be a non-empty string of at most ${MAX_IDENTITY_LENGTH} characters`);
  // The Leases must be nameable: the API server refuses (422) another name for ever, and the group never counts us.
  for (const lease of [`${options.name}-member-${options.identity}`, `${options.name}-shard-${options.shards - 1}`])
    if (lease.length > 253 || !DNS_SUBDOMAIN.test(lease))
      throw new TypeError(
        `sharding: the Lease name "${lease.slice(0, 300)}" (from \`name\` and \`identity\`) is not a Kubernetes object name: ` +
          'lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit, 253 characters at most ' +
          '(e.g. identity `${hostname().toLowerCase()}-${randomUUID()}`)',
      );
  const { scheduler, wall } = electionClocks(options.scheduler);
  const timing: ElectionTiming = {
    leaseDurationMs: options.leaseDurationMs ?? DEFAULT_TIMING.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs ?? DEFAULT_TIMING.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs ?? DEFAULT_TIMING.retryPeriodMs,
  };
  // Here, as leaderElection() does, not when the first shard's election starts at subscribe.
  const problem = timingProblem(timing);
  if (problem) throw new TypeError(`sharding: ${problem}`);
  const timeoutProblem = requestTimeoutProblem(options.requestTimeoutMs);
  if (timeoutProblem) throw new TypeError(`sharding: ${timeoutProblem}`);
  const drain: unknown = options.handoverDrainMs;
  if (drain !== undefined && !(typeof drain === 'number' && drain > 0))
    throw new TypeError(
      `sharding: \`handoverDrainMs\` must be a positive number of milliseconds (Infinity: no bound; left out: leaseDurationMs), got ${String(drain)}`,
    );
  // One reading, for the listings, the member releases and deletions, and every election.
  const requestTimeoutMs = leaseRequestTimeoutMs(options.requestTimeoutMs, timing);
  const config: ShardingConfig = {
    name: options.name,
    identity: options.identity,
    shards: options.shards,
    retryPeriodMs: timing.retryPeriodMs,
    leaseDurationMs: timing.leaseDurationMs,
    handoverDrainMs: options.handoverDrainMs === Number.POSITIVE_INFINITY ? undefined : (options.handoverDrainMs ?? timing.leaseDurationMs),
    // Stale member Leases are deleted only by clients that can (LeaseClient.delete is optional).
    staleMemberMs:
      typeof clients.lease(`${options.name}-member-${options.identity}`).delete === 'function'
        ? Math.max(10 * timing.leaseDurationMs, STALE_MEMBER_MS)
        : undefined,
  };
  const shell: Shell = {
    clients,
    config,
    labels: { [LABEL]: options.name, [SHARDS_LABEL]: String(options.shards) },
    scheduler,
    wall,
    requestTimeoutMs,
    unobserved: unobservedReporter(`sharding ${options.name}`, () => scheduler.now(), options.reportUnobservedErrors !== false),
    election: {
      identity: options.identity,
      // Their faults are this sharding's, reported (or not) by it.
      reportUnobservedErrors: false,
      ...timing,
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
      ...(options.random ? { random: options.random } : {}),
      requestTimeoutMs,
    },
    // For gate()/owns() while running; `inflight` outlives a run (work cancelled at its end still finishes).
    active: new Set<number>(),
    inflight: new Map<number, number>(),
    drained: new Subject<number>(),
    lost: new Subject<number>(),
    releases: new BehaviorSubject(0),
  };
  const run$ = new Observable<ShardingEvent>((subscriber) => run(shell, subscriber)).pipe(share());
  const status$ = run$.pipe(
    filter((e): e is Extract<ShardingEvent, { type: 'status' }> => e.type === 'status'),
    map((e) => e.status),
    shareReplay({ bufferSize: 1, refCount: true }),
  );
  const shardOfKey = (key: string) => shardOf(key, config.shards);
  return {
    name: config.name,
    shards: config.shards,
    status$,
    held$: status$.pipe(
      map((s) => s.held),
      distinctUntilChanged(sameSet),
    ),
    assigned$: status$.pipe(
      filter((s) => s.listed),
      map((s) => s.assigned),
      distinctUntilChanged(sameSet),
    ),
    acquired$: keeping(
      status$,
      run$.pipe(
        filter((e): e is Extract<ShardingEvent, { type: 'acquired' }> => e.type === 'acquired'),
        map((e) => e.shard),
      ),
    ),
    // Each subscriber counts as an observer (before the run it starts): while there is one, no fault is reported as unobserved.
    errors$: new Observable<LeaseError>((subscriber) => {
      subscriber.add(shell.unobserved.observed());
      return keeping(
        status$,
        run$.pipe(
          filter((e): e is Extract<ShardingEvent, { type: 'error' }> => e.type === 'error'),
          map((e) => e.error),
        ),
      ).subscribe(subscriber);
    }),
    released$: releasedOf(shell.releases),
    shardOf: shardOfKey,
    owns: (key) => shell.active.has(shardOfKey(key)),
    gate: <R>(key: string, work: (signal: AbortSignal) => ObservableInput<R>) => gated(shell, shardOfKey(key), work),
  };
}

type ShardingEvent =
  | { readonly type: 'status'; readonly status: ShardStatus }
  | { readonly type: 'acquired'; readonly shard: number }
  | { readonly type: 'error'; readonly error: LeaseError };

/** What the shell of one `sharding()` keeps: its settings, and what gate()/owns() share with the running machine. */
interface Shell {
  readonly clients: LeaseClients;
  readonly config: ShardingConfig;
  /** Written on every Lease of ours: the group (listed by it) and our shard count (see `SHARDS_LABEL`). */
  readonly labels: Readonly<Record<string, string>>;
  readonly scheduler: SchedulerLike;
  /** The wall time written into Leases (see `electionClocks`). */
  readonly wall: () => number;
  readonly requestTimeoutMs: number;
  /** The report of the faults nobody observes on `errors$`. */
  readonly unobserved: UnobservedReporter;
  /** Options of every election (the member Lease's and each shard's). */
  readonly election: LeaderElectionOptions;
  /** The shards held now (the machine's `held`), empty while not running. */
  active: ReadonlySet<number>;
  /** Work in flight per shard (gate). */
  readonly inflight: Map<number, number>;
  readonly drained: Subject<number>;
  readonly lost: Subject<number>;
  /** Releases in flight, of every election of every run (for `released$`): they outlive the run that sent them. */
  readonly releases: BehaviorSubject<number>;
}

/**
 * `work` if the shard is held now, counted in flight, cancelled if the shard is lost (or its handover's drain bound
 * passed): unsubscribed, and its signal aborted (a promise cannot be unsubscribed from).
 */
function gated<R>(shell: Shell, shard: number, work: (signal: AbortSignal) => ObservableInput<R>): Observable<R> {
  return defer(() => {
    if (!shell.active.has(shard)) return EMPTY;
    shell.inflight.set(shard, (shell.inflight.get(shard) ?? 0) + 1);
    const abort = new AbortController();
    let ended = false;
    return defer(() => work(abort.signal)).pipe(
      // The work's own end (before takeUntil, whose cancel is no end of the work's).
      tap({ complete: () => (ended = true), error: () => (ended = true) }),
      takeUntil(shell.lost.pipe(filter((s) => s === shard))),
      finalize(() => {
        // Cancelled (lost, drained out, or unsubscribed), not ended: tell a promise to stop.
        if (!ended) abort.abort(new Error(`shard ${shard} of ${shell.config.name} is no longer held here`));
        const left = (shell.inflight.get(shard) ?? 1) - 1;
        if (left > 0) shell.inflight.set(shard, left);
        else {
          shell.inflight.delete(shard);
          shell.drained.next(shard);
        }
      }),
    );
  });
}

/**
 * One run of the group (from the first subscriber to the last): the elections, the listings and the timers, feeding
 * the machine one input at a time (an input that arrives while effects are carried out waits its turn) and carrying
 * out its effects.
 */
function run(shell: Shell, subscriber: Subscriber<ShardingEvent>): TeardownLogic {
  const { clients, config, labels, scheduler } = shell;
  const subscription = new Subscription();
  const report = (error: LeaseError) => {
    reportUnobserved(shell.unobserved, error);
    subscriber.next({ type: 'error', error });
  };
  const wants = Array.from({ length: config.shards }, () => new BehaviorSubject(false));
  let state = initialSharding(config);
  let recheck: Subscription | undefined;
  const queue: ShardingInput[] = [];
  let stepping = false;
  const feed = (input: ShardingInput) => {
    queue.push(input);
    if (stepping) return;
    stepping = true;
    // Stops when the run ends meanwhile (its last subscriber left while an effect was carried out).
    for (let next = queue.shift(); next !== undefined && !subscriber.closed; next = queue.shift()) {
      const step = stepSharding(config, state, next, scheduler.now(), new Set(shell.inflight.keys()), shell.wall());
      state = step.state;
      shell.active = state.held;
      for (const effect of step.effects) if (!subscriber.closed) carryOut(effect);
    }
    queue.length = 0;
    stepping = false;
  };
  const carryOut = (effect: ShardingEffect) => {
    switch (effect.type) {
      case 'want':
        return wants[effect.shard]!.next(effect.want);
      case 'lost':
        return shell.lost.next(effect.shard);
      case 'acquired':
      case 'status':
        return subscriber.next(effect);
      case 'recheck':
        recheck?.unsubscribe();
        recheck = effect.inMs === undefined ? undefined : timer(effect.inMs, scheduler).subscribe(() => feed({ type: 'recheck' }));
        return;
      case 'releaseMember':
        return subscription.add(releaseMember(shell, effect, feed, report));
      case 'deleteMember':
        return subscription.add(deleteMember(shell, effect, feed, report));
      case 'invalid':
        return report(new LeaseError('ValidationFailed', 'list', effect.lease, effect.message));
    }
  };

  // Membership: our own Lease, renewed like a leader's; everyone's, listed every retry period.
  const member = countedElection(clients.lease(`${config.name}-member-${config.identity}`, labels), shell.election, shell.releases);
  subscription.add(member.errors$.subscribe(report));
  subscription.add(member.leader$.subscribe((lead) => feed({ type: 'renewing', lead })));
  // Each listing says when it was sent: one answered after a newer record was seen (listings overlap on a server
  // slower than the retry period; our release of a lapsed member's Lease may be written while one is on its way)
  // does not bring that record back (see `listed` in shardingMachine.ts).
  const list = () => {
    const startedAt = scheduler.now();
    return clients
      .list({ [LABEL]: config.name })
      .pipe(timeout({ first: shell.requestTimeoutMs * LISTING_PAGES_TIMED, scheduler }))
      .subscribe({
        next: (leases) => feed({ type: 'listed', leases, startedAt }),
        error: (error: unknown) => report(LeaseError.of(error, 'list', `${config.name}-member-*`, 'Timeout')),
      });
  };
  subscription.add(timer(0, config.retryPeriodMs, scheduler).subscribe(() => subscription.add(list())));
  subscription.add(() => recheck?.unsubscribe());

  wants.forEach((want$, shard) => {
    const election = countedElection(clients.lease(`${config.name}-shard-${shard}`, labels), { ...shell.election, want$ }, shell.releases);
    subscription.add(election.errors$.subscribe(report));
    subscription.add(election.leader$.subscribe((lead) => feed({ type: 'leading', shard, lead })));
  });
  subscription.add(shell.drained.subscribe(() => feed({ type: 'drained' })));
  feed({ type: 'drained' });
  return () => {
    subscription.unsubscribe();
    shell.active = new Set();
    for (const shard of [...shell.inflight.keys()]) shell.lost.next(shard);
  };
}

/** Writes the release of a lapsed member's Lease and tells the machine how it went (errors reported). */
function releaseMember(
  shell: Shell,
  effect: Extract<ShardingEffect, { type: 'releaseMember' }>,
  feed: (input: ShardingInput) => void,
  report: (error: LeaseError) => void,
): Subscription {
  const { lease, resourceVersion } = effect;
  return shell.clients
    .lease(lease, shell.labels)
    .update(resourceVersion, effect.record)
    .pipe(timeout({ first: shell.requestTimeoutMs, scheduler: shell.scheduler }))
    .subscribe({
      next: (written) => feed({ type: 'memberReleased', lease, resourceVersion, written }),
      error: (error: unknown) => {
        feed({ type: 'memberReleaseFailed', lease, resourceVersion, conflict: isConflict(error) });
        report(LeaseError.of(error, 'release', lease, 'Timeout'));
      },
    });
}

/**
 * Deletes a stale member Lease quoting the resourceVersion seen, and tells the machine how it went: a 409 or 404 is
 * a lost race (renewed, taken or deleted meanwhile), not reported; any other failure is.
 */
function deleteMember(
  shell: Shell,
  effect: Extract<ShardingEffect, { type: 'deleteMember' }>,
  feed: (input: ShardingInput) => void,
  report: (error: LeaseError) => void,
): Subscription {
  const { lease, resourceVersion } = effect;
  const client = shell.clients.lease(lease, shell.labels);
  if (!client.delete) return Subscription.EMPTY;
  return client
    .delete(resourceVersion)
    .pipe(timeout({ first: shell.requestTimeoutMs, scheduler: shell.scheduler }))
    .subscribe({
      next: () => feed({ type: 'memberDeleted', lease, resourceVersion }),
      error: (error: unknown) => {
        const lostRace = error instanceof LeaseError && (error.reason === 'Conflict' || error.reason === 'NotFound');
        const forbidden = error instanceof LeaseError && error.reason === 'Forbidden';
        feed({ type: 'memberDeleteFailed', lease, resourceVersion, lostRace, forbidden });
        if (lostRace) return;
        if (forbidden) {
          // The answer's words without the prefix the new error's constructor writes again.
          const prefix = `delete lease ${lease}: `;
          const said = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
          return report(
            new LeaseError(
              'Forbidden',
              'delete',
              lease,
              `${said}; stale member Leases are not deleted by this replica from now on ` +
                '(grant `delete` on leases to its Role, or delete released ones with kubectl: docs/replicas.md)',
              error.status,
            ),
          );
        }
        report(LeaseError.of(error, 'delete', lease, 'Timeout'));
      },
    });
}
