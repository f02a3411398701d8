import { BehaviorSubject, Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';

// Frames are ms of virtual time, the timing the default one, the fake server answering at once.
// Found by mutation testing (gaps102): a failed release while the campaign runs (want$ false) went unreported unnoticed.
describe('leaderElection: a release refused while the campaign runs', () => {
  it('want$ turns false, the release is answered 500: the failure is on errors$, and the candidate keeps watching', () => {
    const ts = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const server = new FakeLeaseServer(ts);
    const want$ = new BehaviorSubject(true);
    const lease = server.clients({ client: 'a', fault: (r) => (r.operation === 'release' ? 'status500' : 'ok') }).lease('ctrl');
    const election = leaderElection(lease, { identity: 'a', scheduler: ts, random: () => 0, want$ });
    const seen: string[] = [];
    const sub = new Subscription();
    ts.run(() => {
      sub.add(election.leader$.subscribe((l) => seen.push(`${ts.now()} leader ${l}`)));
      sub.add(election.errors$.subscribe((e) => seen.push(`${ts.now()} ${e.operation} ${e.reason}`)));
      ts.schedule(() => want$.next(false), 3_000);
      ts.schedule(() => sub.unsubscribe(), 5_000);
    });
    expect(seen.slice(0, 4)).toEqual(['0 leader false', '0 leader true', '3000 leader false', '3000 release ServerError']);
  });
});
