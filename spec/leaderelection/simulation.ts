/**
 * Simulated replicas campaigning for one Lease in virtual time: each replica
 * has its own drifting clock over one TestScheduler, the fake API server adds
 * latencies and faults, and replicas die, are partitioned or stop gracefully.
 * Shared by the property test and the soak run.
 */
import { EMPTY, Observable, switchMap, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { driftingScheduler } from '../../src/testing/driftingScheduler.ts';
import { FakeLeaseServer, type FakeLeaseFault } from '../../src/testing/fakeLeases.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { DEFAULT_TIMING, type ElectionTiming } from '../../src/leaderelection/machine.ts';

export interface ReplicaPlan {
  /** Clock rate, within 1 ± drift. */
  readonly rate: number;
  /** Clock offset (ms); nobody may depend on it. */
  readonly offset: number;
  /** When it starts (real ms). */
  readonly startAt: number;
  /** Killed (no release) during the chaos phase at this time, if set. */
  readonly killAt?: number | undefined;
  /** Partitioned from the API server during this window of the chaos phase, if set. */
  readonly partition?: readonly [number, number] | undefined;
}

export interface SchedulePlan {
  readonly seed: number;
  readonly timing: ElectionTiming;
  /** Bound on clock drift: every rate is within [1 − drift, 1 + drift]. */
  readonly drift: number;
  readonly replicas: readonly ReplicaPlan[];
  /** Upper bound of each one-way request latency (ms). */
  readonly maxLatencyMs: number;
  /** Probability that a request during the chaos phase meets a fault. */
  readonly faultRate: number;
  /** Chaos (faults, deaths, partitions) until this time; calm after it. */
  readonly chaosUntil: number;
  /** At this time the leader is killed, partitioned or stopped gracefully. */
  readonly strikeAt: number;
  readonly strike: 'kill' | 'partition' | 'stop';
  /** Keys the leader reconciles (each reconcile takes a random time). */
  readonly keys: number;
}

export interface Interval {
  readonly replica: number;
  readonly start: number;
  end: number;
}

export interface ScheduleResult {
  readonly plan: SchedulePlan;
  readonly leadership: Interval[];
  /** key → reconcile intervals. */
  readonly reconciles: Map<string, Interval[]>;
  /** Who led at strikeAt, if anyone. */
  readonly struck: number | undefined;
  /** Real time of the last successful write start by the struck replica before strikeAt. */
  readonly errors: number;
  readonly end: number;
}

import { seededRandom as prng } from '../../src/util/seededRandom.ts';
export { prng };

const FAULTS: readonly FakeLeaseFault[] = ['status500', 'dropBefore', 'dropAfter', 'hang'];

export function runSchedule(plan: SchedulePlan): ScheduleResult {
  const base = new TestScheduler(() => true);
  const end = plan.strikeAt + 40_000;
  base.maxFrames = end;
  // A timer set a float step into the future runs at the same virtual instant; one that keeps
  // doing so never lets the clock move: fail with the schedule instead of hanging.
  const schedule = base.schedule.bind(base);
  let frame = Number.NaN;
  let atFrame = 0;
  base.schedule = ((work, delay, state) => {
    if (base.now() !== frame) [frame, atFrame] = [base.now(), 0];
    else if (++atFrame > 100_000) throw new Error(`livelock: more than 100,000 actions scheduled at virtual time ${frame}`);
    return schedule(work, delay, state);
  }) as typeof base.schedule;
  const random = prng(plan.seed);
  const server = new FakeLeaseServer(base);
  const leadership: Interval[] = [];
  const reconciles = new Map<string, Interval[]>();
  const open = new Map<number, Interval>();
  let errors = 0;
  let struck: number | undefined;

  const replicas = plan.replicas.map((replica, index) => {
    let partitioned = false;
    let dead = false;
    const chaos = () => base.now() < plan.chaosUntil;
    const clients = server.clients({
      client: `r${index}`,
      latencyMs: () => random() * plan.maxLatencyMs,
      fault: () => (chaos() && random() < plan.faultRate ? (FAULTS[Math.floor(random() * FAULTS.length)] ?? 'ok') : 'ok'),
      partitioned: () => partitioned || dead,
    });
    const scheduler = driftingScheduler(base, replica.rate, replica.offset);
    const election = leaderElection(clients.lease('ctrl'), { identity: `r${index}`, ...plan.timing, scheduler, random });
    // The gating line: reconcile only while leader; losing leadership cancels in-flight reconciles.
    const work$ = new Observable<never>(() => {
      const running: { key: string; interval: Interval }[] = [];
      let stopped = false;
      const next = () => {
        if (stopped) return;
        const key = `k${Math.floor(random() * plan.keys)}`;
        const interval: Interval = { replica: index, start: base.now(), end: Number.POSITIVE_INFINITY };
        const list = reconciles.get(key) ?? [];
        list.push(interval);
        reconciles.set(key, list);
        const entry = { key, interval };
        running.push(entry);
        base.schedule(
          () => {
            if (stopped) return;
            interval.end = base.now();
            running.splice(running.indexOf(entry), 1);
            next();
          },
          1 + random() * 3_000,
        );
      };
      next();
      return () => {
        stopped = true;
        for (const { interval } of running) interval.end = base.now();
      };
    });
    const subs: Subscription[] = [];
    const start = () => {
      subs.push(
        election.leader$.subscribe((lead) => {
          const now = base.now();
          if (lead && !open.has(index)) {
            const interval: Interval = { replica: index, start: now, end: Number.POSITIVE_INFINITY };
            open.set(index, interval);
            leadership.push(interval);
          } else if (!lead) {
            const interval = open.get(index);
            if (interval) interval.end = now;
            open.delete(index);
          }
        }),
      );
      subs.push(election.errors$.subscribe(() => errors++));
      subs.push(election.leader$.pipe(switchMap((lead) => (lead ? work$ : EMPTY))).subscribe());
    };
    const stop = () => {
      const interval = open.get(index);
      if (interval) interval.end = base.now();
      open.delete(index);
      for (const s of subs.splice(0)) s.unsubscribe();
    };
    base.schedule(start, replica.startAt);
    if (replica.killAt !== undefined) base.schedule(() => ((dead = true), stop()), replica.killAt);
    if (replica.partition) {
      const [from, to] = replica.partition;
      base.schedule(() => (partitioned = true), from);
      base.schedule(() => (partitioned = false), to);
    }
    return {
      strike: (how: SchedulePlan['strike']) => {
        if (how === 'partition') partitioned = true;
        else {
          if (how === 'kill') dead = true;
          stop();
        }
      },
    };
  });

  base.schedule(() => {
    const leaders = [...open.keys()];
    struck = leaders[0];
    if (struck !== undefined) replicas[struck]?.strike(plan.strike);
  }, plan.strikeAt);
  // Everyone stops at the end, so every interval is closed.
  base.schedule(() => {
    for (const [, interval] of open) interval.end = base.now();
    open.clear();
  }, end);
  base.flush();
  // Leave no timer behind for the next schedule.
  for (const r of replicas) r.strike('kill');
  return { plan, leadership, reconciles, struck, errors, end };
}

const overlaps = (a: Interval, b: Interval) => a.replica !== b.replica && a.start < b.end && b.start < a.end;

/** Every rule a schedule must keep; an empty list when it kept them all. */
export function violations(result: ScheduleResult): string[] {
  const { plan, leadership } = result;
  const { leaseDurationMs: L, renewDeadlineMs: RD, retryPeriodMs: r } = plan.timing;
  const slowest = 1 - plan.drift;
  const λ = plan.maxLatencyMs;
  const found: string[] = [];
  for (let i = 0; i < leadership.length; i++)
    for (let j = i + 1; j < leadership.length; j++) {
      const a = leadership[i]!;
      const b = leadership[j]!;
      if (overlaps(a, b)) found.push(`two leaders: r${a.replica} [${a.start}, ${a.end}) and r${b.replica} [${b.start}, ${b.end})`);
    }
  for (const [key, list] of result.reconciles)
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++)
        if (overlaps(list[i]!, list[j]!)) found.push(`${key} reconciled by r${list[i]!.replica} and r${list[j]!.replica} at once`);
  const K = plan.strikeAt;
  if (result.struck === undefined) {
    found.push(`no leader at ${K}, ${K - plan.chaosUntil} ms after the chaos ended`);
    return found;
  }
  const struck = result.struck;
  // A partitioned leader steps down within its renew deadline (its last good renewal started before K).
  if (plan.strike === 'partition') {
    const by = K + RD / slowest;
    const still = leadership.find((i) => i.replica === struck && i.start <= K && i.end > by);
    if (still) found.push(`partitioned leader r${struck} still led at ${by} (until ${still.end})`);
  }
  // Someone else leads within lease duration + retry period (in the slowest clock's terms) plus round trips;
  // after a graceful stop (release) within a retry period plus round trips.
  const bound = plan.strike === 'stop' ? K + r / slowest + 11 * λ : K + (L + r) / slowest + 11 * λ;
  const next = leadership.find((i) => i.replica !== struck && i.end > K && i.start <= bound);
  if (!next) {
    const first = leadership.find((i) => i.replica !== struck && i.end > K);
    found.push(
      `no new leader by ${bound} after ${plan.strike} of r${struck} at ${K} (first: ${first ? `r${first.replica} at ${first.start}` : 'none'})`,
    );
  }
  return found;
}

export const defaultTiming: ElectionTiming = DEFAULT_TIMING;
