/**
 * Replicas sharing keys through `sharding()` in virtual time (drifting clocks,
 * latencies, faults, a partition, a late joiner, a death), each with a sharded
 * informer over one server of `keys` ConfigMaps. Records which shards each
 * replica held when, every reconcile run through the informer's `gate`, and
 * every reconcile that found its key missing from the replica's cache.
 */
import { defer, mergeMap, NEVER, of, throwError, timer, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { driftingScheduler } from '../../src/testing/driftingScheduler.ts';
import { FakeLeaseServer, type FakeLeaseFault, type FakeLeaseWrite } from '../../src/testing/fakeLeases.ts';
import { DEFAULT_TIMING } from '../../src/leaderelection/machine.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { prng, type Interval } from './simulation.ts';
import { ConfigMap } from '../../src/0-model/resources.ts';
import type { ListWatch } from '../../src/1-transport/listWatch.ts';
import type { Store } from '../../src/4-store/store.ts';
import { shardedInformer } from '../../src/5-informer/shardedInformer.ts';
import { listPage, networkFailure } from '../../src/testing/fakeListWatch.ts';

export interface ShardingPlan {
  readonly seed: number;
  readonly shards: number;
  readonly drift: number;
  readonly rates: readonly number[];
  /** Start times; the last replica joins late. */
  readonly startAt: readonly number[];
  readonly maxLatencyMs: number;
  readonly faultRate: number;
  readonly chaosUntil: number;
  /** This replica starts after the kill (the last one, with a new identity), when the survivors hold the dead one's shards. */
  readonly newcomer?: number;
  /** This replica is killed (no release) at `killAt`. */
  readonly kill: number;
  readonly killAt: number;
  readonly keys: number;
  /** Every Lease write of every replica fails (500) from `from` until `until`, while reads and listings answer. */
  readonly writeOutage?: { readonly from: number; readonly until: number };
  /** This replica is cut off (Leases and lists) from `from` until `until`. */
  readonly partition?: { readonly replica: number; readonly from: number; readonly until: number };
}

export interface ShardingResult {
  readonly plan: ShardingPlan;
  /** shard → who held it when. */
  readonly held: Map<number, Interval[]>;
  readonly reconciles: Map<string, Interval[]>;
  readonly end: number;
  /** What each live replica held at the end. */
  readonly final: Map<number, ReadonlySet<number>>;
  /** Reconciles that started while the key was not in the replica's cache (must be none). */
  readonly cold: string[];
  /** What each live replica had cached at the end, and which shards its informer owned. */
  readonly cached: Map<number, { readonly keys: readonly string[]; readonly owned: ReadonlySet<number> }>;
  readonly shardOf: (key: string) => number;
  /** shard → when each replica's sharded informer owned it (held and cached). */
  readonly owned: Map<number, Interval[]>;
  /** shard → when each replica's sharded informer had its objects in the cache (held or assigned). */
  readonly inCache: Map<number, Interval[]>;
  /** Every Lease write the server applied (base time). */
  readonly writes: readonly FakeLeaseWrite[];
  /** replica → each `status$` emission (base time): the members it saw and the shards assigned to it. */
  readonly views: Map<number, View[]>;
}

export interface View {
  readonly at: number;
  readonly members: readonly string[];
  readonly assigned: ReadonlySet<number>;
}

/** The longest a list takes. */
export const LIST_MS = 2_000;

const FAULTS: readonly FakeLeaseFault[] = ['status500', 'dropBefore', 'dropAfter', 'hang'];

export function runSharding(plan: ShardingPlan): ShardingResult {
  const base = new TestScheduler(() => true);
  const end = Math.max(plan.killAt + 40_000, ...plan.startAt.map((at) => at + 20_000));
  base.maxFrames = end;
  const random = prng(plan.seed);
  const server = new FakeLeaseServer(base);
  const held = new Map<number, Interval[]>();
  const reconciles = new Map<string, Interval[]>();
  const final = new Map<number, ReadonlySet<number>>();
  const open = new Map<string, Interval>();
  const subs: Subscription[][] = [];
  const cold: string[] = [];
  const owned = new Map<number, Interval[]>();
  const openOwned = new Map<string, Interval>();
  const inCache = new Map<number, Interval[]>();
  const views = new Map<number, View[]>();
  const openCached = new Map<string, Interval>();
  const cached = new Map<number, { keys: readonly string[]; owned: ReadonlySet<number> }>();
  let shardOfKey: (key: string) => number = () => 0;
  const objects = Array.from({ length: plan.keys }, (_, i) => ({
    metadata: { name: `apple-${i}`, namespace: 'default', resourceVersion: String(i + 1) },
  }));

  plan.rates.forEach((rate, index) => {
    let dead = false;
    const clients = server.clients({
      client: `r${index}`,
      latencyMs: () => random() * plan.maxLatencyMs,
      fault: (request) =>
        plan.writeOutage &&
        request.operation !== 'get' &&
        request.operation !== 'list' &&
        base.now() >= plan.writeOutage.from &&
        base.now() < plan.writeOutage.until
          ? 'status500'
          : base.now() < plan.chaosUntil && random() < plan.faultRate
            ? (FAULTS[Math.floor(random() * FAULTS.length)] ?? 'ok')
            : 'ok',
      partitioned: () => cutOff(),
    });
    const cutOff = () =>
      dead || (plan.partition?.replica === index && base.now() >= plan.partition.from && base.now() < plan.partition.until);
    const scheduler = driftingScheduler(base, rate, index * 1_000_000);
    const group = sharding(clients, { name: 'apples', shards: plan.shards, identity: `r${index}`, ...DEFAULT_TIMING, scheduler, random });
    shardOfKey = group.shardOf;
    // The objects never change: a list takes up to LIST_MS (or fails when cut off), a watch brings nothing.
    const listWatch: ListWatch = {
      list: () =>
        defer(() => {
          const failing = cutOff();
          return timer(1 + random() * (LIST_MS - 1), base).pipe(
            mergeMap(() =>
              failing || cutOff()
                ? throwError(() => networkFailure('list'))
                : of(
                    listPage(
                      String(plan.keys),
                      objects.map((o) => structuredClone(o)),
                    ),
                  ),
            ),
          );
        }),
      watch: () => (cutOff() ? throwError(() => networkFailure('watch')) : NEVER),
    };
    const apples = shardedInformer(listWatch, ConfigMap, group, { scheduler, random });
    let store: Store<ConfigMap> | undefined;
    const mine: Subscription[] = [];
    const running = new Set<Interval>();
    subs[index] = mine;
    const close = (shard: number) => {
      const interval = open.get(`${index}/${shard}`);
      if (interval) interval.end = base.now();
      open.delete(`${index}/${shard}`);
    };
    const start = () => {
      mine.push(apples.store$.subscribe((s) => (store = s)));
      mine.push(
        apples.owned$.subscribe((now) => {
          cached.set(index, { keys: store?.keys() ?? [], owned: now });
          for (let shard = 0; shard < plan.shards; shard++) {
            const id = `${index}/${shard}`;
            if (now.has(shard) && !openOwned.has(id)) {
              const interval: Interval = { replica: index, start: base.now(), end: Number.POSITIVE_INFINITY };
              openOwned.set(id, interval);
              owned.set(shard, [...(owned.get(shard) ?? []), interval]);
            } else if (!now.has(shard) && openOwned.has(id)) {
              openOwned.get(id)!.end = base.now();
              openOwned.delete(id);
            }
          }
        }),
      );
      mine.push(
        apples.cached$.subscribe((now) => {
          for (let shard = 0; shard < plan.shards; shard++) {
            const id = `${index}/${shard}`;
            if (now.has(shard) && !openCached.has(id)) {
              const interval: Interval = { replica: index, start: base.now(), end: Number.POSITIVE_INFINITY };
              openCached.set(id, interval);
              inCache.set(shard, [...(inCache.get(shard) ?? []), interval]);
            } else if (!now.has(shard) && openCached.has(id)) {
              openCached.get(id)!.end = base.now();
              openCached.delete(id);
            }
          }
        }),
      );
      mine.push(apples.store$.subscribe((s) => cached.set(index, { keys: s.keys(), owned: cached.get(index)?.owned ?? new Set() })));
      mine.push(
        group.status$.subscribe(({ members, assigned, listed }) => {
          if (listed) views.set(index, [...(views.get(index) ?? []), { at: base.now(), members, assigned }]);
        }),
      );
      mine.push(
        group.held$.subscribe((now) => {
          final.set(index, now);
          for (let shard = 0; shard < plan.shards; shard++) {
            const was = open.has(`${index}/${shard}`);
            if (now.has(shard) && !was) {
              const interval: Interval = { replica: index, start: base.now(), end: Number.POSITIVE_INFINITY };
              open.set(`${index}/${shard}`, interval);
              held.set(shard, [...(held.get(shard) ?? []), interval]);
            } else if (!now.has(shard) && was) close(shard);
          }
        }),
      );
      // A worker that keeps trying random keys; each reconcile takes up to 3 s.
      mine.push(
        timer(0, 1_000, scheduler).subscribe(() => {
          const key = `default/apple-${Math.floor(random() * plan.keys)}`;
          const interval: Interval = { replica: index, start: base.now(), end: Number.POSITIVE_INFINITY };
          const ended = () => {
            interval.end = base.now();
            running.delete(interval);
          };
          mine.push(
            apples
              .gate(key, () => {
                if (store?.get(key) === undefined) cold.push(`r${index} reconciled ${key} at ${base.now()} from a cold cache`);
                reconciles.set(key, [...(reconciles.get(key) ?? []), interval]);
                running.add(interval);
                return timer(1 + random() * 3_000, base);
              })
              .subscribe({ complete: ended, error: ended }),
          );
        }),
      );
    };
    base.schedule(start, plan.startAt[index] ?? 0);
    if (index === plan.kill)
      base.schedule(() => {
        dead = true;
        for (let shard = 0; shard < plan.shards; shard++) {
          close(shard);
          for (const opened of [openOwned, openCached]) {
            const interval = opened.get(`${index}/${shard}`);
            if (interval) interval.end = base.now();
            opened.delete(`${index}/${shard}`);
          }
        }
        for (const s of mine.splice(0)) s.unsubscribe();
        for (const interval of running) interval.end = base.now(); // died with the process
        final.delete(index);
        cached.delete(index);
      }, plan.killAt);
  });
  base.schedule(() => {
    for (const interval of open.values()) interval.end = base.now();
    for (const interval of openOwned.values()) interval.end = base.now();
    for (const interval of openCached.values()) interval.end = base.now();
  }, end);
  base.flush();
  for (const list of subs) for (const s of list ?? []) s.unsubscribe();
  // An interrupted reconcile (unsubscribed by gate) ends when it was cancelled; close any left open at the end.
  for (const list of reconciles.values()) for (const i of list) if (!Number.isFinite(i.end)) i.end = end;
  return { plan, held, reconciles, end, final, cold, cached, shardOf: shardOfKey, owned, inCache, writes: server.writes, views };
}
