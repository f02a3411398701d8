import {
  BehaviorSubject,
  EMPTY,
  Observable,
  Subject,
  Subscription,
  asyncScheduler,
  defer,
  distinctUntilChanged,
  filter,
  finalize,
  map,
  merge,
  share,
  shareReplay,
  takeUntil,
  timeout,
  timer,
  type ObservableInput,
  type SchedulerLike,
} from 'rxjs';
import { LeaseError, isConflict } from './errors.ts';
import { assignShards, shardOf } from './hash.ts';
import { leaderElection, type LeaderElection } from './leaderElection.ts';
import type { LeaseClients } from './leaseClient.ts';
import { DEFAULT_TIMING, MIN_WAKE_MS, type ElectionTiming } from './machine.ts';
import { microTime, sameRecord, type LeaderElectionRecord } from './record.ts';
import { keeping, sameSet } from '../util/keeping.ts';

export interface ShardingOptions extends Partial<ElectionTiming> {
  /** Names the Leases: `<name>-shard-<i>` and `<name>-member-<identity>`. */
  readonly name: string;
  /** How many shards the keys are spread over (fixed for the life of the deployment). */
  readonly shards: number;
  /** Unique per process. */
  readonly identity: string;
  /** Each Lease request gives up after this long. Default renewDeadline / 2. */
  readonly requestTimeoutMs?: number;
  readonly scheduler?: SchedulerLike;
  readonly random?: () => number;
}

/** What one replica holds, for metrics. */
export interface ShardStatus {
  readonly name: string;
  readonly identity: string;
  readonly shards: number;
  /** The shards we may reconcile now. */
  readonly held: ReadonlySet<number>;
  /**
   * The shards the rendezvous assignment gives us, as we see the members (empty until we have
   * listed them once): the ones we campaign for, and `held` once their Leases are taken. Only a
   * listing changes the view: a member lapses once a listing shows its Lease unrenewed for a lease
   * duration; a replica whose listings fail keeps the view it had, and one whose own member Lease
   * is not renewed drops nobody (its assignment does not widen while its Lease writes fail).
   */
  readonly assigned: ReadonlySet<number>;
  /** The live members as we see them (us included). */
  readonly members: readonly string[];
  /** Whether the members have been listed once: until then `assigned` is empty and says nothing. */
  readonly listed: boolean;
}

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
  /** The shard of a key (FNV-1a of the key, modulo `shards`). */
  shardOf(key: string): number;
  /** Whether we may reconcile `key` now. */
  owns(key: string): boolean;
  /**
   * Runs `work` for `key` only if its shard is ours now (otherwise completes
   * at once, doing nothing), counting it in flight: a shard we hand over is
   * released only once its in-flight work has finished; a shard we *lose*
   * (renewals failed for a renew deadline) cancels its in-flight work at once.
   */
  gate<R>(key: string, work: () => ObservableInput<R>): Observable<R>;
}

const LABEL = 'rx-informer.io/sharding';

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
 * const apples = controller({ for: informer, reconcile: (key, ctx) => shards.gate(key, () => reconcileApple(key, ctx)) });
 * merge(apples.outcomes$, shards.acquired$.pipe(tap((s) => requeueShard(s)))).subscribe();
 * ```
 */
export function sharding(clients: LeaseClients, options: ShardingOptions): Sharding {
  if (!Number.isInteger(options.shards) || options.shards < 1)
    throw new TypeError(`sharding: shards must be a positive integer, got ${options.shards}`);
  const scheduler = options.scheduler ?? asyncScheduler;
  const timing: ElectionTiming = {
    leaseDurationMs: options.leaseDurationMs ?? DEFAULT_TIMING.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs ?? DEFAULT_TIMING.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs ?? DEFAULT_TIMING.retryPeriodMs,
  };
  const { name, identity } = options;
  const count = options.shards;
  const labels = { [LABEL]: name };
  const common = {
    identity,
    ...timing,
    scheduler,
    ...(options.random ? { random: options.random } : {}),
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
  };
  const requestTimeoutMs = options.requestTimeoutMs ?? timing.renewDeadlineMs / 2;

  // Mutable per-run state lives inside the Observable; these are for gate()/owns() while running.
  let active = new Set<number>();
  const inflight = new Map<number, number>();
  const drained = new Subject<number>();
  const lost = new Subject<number>();

  type Event = { type: 'status'; status: ShardStatus } | { type: 'acquired'; shard: number } | { type: 'error'; error: LeaseError };

  const run$ = new Observable<Event>((subscriber) => {
    const subscription = new Subscription();
    const wants = Array.from({ length: count }, () => new BehaviorSubject(false));
    const elections: LeaderElection[] = wants.map((want$, shard) =>
      leaderElection(clients.lease(`${name}-shard-${shard}`, labels), { ...common, want$ }),
    );
    const leading = new Array<boolean>(count).fill(false);
    const seen = new Map<string, { record: LeaderElectionRecord; at: number; resourceVersion?: string }>();
    /** Member Leases we are releasing (lapsed for us), by `<lease>@<resourceVersion>`; kept after a Conflict (not retried). */
    const releasing = new Set<string>();
    let members: string[] = [identity];
    let owners = assignShards(count, members, name);
    let reported: ShardStatus | undefined;
    /** Members listed at least once: until then `members` is only us, and `assigned` says nothing. */
    let listedOnce = false;

    const desired = (shard: number) => owners[shard] === identity;

    const update = () => {
      const next = new Set<number>();
      for (let shard = 0; shard < count; shard++) {
        const mine = desired(shard);
        if (leading[shard] && mine) next.add(shard);
        // Hand a shard over only once its in-flight work is done; ask for it as soon as it is ours by right.
        const want = mine || (leading[shard] === true && (inflight.get(shard) ?? 0) > 0);
        if (wants[shard]!.value !== want) wants[shard]!.next(want);
      }
      const before = active;
      active = next;
      for (const shard of next) if (!before.has(shard)) subscriber.next({ type: 'acquired', shard });
      const assigned = new Set<number>();
      if (listedOnce) for (let shard = 0; shard < count; shard++) if (desired(shard)) assigned.add(shard);
      const status: ShardStatus = { name, identity, shards: count, held: next, assigned, members, listed: listedOnce };
      if (
        !reported ||
        reported.listed !== listedOnce ||
        !sameSet(reported.held, next) ||
        !sameSet(reported.assigned, assigned) ||
        reported.members.join() !== members.join()
      ) {
        reported = status;
        subscriber.next({ type: 'status', status });
      }
    };

    // Membership: our own Lease, renewed like a leader's; everyone's, listed every retry period.
    const member = leaderElection(clients.lease(`${name}-member-${identity}`, labels), common);
    subscription.add(member.errors$.subscribe((error) => subscriber.next({ type: 'error', error })));
    /**
     * Whether our own member Lease is renewed. While it is not (our Lease writes fail for a renew deadline), nobody is
     * dropped from the view, so the assignment does not widen: when every write fails while listings answer, each replica
     * would otherwise see every other lapse, be assigned every shard, and list the whole collection. Once it is renewed
     * again, every member in the view gets a lease duration from then to show a renewal (their writes failed too).
     */
    let renewing = false;
    subscription.add(
      member.leader$.subscribe((lead) => {
        const regained = lead && !renewing;
        renewing = lead;
        if (!regained || !listedOnce) return;
        const now = scheduler.now();
        // Only those still members: a member dropped before our writes failed stays dropped.
        for (const [lease, entry] of seen)
          if (entry.at < now && members.includes(entry.record.holderIdentity)) seen.set(lease, { ...entry, at: now });
        recount();
      }),
    );
    let recheck: Subscription | undefined;
    function recount() {
      const now = scheduler.now();
      const alive = new Set([identity]);
      // Frozen (see `renewing`): keep every member we had, take in new ones.
      const frozen = listedOnce && !renewing;
      if (frozen) for (const m of members) alive.add(m);
      let next = Number.POSITIVE_INFINITY;
      for (const { record, at } of seen.values()) {
        const until = at + record.leaseDurationSeconds * 1000;
        if (record.holderIdentity !== '' && until > now) {
          alive.add(record.holderIdentity);
          if (!frozen) next = Math.min(next, until);
        }
      }
      members = [...alive].sort();
      owners = assignShards(count, members, name);
      if (!frozen) for (const [lease, entry] of seen) if (lapsed(entry, now)) cleanUp(lease, entry);
      update();
      recheck?.unsubscribe();
      // Drop a member the moment its Lease lapses for us, not at the next listing.
      recheck =
        Number.isFinite(next) && next - now < timing.retryPeriodMs
          ? timer(Math.max(next - now, MIN_WAKE_MS), scheduler).subscribe(recount)
          : undefined;
    }
    /** A member whose Lease went unchanged for a lease duration by our clock (released ones are not members). */
    const lapsed = (entry: { record: LeaderElectionRecord; at: number }, now: number) =>
      entry.record.holderIdentity !== '' &&
      entry.record.holderIdentity !== identity &&
      entry.at + entry.record.leaseDurationSeconds * 1000 <= now;
    /**
     * Release a lapsed member's Lease (holder "", quoting the resourceVersion we saw unchanged for a lease duration), so
     * that a replica seeing it for the first time does not count the dead member alive for a lease duration of its own.
     */
    function cleanUp(lease: string, entry: { record: LeaderElectionRecord; resourceVersion?: string }) {
      if (entry.resourceVersion === undefined) return;
      const key = `${lease}@${entry.resourceVersion}`;
      if (releasing.has(key)) return;
      releasing.add(key);
      const time = microTime(scheduler.now());
      const record: LeaderElectionRecord = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: time,
        renewTime: time,
        leaseTransitions: entry.record.leaseTransitions,
      };
      subscription.add(
        clients
          .lease(lease, labels)
          .update(entry.resourceVersion, record)
          .pipe(timeout({ first: requestTimeoutMs, scheduler }))
          .subscribe({
            next: (written) => {
              const before = seen.get(lease);
              if (before && before.resourceVersion === entry.resourceVersion)
                seen.set(lease, { record: written.record, at: scheduler.now(), resourceVersion: written.resourceVersion });
            },
            error: (error: unknown) => {
              if (!(error instanceof LeaseError && isConflict(error))) releasing.delete(key); // try again at the next listing
              subscriber.next({
                type: 'error',
                error: error instanceof LeaseError ? error : new LeaseError('Timeout', 'release', lease, String(error)),
              });
            },
          }),
      );
    }
    const list = () =>
      clients
        .list(labels)
        .pipe(timeout({ first: requestTimeoutMs, scheduler }))
        .subscribe({
          next: (leases) => {
            const now = scheduler.now();
            for (const lease of leases) {
              if (!lease.name.startsWith(`${name}-member-`)) continue;
              const before = seen.get(lease.name);
              if (!before || !sameRecord(before.record, lease.record))
                seen.set(lease.name, { record: lease.record, at: now, resourceVersion: lease.resourceVersion });
            }
            listedOnce = true;
            recount();
          },
          error: (error: unknown) => {
            subscriber.next({
              type: 'error',
              error: error instanceof LeaseError ? error : new LeaseError('Timeout', 'list', `${name}-member-*`, String(error)),
            });
          },
        });
    subscription.add(timer(0, timing.retryPeriodMs, scheduler).subscribe(() => subscription.add(list())));
    subscription.add(() => recheck?.unsubscribe());

    elections.forEach((election, shard) => {
      subscription.add(election.errors$.subscribe((error) => subscriber.next({ type: 'error', error })));
      subscription.add(
        election.leader$.subscribe((lead) => {
          if (leading[shard] && !lead) lost.next(shard); // cancel in-flight work of a shard we no longer hold
          leading[shard] = lead;
          update();
        }),
      );
    });
    subscription.add(drained.subscribe(() => update()));
    update();
    return () => {
      subscription.unsubscribe();
      active = new Set();
      for (const shard of [...inflight.keys()]) lost.next(shard);
    };
  }).pipe(share());

  const status$ = run$.pipe(
    filter((e): e is Extract<Event, { type: 'status' }> => e.type === 'status'),
    map((e) => e.status),
    shareReplay({ bufferSize: 1, refCount: true }),
  );
  const shardOfKey = (key: string) => shardOf(key, count);
  return {
    name,
    shards: count,
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
        filter((e): e is Extract<Event, { type: 'acquired' }> => e.type === 'acquired'),
        map((e) => e.shard),
      ),
    ),
    errors$: keeping(
      status$,
      run$.pipe(
        filter((e): e is Extract<Event, { type: 'error' }> => e.type === 'error'),
        map((e) => e.error),
      ),
    ),
    shardOf: shardOfKey,
    owns: (key) => active.has(shardOfKey(key)),
    gate: <R>(key: string, work: () => ObservableInput<R>): Observable<R> =>
      defer(() => {
        const shard = shardOfKey(key);
        if (!active.has(shard)) return EMPTY;
        inflight.set(shard, (inflight.get(shard) ?? 0) + 1);
        return defer(work).pipe(
          takeUntil(merge(lost.pipe(filter((s) => s === shard)))),
          finalize(() => {
            const left = (inflight.get(shard) ?? 1) - 1;
            if (left > 0) inflight.set(shard, left);
            else {
              inflight.delete(shard);
              drained.next(shard);
            }
          }),
        );
      }),
  };
}
