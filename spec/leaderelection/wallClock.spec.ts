/**
 * Leadership is timed on a monotonic clock, not the wall clock (review audit8, leaseClock): at the default options
 * and the default scheduler, a step of `Date.now()` (NTP, `date -s`, a VM resumed) mid-run changes no leadership
 * change's time. Virtual time: vitest's fake timers fake `setTimeout`/`setInterval`, `Date` and `performance`;
 * `vi.setSystemTime` steps `Date` alone, as a wall-clock step does.
 */
import { Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { microTime } from '../../src/leaderelection/record.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

const FAKED = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] as const;

afterEach(() => {
  vi.useRealTimers();
});

/**
 * a leads from 0, b campaigns from 1 000, a is partitioned at 4 500; at 5 500 the wall clock steps by `stepMs`.
 * The leadership changes, as `<ms since start> <who> <leader>`, and the wall times a wrote into the Lease.
 */
function run(stepMs: number): { readonly log: readonly string[]; readonly renewTimes: readonly string[] } {
  vi.useFakeTimers({ toFake: [...FAKED], now: Date.UTC(2026, 10, 27, 12) });
  const start = performance.now();
  const server = new FakeLeaseServer();
  let partitioned = false;
  const log: string[] = [];
  const subscription = new Subscription();
  const watch = (id: string) => {
    const clients = server.clients({ client: id, partitioned: () => id === 'a' && partitioned });
    const election = leaderElection(clients.lease('ctrl'), { identity: id });
    subscription.add(election.leader$.subscribe((l) => log.push(`${Math.round(performance.now() - start)} ${id} ${l}`)));
  };
  watch('a');
  vi.advanceTimersByTime(1_000);
  watch('b');
  vi.advanceTimersByTime(3_500);
  partitioned = true;
  vi.advanceTimersByTime(1_000);
  vi.setSystemTime(Date.now() + stepMs);
  vi.advanceTimersByTime(30_000);
  subscription.unsubscribe();
  const renewTimes = server.writes.filter((w) => w.record.holderIdentity !== '').map((w) => `${w.client} ${w.record.renewTime ?? ''}`);
  return { log, renewTimes };
}

describe('leader election on a monotonic clock', () => {
  it('at the defaults, without a step: a steps down at its renew deadline, b takes over a lease duration after its last sight of a renewal', () => {
    // The fake server answers after 0 ms, which fake timers run 1 ms later: a leads from 3 (a GET and a POST), its
    // last renewal started at 4 005 → it leads until 14 005; b's read that saw it answered at 5 009 → b takes over
    // at 20 009 (a lease duration later).
    expect(run(0).log).toEqual(['0 a false', '3 a true', '1000 b false', '14005 a false', '20009 b true']);
  });

  it('a wall clock stepped back a minute mid-run changes nothing: a leads no longer or shorter, b takes over no earlier or later', () => {
    const baseline = run(0).log;
    expect(run(-60_000).log).toEqual(baseline);
  });

  it('a wall clock stepped forward a minute mid-run: a steps down early, at its next attempt (a suspend looks the same), b takes over no earlier', () => {
    // The renew deadline counts what the wall clock gained on the monotonic one (see suspend.spec.ts): the minute
    // gained at 5 500 uses it up, seen at a's next attempt (6 007). b's takeover is timed by its own reads, unchanged.
    expect(run(60_000).log).toEqual(['0 a false', '3 a true', '1000 b false', '6007 a false', '20009 b true']);
  });

  it('the times written into the Lease are still the wall clock (Date.now()), stepped or not', () => {
    const start = Date.UTC(2026, 10, 27, 12);
    // a: created at 1, renewed at 2 003 and 4 005 (before the partition at 4 500 and the step at 5 500);
    // b: taken at 20 007 by the monotonic clock, written as the wall clock says after its minute's step back.
    const at = (who: string, t: number) => `${who} ${microTime(start + t)}`;
    expect(run(-60_000).renewTimes.slice(0, 4)).toEqual([at('a', 1), at('a', 2_003), at('a', 4_005), at('b', 20_007 - 60_000)]);
  });

  /** Two replicas settled on 2 shards each; the wall clock steps by `stepMs`: the status changes in the minute after. */
  function shardingAfterStep(stepMs: number): { readonly changes: readonly string[]; readonly before: readonly string[] } {
    vi.useFakeTimers({ toFake: [...FAKED], now: Date.UTC(2026, 10, 27, 12) });
    const server = new FakeLeaseServer();
    const changes: string[] = [];
    const subscription = new Subscription();
    for (const id of ['a', 'b']) {
      const shards = sharding(server.clients({ client: id }), { name: 'g', shards: 4, identity: id });
      subscription.add(shards.status$.subscribe((s) => changes.push(`${id} [${s.members.join()}] held ${[...s.held].sort().join()}`)));
    }
    vi.advanceTimersByTime(30_000);
    const settled = changes.length;
    const held = (id: string) => changes.findLast((c) => c.startsWith(id))!;
    const before = [held('a'), held('b')];
    expect(before.map((c) => c.split(' held ')[1]!.split(',').length)).toEqual([2, 2]);
    vi.setSystemTime(Date.now() + stepMs);
    vi.advanceTimersByTime(60_000);
    subscription.unsubscribe();
    return { changes: changes.slice(settled), before };
  }

  it('sharding() at the defaults, its wall clock stepped back a minute: no member dropped, no shard moved', () => {
    expect(shardingAfterStep(-60_000).changes).toEqual([]);
  });

  it('sharding() at the defaults, its wall clock stepped forward a minute: no member dropped, each shard let go and taken back once', () => {
    // Each shard election counts the minute as a suspend, steps down and renews its own Lease a round trip later.
    const { changes, before } = shardingAfterStep(60_000);
    expect(changes.filter((c) => !c.includes('[a,b]'))).toEqual([]);
    const end = (id: string) => changes.findLast((c) => c.startsWith(id));
    expect([end('a'), end('b')]).toEqual(before);
    for (const id of ['a', 'b']) {
      // Its 2 shards each let go once and taken back once: 4 changes at most, the last its holding before the step.
      const mine = changes.filter((c) => c.startsWith(id));
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.length).toBeLessThanOrEqual(4);
    }
  });
});
