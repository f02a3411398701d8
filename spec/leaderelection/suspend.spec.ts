/**
 * A leader suspended (laptop sleep, a paused VM, `systemctl suspend`) while a peer takes its Lease (review audit18).
 * On Linux CLOCK_MONOTONIC, hence `performance.now()` and every Node timer, does not advance while the host sleeps:
 * the election's clock sees no time pass, and the resumed leader believes it still has the rest of its renew deadline.
 * Two safeguards: a read showing another holder steps us down at once (client-go's `IsLeader()`), and the renew
 * deadline counts whatever the wall clock gained on the monotonic one since our last write (a suspend).
 */
import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { DEFAULT_TIMING, afterRead, afterWrite, begin, leading, initialElection } from '../../src/leaderelection/machine.ts';
import { microTime } from '../../src/leaderelection/record.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

afterEach(() => {
  vi.useRealTimers();
});

const candidate = { identity: 'a', timing: DEFAULT_TIMING };
const held = (holderIdentity: string, resourceVersion: string) => ({
  name: 'l',
  resourceVersion,
  record: { holderIdentity, leaseDurationSeconds: 15, leaseTransitions: 0 },
});

describe('election machine: a Lease read held by someone else', () => {
  it('steps the leader down at once, inside its renew deadline', () => {
    const mine = afterWrite(initialElection, held('a', '1'), 0, 10, candidate);
    expect(leading(mine, 2_000)).toBe(true);
    const step = afterRead(mine, held('b', '2'), 2_000, candidate, true);
    expect(step.state.observed?.record.holderIdentity).toBe('b');
    expect(leading(step.state, 2_000)).toBe(false);
    expect(step.next).toBeUndefined(); // b's claim is fresh: wait a lease duration
  });

  it.each([
    ['ours', 'a'],
    ['released', ''],
  ])('keeps leading when the Lease read is %s', (_, holder) => {
    const mine = afterWrite(initialElection, held('a', '1'), 0, 10, candidate);
    expect(leading(afterRead(mine, held(holder, '2'), 2_000, candidate, true).state, 2_000)).toBe(true);
  });
});

describe('election machine: the renew deadline counts what the wall clock gained (a suspend)', () => {
  // Written at local 1 000, wall 50 000: leads until local 11 000 by the monotonic clock alone.
  const mine = afterWrite(initialElection, held('a', '1'), 1_000, 1_100, candidate, 50_000);

  it.each<[string, number, number, boolean]>([
    ['no gain, inside the deadline', 10_999, 59_999, true],
    ['no gain, at the deadline', 11_000, 60_000, false],
    ['the wall clock stepped back an hour: nothing changes', 10_999, 59_999 - 3_600_000, true],
    ['suspended 8 s, 1 s after the write: 9 s of 10 s used', 2_000, 59_000, true],
    ['suspended 9 s, 1 s after the write: the deadline is used up', 2_000, 60_000, false],
    ['suspended a minute, 1 s after the write', 2_000, 111_000, false],
  ])('%s', (_, now, wall, expected) => {
    expect(leading(mine, now, wall)).toBe(expected);
    // And the fast-path renewal is no longer sent: a read first.
    expect(begin(mine, now, candidate, true, wall).type).toBe(expected ? 'update' : 'get');
  });

  it('one clock (a scheduler given): the wall clock is the local one, no gain', () => {
    const one = afterWrite(initialElection, held('a', '1'), 1_000, 1_100, candidate);
    expect(leading(one, 10_999)).toBe(true);
    expect(leading(one, 11_000)).toBe(false);
  });
});

/**
 * `suspendable(base)`: a clock that stops between `from` and `from + ms` of the base clock (its timers late by the
 * pause, as libuv's are): the leader's; the peer and the server run on the base clock.
 */
function suspendable(base: SchedulerLike, from: number, ms: number): SchedulerLike {
  const local = (t: number) => (t <= from ? t : t >= from + ms ? t - ms : from);
  const baseAt = (l: number) => (l < from ? l : l + ms);
  return {
    now: () => local(base.now()),
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      const due = baseAt(local(base.now()) + delay);
      return base.schedule<T>(work, Math.max(0, due - base.now()), state);
    },
  };
}

/** Overlaps of `leader=true` for a and b in a log of `<t> <id> leader=<bool>`, counted from `from`. */
function overlapMs(log: readonly string[], from: number): number {
  let overlap = 0;
  let last = 0;
  const current: Record<string, boolean> = { a: false, b: false };
  for (const line of log) {
    const [t, id, l] = line.split(' ');
    const at = Number(t);
    if (current.a && current.b) overlap += Math.max(0, at - Math.max(last, from));
    last = at;
    current[id!] = l === 'leader=true';
  }
  return overlap;
}

describe('leaderElection: a leader that sees a peer hold its Lease', () => {
  it('status$ never says leader while the holder seen is the peer', () => {
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 20_000;
    const server = new FakeLeaseServer(scheduler);
    const a = leaderElection(server.clients({ client: 'a', latencyMs: () => 10 }).lease('ctrl'), {
      identity: 'a',
      scheduler,
      random: () => 0,
    });
    const peer = server.clients({ client: 'b' }).lease('ctrl');
    const log: string[] = [];
    const sub = a.status$.subscribe((s) => log.push(`${scheduler.now()} leader=${s.leader} holder=${s.holderIdentity}`));
    // b writes the Lease (as it would after a's suspend past the lease duration) while a is inside its deadline.
    scheduler.schedule(() => {
      const rv = server.get('ctrl')!.resourceVersion;
      peer.update(rv, { holderIdentity: 'b', leaseDurationSeconds: 15, renewTime: microTime(0), leaseTransitions: 1 }).subscribe();
    }, 2_500);
    scheduler.schedule(() => sub.unsubscribe(), 15_000);
    scheduler.flush();
    expect(log.filter((l) => l.includes('leader=true holder=b'))).toEqual([]);
    // 10 ms each way: a leads from 40 and renews at 2 040 and 4 060; that renewal is refused (409 at 4 080), its read
    // shows b at 4 100: a steps down then, not at its old deadline (12 040).
    expect(log.find((l) => l.includes('leader=false holder=b'))).toBe('4100 leader=false holder=b');
  });

  it('a leader suspended a minute (its clock stopped) leads beside the peer no longer than its first read after it wakes', () => {
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 100_000;
    const server = new FakeLeaseServer(scheduler);
    const log: string[] = [];
    const sub = new Subscription();
    const watch = (id: string, clock: SchedulerLike) => {
      const e = leaderElection(server.clients({ client: id, latencyMs: () => 10 }).lease('ctrl'), {
        identity: id,
        scheduler: clock,
        random: () => 0,
      });
      sub.add(e.status$.subscribe((s) => log.push(`${scheduler.now()} ${id} leader=${s.leader} holder=${s.holderIdentity ?? '-'}`)));
    };
    // a sleeps from 5 000 to 65 000, right after its renewal at ~4 000 was answered.
    watch('a', suspendable(scheduler, 5_000, 60_000));
    scheduler.schedule(() => watch('b', scheduler), 1_000);
    scheduler.schedule(() => sub.unsubscribe(), 90_000);
    scheduler.flush();
    // a, awake at 65 000, renews at its next attempt (~66 000): 409, reads b's record, steps down (was: at ~74 060).
    expect(overlapMs(log, 65_000)).toBeLessThanOrEqual(DEFAULT_TIMING.retryPeriodMs + 100);
    expect(log.filter((l) => l.includes(' a leader=true holder=b'))).toEqual([]);
  });
});

describe('leaderElection at the defaults: a suspend seen as the wall clock gaining on the monotonic one', () => {
  const FAKED = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] as const;

  /**
   * a leads from 0; at 4 500 its API is cut off and it sleeps `suspendMs` (vi.setSystemTime moves `Date` alone, as a
   * resume does: the monotonic clock and the timers did not run). Its leader$ changes, by the monotonic clock.
   */
  function run(suspendMs: number): string[] {
    vi.useFakeTimers({ toFake: [...FAKED], now: Date.UTC(2026, 10, 28, 2) });
    const start = performance.now();
    const server = new FakeLeaseServer();
    let partitioned = false;
    const log: string[] = [];
    const election = leaderElection(server.clients({ client: 'a', partitioned: () => partitioned }).lease('ctrl'), { identity: 'a' });
    const sub = election.leader$.subscribe((l) => log.push(`${Math.round(performance.now() - start)} ${l}`));
    vi.advanceTimersByTime(4_500);
    partitioned = true;
    vi.setSystemTime(Date.now() + suspendMs);
    vi.advanceTimersByTime(30_000);
    sub.unsubscribe();
    return log;
  }

  it('not suspended: a leads until its renew deadline (its last renewal began at 4 005)', () => {
    expect(run(0)).toEqual(['0 false', '3 true', '14005 false']);
  });

  it('suspended a minute, its API unreachable on waking: a steps down at its first attempt, not at its old deadline', () => {
    // The first timer after the resume is the next renewal, at 6 007 (a retry period after the last one ended): the
    // minute gained used up the deadline.
    expect(run(60_000)).toEqual(['0 false', '3 true', '6007 false']);
  });

  it('suspended 5 s (within the margin): a leads to its deadline shortened by the 5 s', () => {
    // Renewal at 4 005, deadline 14 005 − 5 000 = 9 005 by the monotonic clock.
    expect(run(5_000)).toEqual(['0 false', '3 true', '9005 false']);
  });

  it('suspended a minute, the Lease still its own on waking: a steps down and takes it back a round trip later', () => {
    vi.useFakeTimers({ toFake: [...FAKED], now: Date.UTC(2026, 10, 28, 2) });
    const start = performance.now();
    const server = new FakeLeaseServer();
    const log: string[] = [];
    const sub = leaderElection(server.clients({ client: 'a' }).lease('ctrl'), { identity: 'a' }).leader$.subscribe((l) =>
      log.push(`${Math.round(performance.now() - start)} ${l}`),
    );
    vi.advanceTimersByTime(4_500);
    vi.setSystemTime(Date.now() + 60_000);
    vi.advanceTimersByTime(4_000);
    sub.unsubscribe();
    // Down at its attempt at 6 007; the read (6 009) shows its own record, renewed at 6 011.
    expect(log).toEqual(['0 false', '3 true', '6007 false', '6011 true']);
  });
});

describe('sharding(): a shard Lease read held by someone else', () => {
  it('stops holding the shard at that read, not at its old renew deadline', () => {
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 60_000;
    const server = new FakeLeaseServer(scheduler);
    const log: string[] = [];
    const shards = sharding(server.clients({ client: 'a' }), { name: 'g', shards: 1, identity: 'a', scheduler, random: () => 0 });
    const sub = shards.status$.subscribe((s) => log.push(`${scheduler.now()} held ${[...s.held].join()}`));
    const intruder = server.clients({ client: 'x' }).lease('g-shard-0');
    let takenAt = 0;
    scheduler.schedule(() => {
      takenAt = scheduler.now();
      const rv = server.get('g-shard-0')!.resourceVersion;
      intruder.update(rv, { holderIdentity: 'x', leaseDurationSeconds: 15, renewTime: microTime(0), leaseTransitions: 1 }).subscribe();
    }, 5_500);
    scheduler.schedule(() => sub.unsubscribe(), 12_000);
    scheduler.flush();
    const lostAt = Number(log.find((l, i) => i > 0 && l.endsWith('held ') && log[i - 1]!.endsWith('held 0'))?.split(' ')[0]);
    // Lost at the first renewal after the takeover (409, then a read showing x), within a retry period.
    expect(lostAt).toBeGreaterThan(takenAt);
    expect(lostAt - takenAt).toBeLessThanOrEqual(DEFAULT_TIMING.retryPeriodMs);
  });
});
