import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING } from '../../src/leaderelection/machine.ts';
import { DRIFT } from './arbitraries.ts';
import { LIST_MS, runSharding, type ShardingPlan, type ShardingResult } from './shardingSimulation.ts';
import type { Interval } from './simulation.ts';

const RUNS = Number(process.env['SHARDING_RUNS'] ?? 500);
const CHAOS_UNTIL = 30_000;
const KILL_AT = 60_000;
/**
 * A new identity joins this long after the kill: by then every survivor has judged the dead member lapsed (its last
 * renewal R ≤ the kill, lapsed by R + (leaseDuration + retryPeriod) / 0.95 + a round trip, 18.3 s at most) and taken
 * its shards: the issue's join-after-crash scenario.
 */
const NEWCOMER_AFTER_KILL = 20_000;

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
    outageFrom: fc.integer({ min: 0, max: CHAOS_UNTIL }),
    outageFor: fc.option(fc.integer({ min: 1_000, max: 25_000 }), { nil: undefined, freq: 3 }),
    newcomerRate: fc.double({ min: 1 - DRIFT, max: 1 + DRIFT, noNaN: true }),
    newcomerAfterKill: fc.integer({ min: NEWCOMER_AFTER_KILL, max: NEWCOMER_AFTER_KILL + 8_000 }),
  })
  .chain((p) =>
    fc.tuple(fc.integer({ min: 0, max: p.rates.length - 1 }), fc.integer({ min: 0, max: p.rates.length - 1 })).map(([kill, cut]) => ({
      seed: p.seed,
      shards: p.shards,
      drift: DRIFT,
      rates: [...p.rates, p.newcomerRate],
      startAt: [...p.rates.map((_, i) => (i === p.rates.length - 1 ? p.lateJoin : i * 700)), KILL_AT + p.newcomerAfterKill],
      newcomer: p.rates.length,
      maxLatencyMs: p.maxLatencyMs,
      faultRate: p.faultRate,
      chaosUntil: CHAOS_UNTIL,
      kill,
      killAt: KILL_AT,
      keys: p.keys,
      ...(p.outageFor === undefined ? {} : { writeOutage: { from: p.outageFrom, until: p.outageFrom + p.outageFor } }),
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
  // A dead replica's shards, timed from its last renewals (server time, `writes`): R of its member Lease, R_s of the shard's.
  // A survivor lists the members and reads each shard's Lease every retryPeriod, so it first sees either renewal within a
  // retryPeriod and a round trip, and judges the Lease lapsed a leaseDuration after that sight (client-go's observed-time
  // rule), both on its own clock (so / its rate). Hence, with no margin (the marble spec reaches the bound to the ms):
  // - cached (the issue's target): the member lapses for the survivor at R + (leaseDuration + retryPeriod) / rate + a round
  //   trip; it is assigned the shards then and lists them once (up to LIST_MS);
  // - held: it wants the shard from then on, and takes it (a read, a write) once the shard's Lease has lapsed for it too,
  //   by max(R, R_s) + (leaseDuration + retryPeriod) / rate + three round trips;
  // - owned (held and cached) there within one list of the Lease being taken.
  const { leaseDurationMs: L, retryPeriodMs: r } = DEFAULT_TIMING;
  const lastRenewal = (lease: string) =>
    result.writes.filter((w) => w.lease === lease && w.record.holderIdentity === `r${plan.kill}`).at(-1)?.at ?? Number.NEGATIVE_INFINITY;
  const R = lastRenewal(`apples-member-r${plan.kill}`);
  const cacheBound = (replica: number) => R + (L + r) / plan.rates[replica]! + 2 * plan.maxLatencyMs + LIST_MS;
  for (let shard = 0; shard < plan.shards; shard++) {
    const list = result.held.get(shard) ?? [];
    const atKill = list.find((i) => i.start <= plan.killAt && i.end >= plan.killAt);
    if (atKill?.replica !== plan.kill) continue;
    const inCache = (result.inCache.get(shard) ?? []).filter((i) => i.replica !== plan.kill);
    if (!inCache.some((i) => i.start <= cacheBound(i.replica) && i.end >= cacheBound(i.replica)))
      found.push(
        `shard ${shard} of killed r${plan.kill} (member renewed last at ${R}) not cached by a survivor in time: ` +
          inCache.map((i) => `r${i.replica} ${i.start}–${i.end} (bound ${cacheBound(i.replica)})`).join(', '),
      );
    const Rs = lastRenewal(`apples-shard-${shard}`);
    const takeBound = (replica: number) => Math.max(R, Rs) + (L + r) / plan.rates[replica]! + 6 * plan.maxLatencyMs;
    const taken = list.filter((i) => i.replica !== plan.kill && i.start >= plan.killAt && i.start <= takeBound(i.replica));
    if (taken.length === 0)
      found.push(
        `shard ${shard} of killed r${plan.kill} (last renewals ${R}, ${Rs}) not taken over in time: ` +
          list.map((i) => `r${i.replica} ${i.start}–${i.end} (bound ${takeBound(i.replica)})`).join(', '),
      );
    for (const take of taken) {
      const owned = (result.owned.get(shard) ?? []).find((i) => i.replica === take.replica && i.start >= take.start);
      if (owned === undefined || owned.start > take.start + LIST_MS)
        found.push(`shard ${shard} of killed r${plan.kill}, taken by r${take.replica} at ${take.start}, owned there at ${owned?.start}`);
    }
  }
  // A replica joining after a crash (a new identity, the dead member's Lease still there): every shard a survivor hands
  // over from then on is taken within a retry period. The newcomer wants its share from its first listing (the same
  // assignment the survivors compute), polls each shard's Lease a retryPeriod (its clock) after each answer, so its
  // reads reach the server at most retryPeriod / rate + two one-way latencies apart, and takes a released one at once:
  // its first read to arrive after the release, that read's answer and the write, four one-way latencies in all.
  // Counting the dead member alive for a lease duration from its own first sight of it, it would leave some unheld ~15 s.
  if (plan.newcomer !== undefined) {
    const joined = plan.startAt[plan.newcomer]!;
    const bound = r / Math.min(...plan.rates) + 4 * plan.maxLatencyMs;
    for (let shard = 0; shard < plan.shards; shard++) {
      const writes = result.writes.filter((w) => w.lease === `apples-shard-${shard}` && w.at >= joined);
      writes.forEach((w, i) => {
        if (w.record.holderIdentity !== '') return;
        const taken = writes.slice(i + 1).find((next) => next.record.holderIdentity !== '');
        if ((taken?.at ?? result.end) - w.at > bound)
          found.push(
            `shard ${shard} released by ${w.client} at ${w.at} after r${plan.newcomer} joined (${joined}), ` +
              `taken ${taken ? `by ${taken.client} at ${taken.at}` : 'by nobody'} (bound ${w.at + bound})`,
          );
      });
    }
  }
  // A Lease-write outage drops nobody from a view: once a replica's own member Lease has gone unrenewed for a renew
  // deadline (it stops leading its member Lease by then, on its own clock), it drops nobody from its view until its writes
  // succeed again (else, reads answering and writes failing, every replica would see every other lapse and take every
  // shard). So in that window no member leaves a view, and an assignment gains a shard only as a member joins the view:
  // capped rendezvous hashing can move a shard to us when a member joins (the cap falls and the shards are placed again
  // in order), and a replica cut off earlier sees a member that joined meanwhile for the first time (the example below).
  // That assignment is the one the members it sees give it, not one taken from a member judged lapsed.
  if (plan.writeOutage)
    for (const [replica, seen] of result.views) {
      const frozenFrom = plan.writeOutage.from + (DEFAULT_TIMING.renewDeadlineMs + r) / plan.rates[replica]! + 2 * plan.maxLatencyMs;
      for (let i = 1; i < seen.length; i++) {
        const { at, members, assigned } = seen[i]!;
        const before = seen[i - 1]!;
        if (at < frozenFrom || at >= plan.writeOutage.until) continue;
        const during = `at ${at} during the write outage ${plan.writeOutage.from}–${plan.writeOutage.until}`;
        const dropped = before.members.filter((m) => !members.includes(m));
        const joined = members.filter((m) => !before.members.includes(m));
        if (dropped.length > 0) found.push(`r${replica} dropped ${dropped.join(', ')} from its view ${during}`);
        if (joined.length === 0 && [...assigned].some((shard) => !before.assigned.has(shard)))
          found.push(`r${replica}'s assignment widened with no member joining ${during}: [${[...before.assigned]}] → [${[...assigned]}]`);
      }
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

describe('sharding, 2–4 replicas with sharded informers in virtual time (drift ±5 %, latencies, faults, a partition, a Lease-write outage, a late joiner, a death, a newcomer after it)', () => {
  it(`no shard and no key at two replicas at once, no key from a cold cache; a dead replica's shards cached and held elsewhere within (leaseDuration + retryPeriod) / rate of its last renewals (+ one list, round trips); a newcomer after the death takes what it is handed within a retry period; balanced, caches disjoint and whole at the end (${RUNS} schedules)`, () => {
    fc.assert(
      fc.property(shardingPlan, (plan) => {
        const result = runSharding(plan);
        expect(violations(result)).toEqual([]);
        expect([...result.reconciles.values()].flat().length).toBeGreaterThan(0);
      }),
      {
        numRuns: RUNS,
        examples: [
          // r0, cut off 21.3–41.5 s, meets r2 (joined at 26.3 s) at its first listing after, still in the write outage:
          // its view [r0, r1] becomes [r0, r1, r2] and its assignment moves from shard 1 to shard 2, as r2 itself assigns it.
          [
            {
              seed: 298308264,
              shards: 3,
              drift: 0.05,
              rates: [1.0348121360402949, 0.9545545154424943, 1.0168974433835225, 0.9557676251028945],
              startAt: [0, 700, 26266, 80375],
              newcomer: 3,
              maxLatencyMs: 1,
              faultRate: 3.8815644564964186e-48,
              chaosUntil: 30000,
              kill: 0,
              killAt: 60000,
              keys: 13,
              writeOutage: { from: 29988, until: 53377 },
              partition: { replica: 0, from: 21295, until: 41488 },
            },
          ],
        ],
      },
    );
    // About 13 s for 500 schedules on an idle core; a loaded machine takes several times that (virtual time, no wall-clock oracle).
  }, 240_000);
});
