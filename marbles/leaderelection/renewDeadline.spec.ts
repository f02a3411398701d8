// Our renew deadline, at the default timing (lease 15 s, renew deadline 10 s, retry 2 s): a leader leads until
// renewDeadline after the *start* of its last successful renewal, and renews every retry period, so the last renewal
// that can keep it is sent renewDeadline − retryPeriod (8 s) after the last good one: it rides out an API outage of up
// to 8 s, and steps down in a longer one. client-go counts from the end of its last good renewal plus a retry period
// (tools/leaderelection/leaderelection.go renew(): 12 s); ours keeps more margin before a peer may take the Lease
// (leaseDuration − renewDeadline), on purpose (docs/replicas.md, review audit50). Frames are ms of virtual time.
import { defer, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import type { LeaseClient } from '../../src/leaderelection/leaseClient.ts';

const v = { f: false, t: true };

/** A leader (instant answers, renewing at 2 000, 4 000, …) whose Lease API is unreachable from `from` to `to`. */
function outage(from: number, to: number): { readonly sent: string[]; readonly run: (expected: string) => void } {
  const ts = leakCheckingScheduler(60_000);
  const server = new FakeLeaseServer(ts);
  let partitioned = false;
  const sent: string[] = [];
  const raw = server.clients({ client: 'a', partitioned: () => partitioned }).lease('ctrl');
  const log = <T>(op: string, r: () => Observable<T>) =>
    defer(() => (sent.push(`${ts.now()} ${op}${partitioned ? ' (cut off)' : ''}`), r()));
  const lease: LeaseClient = {
    name: raw.name,
    get: () => log('get', () => raw.get()),
    create: (r) => log('create', () => raw.create(r)),
    update: (rv, r) => log('update', () => raw.update(rv, r)),
  };
  const a = leaderElection(lease, { identity: 'a', scheduler: ts, random: () => 0 });
  return {
    sent,
    run: (expected) =>
      ts.run(({ expectObservable }) => {
        ts.schedule(() => (partitioned = true), from);
        ts.schedule(() => (partitioned = false), to);
        expectObservable(a.leader$, '^ 29999ms !').toBe(expected, v);
      }),
  };
}

describe('renew deadline at the default timing: counted from the start of the last good renewal', () => {
  it('a 7 s outage (4 500 to 11 500) costs the leader nothing: its renewal at 12 000, inside 4 000 + 10 000, lands', () => {
    const { sent, run } = outage(4_500, 11_500);
    run('(ft)');
    expect(sent.filter((s) => s.startsWith('12000 '))).toEqual(['12000 update']);
  });

  it('a 9 s outage (4 500 to 13 500) steps the leader down at 14 000 (4 000 + 10 000), then it takes the Lease back', () => {
    const { sent, run } = outage(4_500, 13_500);
    // Down at its deadline; the Lease is still its own, so its next read (14 000) takes it back at once.
    run('(ft) 13996ms (ft)');
    expect(sent.filter((s) => s.includes('update (cut off)'))).toEqual([
      '6000 update (cut off)',
      '8000 update (cut off)',
      '10000 update (cut off)',
      '12000 update (cut off)',
    ]);
  });
});
