import { BehaviorSubject, Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';

// Frames are ms of virtual time, the timing the default one; the fake server is 10 ms away each way.
// Found by mutation testing (gaps102): a write in flight when want$ turns false makes us holder after we stopped wanting.
describe('leaderElection: want$ turns false while our write is in flight', () => {
  it('the write that lands makes us holder: we never say leader, and hand the Lease back at once', () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const server = new FakeLeaseServer(ts);
    const want$ = new BehaviorSubject(true);
    const lease = server.clients({ client: 'a', latencyMs: () => 10 }).lease('ctrl');
    const election = leaderElection(lease, { identity: 'a', scheduler: ts, random: () => 0, want$ });
    const led: string[] = [];
    const sub = new Subscription();
    ts.run(() => {
      sub.add(election.leader$.subscribe((l) => led.push(`${ts.now()} ${l}`)));
      // GET sent at 0, answered 404 at 20; the create sent at 20 lands at 30, answered at 40.
      ts.schedule(() => want$.next(false), 25);
      ts.schedule(() => sub.unsubscribe(), 15_000);
    });
    expect(led).toEqual(['0 false']);
    expect(server.writes.map((w) => `${w.at} ${w.record.holderIdentity || '∅'}`)).toEqual(['30 a', '50 ∅']);
  });
});
