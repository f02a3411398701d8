import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';

// Frames are ms of virtual time, the timing the default one, the fake server answering at once.
// Found by mutation testing (gaps102): status$ reporting leaseTransitions 0 whatever the Lease said passed every other spec.
describe('leaderElection status$: the holder and transition count as seen', () => {
  it('a Lease released after 4 transitions: seen as such, then taken as the 5th', () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const server = new FakeLeaseServer(ts);
    const seen: string[] = [];
    const sub = new Subscription();
    ts.run(() => {
      server
        .clients({ client: 'x' })
        .lease('ctrl')
        .create({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 4 })
        .subscribe();
      const election = leaderElection(server.clients({ client: 'a' }).lease('ctrl'), { identity: 'a', scheduler: ts, random: () => 0 });
      ts.schedule(
        () => sub.add(election.status$.subscribe((s) => seen.push(`${ts.now()} ${s.leader} ${s.holderIdentity} ${s.leaseTransitions}`))),
        1,
      );
      ts.schedule(() => sub.unsubscribe(), 3_000);
    });
    expect(seen).toEqual(['1 false undefined 0', '1 false  4', '1 true a 5']);
  });
});
