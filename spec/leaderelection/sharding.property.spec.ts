import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING } from '../../src/leaderelection/machine.ts';
import { DRIFT } from './arbitraries.ts';
import { LIST_MS, runSharding, type ShardingPlan, type ShardingResult } from './shardingSimulation.ts';
import type { Interval } from './simulation.ts';

const RUNS = Number(process.env['SHARDING_RUNS'] ?? 500);
const CHAOS_UNTIL = 30_000;

export const shardingPlan: fc.Arbitrary<ShardingPlan> = fc
  .record({
    seed: fc.integer(),
    shards: fc.integer({ min: 1, max: 8 }),
    rates: fc.array(fc.double({ min: 1 - DRIFT, max: 1 + DRIFT, noNaN: true }), { minLength: 2, maxLength: 4 }),
    lateJoin: fc.integer({ min: 10_000, max: 40_000 }),
    maxLatencyMs: fc.integer({ min: 0, max: 200 }),
    faultRate: fc.double({ min: 0, max: 0.3, noNaN: true }),
    keys: fc.integer({ min: 1, max: 30 }),
    partitionFrom: fc.integer({ min: 0, max: CHAOS_UNTIL }),
    partitionFor: fc.option(fc.integer({ min: 1_000, max: 25_000 }), { nil: undefined, freq: 2 }),
  })
  .chain((p) =>
    fc.tuple(fc.integer({ min: 0, max: p.rates.length - 1 }), fc.integer({ min: 0, max: p.rates.length - 1 })).map(([kill, cut]) => ({
      seed: p.seed,
      shards: p.shards,
      drift: DRIFT,
      rates: p.rates,
      startAt: p.rates.map((_, i) => (i === p.rates.length - 1 ? p.lateJoin : i * 700)),
      maxLatencyMs: p.maxLatencyMs,
      faultRate: p.faultRate,
      chaosUntil: CHAOS_UNTIL,
      kill,
      killAt: 60_000,
      keys: p.keys,
      ...(p.partitionFor === undefined
        ? {}
        : { partition: { replica: cut, from: p.partitionFrom, until: p.partitionFrom + p.partitionFor } }),
    })),
  );

const overlaps = (a: Interval, b: Interval) => a.replica !== b.replica && a.start < b.end && b.start < a.end;

function violations(result: ShardingResult): string[] {
  const { plan } = result;
  const found: string[] = [];
  for (const [what, map] of [
    ['shard', result.held],
    ['key', result.reconciles],
  ] as const)
    for (const [id, list] of map as Map<unknown, Interval[]>)
      for (let i = 0; i < list.length; i++)
        for (let j = i + 1; j < list.length; j++)
          if (overlaps(list[i]!, list[j]!)) found.push(`${what} ${String(id)}: r${list[i]!.replica} and r${list[j]!.replica} at once`);
  // The killed replica's shards are held again within lease duration + 2 retry periods (slowest clock) + round trips.
  const { leaseDurationMs: L, retryPeriodMs: r } = DEFAULT_TIMING;
  const bound = plan.killAt + (L + 2 * r) / (1 - plan.drift) + 12 * plan.maxLatencyMs;
  for (let shard = 0; shard < plan.shards; shard++) {
    const list = result.held.get(shard) ?? [];
    const atKill = list.find((i) => i.start <= plan.killAt && i.end >= plan.killAt);
    if (atKill?.replica !== plan.kill) continue;
    if (!list.some((i) => i.replica !== plan.kill && i.start >= plan.killAt && i.start <= bound))
      found.push(`shard ${shard} of killed r${plan.kill} not taken over by ${bound}`);
    // And cached there (owned) within one list of up to LIST_MS of its Lease being taken there, so within the bound plus one
    // list: the survivors cache the dead replica's shards from when the assignment gives them the shards (its member Lease
    // lapsed for them), one list for all of them, before or while they take the Leases.
    for (const taken of list.filter((i) => i.replica !== plan.kill && i.start >= plan.killAt && i.start <= bound)) {
      const cached = (result.owned.get(shard) ?? []).find((i) => i.replica === taken.replica && i.start >= taken.start);
      if (cached === undefined || cached.start > taken.start + LIST_MS)
        found.push(
          `shard ${shard} of killed r${plan.kill}, taken by r${taken.replica} at ${taken.start}, cached there at ${cached?.start}`,
        );
    }
  }
  // The target, for the cache: every shard of the dead replica is cached at some survivor within
  // leaseDuration + retryPeriod + one list of the dead replica's last renewal of its member Lease (R, server time).
  // A survivor lists the members every retryPeriod, so it first sees R within a retryPeriod and a round trip; it
  // drops the member (and is assigned its shards, and lists) a leaseDuration after that sight, both on its own
  // clock (so / rate); the list takes up to LIST_MS. No margin: the bound is reached (see the deterministic spec).
  const member = `apples-member-r${plan.kill}`;
  const renewals = result.writes.filter((w) => w.lease === member && w.record.holderIdentity === `r${plan.kill}`);
  const lastRenewal = renewals.at(-1)?.at ?? Number.NEGATIVE_INFINITY;
  const cacheBound = (replica: number) => lastRenewal + (L + r) / plan.rates[replica]! + 2 * plan.maxLatencyMs + LIST_MS;
  for (let shard = 0; shard < plan.shards; shard++) {
    const atKill = (result.held.get(shard) ?? []).find((i) => i.start <= plan.killAt && i.end >= plan.killAt);
    if (atKill?.replica !== plan.kill) continue;
    const intervals = (result.inCache.get(shard) ?? []).filter((i) => i.replica !== plan.kill);
    if (!intervals.some((i) => i.start <= cacheBound(i.replica) && i.end >= cacheBound(i.replica)))
      found.push(
        `shard ${shard} of killed r${plan.kill} (last renewal ${lastRenewal}) not cached by a survivor in time: ` +
          intervals.map((i) => `r${i.replica} ${i.start}–${i.end} (bound ${cacheBound(i.replica)})`).join(', '),
      );
  }
  // At the end: every shard held by exactly one live replica, none holding more than its share.
  const live = [...result.final.keys()];
  const share = Math.ceil(plan.shards / live.length);
  for (let shard = 0; shard < plan.shards; shard++) {
    const holders = live.filter((r) => result.final.get(r)?.has(shard));
    if (holders.length !== 1) found.push(`at the end shard ${shard} is held by [${holders.join(', ')}]`);
  }
  for (const r of live)
    if ((result.final.get(r)?.size ?? 0) > share) found.push(`r${r} holds ${result.final.get(r)?.size} shards, more than ${share}`);
  // No reconcile from a cold cache; at the end each live replica caches exactly its shards' keys, and together all of them.
  found.push(...result.cold);
  const all = new Set<string>();
  for (const [r, { keys, owned }] of result.cached) {
    const held = result.final.get(r) ?? new Set<number>();
    if ([...owned].sort().join() !== [...held].sort().join())
      found.push(`at the end r${r} owns [${[...owned]}] in its cache but holds [${[...held]}]`);
    const foreign = keys.filter((key) => !owned.has(result.shardOf(key)));
    if (foreign.length > 0) found.push(`at the end r${r} caches ${foreign.join(', ')} of shards it does not own`);
    for (const key of keys) all.add(key);
  }
  if (all.size !== plan.keys) found.push(`at the end the caches hold ${all.size} of ${plan.keys} keys`);
  return found;
}

describe('sharding, 2–4 replicas with sharded informers in virtual time (drift ±5 %, latencies, faults, a partition, a late joiner, a death)', () => {
  it(`no shard and no key at two replicas at once, no key from a cold cache; a dead replica's shards taken over; balanced, caches disjoint and whole at the end (${RUNS} schedules)`, () => {
    fc.assert(
      fc.property(shardingPlan, (plan) => {
        const result = runSharding(plan);
        expect(violations(result)).toEqual([]);
        expect([...result.reconciles.values()].flat().length).toBeGreaterThan(0);
      }),
      { numRuns: RUNS },
    );
    // About 13 s for 500 schedules on an idle core; a loaded machine takes several times that (virtual time, no wall-clock oracle).
  }, 240_000);
});
