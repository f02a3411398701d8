import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';

// Frames are ms of virtual time, the timing the default one (renew deadline 10 s: a request gives up after 5 s).
// Found by mutation testing (gaps102): a campaign's request timed out later than requestTimeoutMs passed every other spec.
describe('leaderElection: each Lease request gives up after requestTimeoutMs (default renewDeadline / 2)', () => {
  it('a read never answered is a Timeout on errors$ 5 000 ms after it was sent, and the next attempt follows', () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const server = new FakeLeaseServer(ts);
    const lease = server.clients({ client: 'a', fault: () => 'hang' }).lease('ctrl');
    const election = leaderElection(lease, { identity: 'a', scheduler: ts, random: () => 0 });
    const seen: string[] = [];
    const sub = new Subscription();
    ts.run(() => {
      sub.add(election.errors$.subscribe((e) => seen.push(`${ts.now()} ${e.operation} ${e.reason}`)));
      ts.schedule(() => sub.unsubscribe(), 13_000);
    });
    // Read at 0, given up at 5 000; the next read a retry period later (7 000), given up at 12 000.
    expect(seen).toEqual(['5000 get Timeout', '12000 get Timeout']);
  });
});
