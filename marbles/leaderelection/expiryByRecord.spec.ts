import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';

// A candidate waits the lease duration the holder wrote into the Lease (leaseDurationSeconds), not its own: client-go's
// `observedTime + LeaseDurationSeconds` of the record read (leaderelection.go, tryAcquireOrRenew). Frames are ms of
// virtual time; the candidate runs on the default timing (lease 15 s), the holder on a 60 s lease.
describe('leaderElection: expiry by the record read', () => {
  it("a candidate on the default 15 s lease waits out a silent holder's 60 s lease before taking it", () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const server = new FakeLeaseServer(ts);
    let holderCut = false;
    const lease = (client: string, partitioned = () => false) => server.clients({ client, partitioned }).lease('ctrl');
    const holder = leaderElection(
      lease('b', () => holderCut),
      {
        identity: 'b',
        scheduler: ts,
        random: () => 0,
        leaseDurationMs: 60_000,
        renewDeadlineMs: 40_000,
        retryPeriodMs: 2_000,
      },
    );
    const candidate = leaderElection(lease('a'), { identity: 'a', scheduler: ts, random: () => 0 });
    const led: string[] = [];
    const subscriptions = new Subscription();
    ts.run(() => {
      // b leads from frame 0 and renews until it is cut off from the server after 10 s (no release: it is partitioned);
      // a starts campaigning at 11 s and from then on reads b's last renewal (10 s), unchanged.
      subscriptions.add(holder.leader$.subscribe((l) => l && led.push(`${ts.now()} b`)));
      ts.schedule(() => (holderCut = true), 10_001);
      ts.schedule(() => subscriptions.add(candidate.leader$.subscribe((l) => l && led.push(`${ts.now()} a`))), 11_000);
      ts.schedule(() => subscriptions.unsubscribe(), 100_000);
    });
    const takeover = server.writes.find((w) => w.client === 'a' && w.record.holderIdentity === 'a');
    // a first read b's record at 11 s: the claim lapses for a at 11 s + 60 s (b's duration; with a's own 15 s, 26 s),
    // and a, reading every 2 s from 11 s without jitter, takes the Lease in that very frame.
    expect(takeover?.at).toBe(71_000);
    expect(led[0]).toBe('0 b');
    expect(led.filter((l) => l.endsWith(' a'))[0]).toBe(`${takeover?.at} a`);
  });
});
