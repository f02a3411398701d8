/**
 * Replicas sharing keys through `sharding()` in virtual time (drifting clocks,
 * latencies, faults, a late joiner, a death). Records which shards each
 * replica held when, and every reconcile run through `gate`.
 */
import { timer, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { driftingScheduler } from '../../src/leaderelection/driftingScheduler.ts';
import { FakeLeaseServer, type FakeLeaseFault } from '../../src/leaderelection/fakeLeases.ts';
import { DEFAULT_TIMING } from '../../src/leaderelection/machine.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { prng, type Interval } from './simulation.ts';

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
  /** This replica is killed (no release) at `killAt`. */
  readonly kill: number;
  readonly killAt: number;
  readonly keys: number;
}

export interface ShardingResult {
  readonly plan: ShardingPlan;
  /** shard → who held it when. */
  readonly held: Map<number, Interval[]>;
  readonly reconciles: Map<string, Interval[]>;
  readonly end: number;
  /** What each live replica held at the end. */
  readonly final: Map<number, ReadonlySet<number>>;
}

const FAULTS: readonly FakeLeaseFault[] = ['status500', 'dropBefore', 'dropAfter', 'hang'];

export function runSharding(plan: ShardingPlan): ShardingResult {
  const base = new TestScheduler(() => true);
  const end = plan.killAt + 60_000;
  base.maxFrames = end;
  const random = prng(plan.seed);
  const server = new FakeLeaseServer(base);
  const held = new Map<number, Interval[]>();
  const reconciles = new Map<string, Interval[]>();
  const final = new Map<number, ReadonlySet<number>>();
  const open = new Map<string, Interval>();
  const subs: Subscription[][] = [];

  plan.rates.forEach((rate, index) => {
    let dead = false;
    const clients = server.clients({
      client: `r${index}`,
      latencyMs: () => random() * plan.maxLatencyMs,
      fault: () => (base.now() < plan.chaosUntil && random() < plan.faultRate ? (FAULTS[Math.floor(random() * FAULTS.length)] ?? 'ok') : 'ok'),
      partitioned: () => dead,
    });
    const scheduler = driftingScheduler(base, rate, index * 1_000_000);
    const group = sharding(clients, { name: 'apples', shards: plan.shards, identity: `r${index}`, ...DEFAULT_TIMING, scheduler, random });
    const mine: Subscription[] = [];
    const running = new Set<Interval>();
    subs[index] = mine;
    const close = (shard: number) => {
      const interval = open.get(`${index}/${shard}`);
      if (interval) interval.end = base.now();
      open.delete(`${index}/${shard}`);
    };
    const start = () => {
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
            group
              .gate(key, () => {
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
        for (let shard = 0; shard < plan.shards; shard++) close(shard);
        for (const s of mine.splice(0)) s.unsubscribe();
        for (const interval of running) interval.end = base.now(); // died with the process
        final.delete(index);
      }, plan.killAt);
  });
  base.schedule(() => {
    for (const interval of open.values()) interval.end = base.now();
  }, end);
  base.flush();
  for (const list of subs) for (const s of list ?? []) s.unsubscribe();
  // An interrupted reconcile (unsubscribed by gate) ends when it was cancelled; close any left open at the end.
  for (const list of reconciles.values()) for (const i of list) if (!Number.isFinite(i.end)) i.end = end;
  return { plan, held, reconciles, end, final };
}
