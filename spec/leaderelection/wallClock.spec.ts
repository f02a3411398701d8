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

  it.each([
    ['back', -60_000],
    ['forward', 60_000],
  ])(
    'a wall clock stepped %s a minute mid-run changes nothing: a leads no longer or shorter, b takes over no earlier or later',
    (_, step) => {
      const baseline = run(0).log;
      expect(run(step).log).toEqual(baseline);
    },
  );

  it('the times written into the Lease are still the wall clock (Date.now()), stepped or not', () => {
    const start = Date.UTC(2026, 10, 27, 12);
    // a: created at 1, renewed at 2 003 and 4 005 (before the partition at 4 500 and the step at 5 500);
    // b: taken at 20 007 by the monotonic clock, written as the wall clock says after its minute's step back.
    const at = (who: string, t: number) => `${who} ${microTime(start + t)}`;
    expect(run(-60_000).renewTimes.slice(0, 4)).toEqual([at('a', 1), at('a', 2_003), at('a', 4_005), at('b', 20_007 - 60_000)]);
  });

  it.each([
    ['back', -60_000],
    ['forward', 60_000],
  ])('sharding() at the defaults, its wall clock stepped %s a minute: no member dropped, no shard moved', (_, step) => {
    vi.useFakeTimers({ toFake: [...FAKED], now: Date.UTC(2026, 10, 27, 12) });
    const server = new FakeLeaseServer();
    const changes: string[] = [];
    const subscription = new Subscription();
    for (const id of ['a', 'b']) {
      const shards = sharding(server.clients({ client: id }), { name: 'g', shards: 4, identity: id });
      subscription.add(shards.status$.subscribe((s) => changes.push(`${id} [${s.members.join()}] held ${[...s.held].join()}`)));
    }
    vi.advanceTimersByTime(30_000);
    const settled = changes.length;
    const held = (id: string) => changes.findLast((c) => c.startsWith(id))!;
    expect([held('a'), held('b')].map((c) => c.split(' held ')[1]!.split(',').length)).toEqual([2, 2]);
    vi.setSystemTime(Date.now() + step);
    vi.advanceTimersByTime(60_000);
    subscription.unsubscribe();
    expect(changes.slice(settled)).toEqual([]);
  });
});
