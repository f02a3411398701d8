import { defer, mergeMap, throwError, timer, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';
import { describe, expect, it } from 'vitest';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';
import { leaderElection, type LeaderElection } from '../../src/leaderelection/leaderElection.ts';
import type { LeaseClient } from '../../src/leaderelection/leaseClient.ts';
import { LeaseError } from '../../src/leaderelection/errors.ts';

// Frames are milliseconds of virtual time; the timing is the default one (lease 15 s, renew deadline 10 s, retry 2 s).
// The fake server answers in the frame a request is sent (no latency) unless a case says otherwise.
const v = { f: false, t: true };

/** The clock stops at this frame; anything still scheduled then is a timer that outlived its subscribers. */
const BOUND = 60_000;

function testScheduler(): TestScheduler {
  return leakCheckingScheduler(BOUND);
}

/** Every request a client sends, as `<frame> <operation>`, noted when it is sent (whether or not it arrives). */
function logging(client: LeaseClient, ts: TestScheduler, log: string[]): LeaseClient {
  const sent = <T>(operation: string, request: () => Observable<T>) =>
    defer(() => {
      log.push(`${ts.now()} ${operation}`);
      return request();
    });
  return {
    name: client.name,
    get: () => sent('get', () => client.get()),
    create: (record) => sent('create', () => client.create(record)),
    update: (resourceVersion, record) =>
      sent(record.holderIdentity === '' ? 'release' : 'update', () => client.update(resourceVersion, record)),
  };
}

interface Replica {
  readonly election: LeaderElection;
  /** Requests as sent. */
  readonly sent: string[];
  /** From now on every request fails at once (connection refused) without reaching the server. */
  partition(): void;
  /** Requests reach the server again. */
  heal(): void;
}

function world(ts: TestScheduler, latencyMs = 0) {
  const server = new FakeLeaseServer(ts);
  const replica = (identity: string): Replica => {
    const sent: string[] = [];
    let partitioned = false;
    const lease = server.clients({ client: identity, latencyMs: () => latencyMs, partitioned: () => partitioned }).lease('ctrl');
    return {
      election: leaderElection(logging(lease, ts, sent), { identity, scheduler: ts, random: () => 0 }),
      sent,
      partition: () => (partitioned = true),
      heal: () => (partitioned = false),
    };
  };
  /** Applied writes as `<frame> <client> <holder or ∅>`. */
  const writes = () => server.writes.map((w) => `${w.at} ${w.client} ${w.record.holderIdentity || '∅'}`);
  return { server, replica, writes };
}

/** `<frame> <operation>` for each multiple of `period` in [from, to]. */
function every(period: number, from: number, to: number, operation: string): string[] {
  const out: string[] = [];
  for (let t = from; t <= to; t += period) out.push(`${t} ${operation}`);
  return out;
}

describe('leaderElection leader$ (marbles, default timing)', () => {
  it('a single candidate takes a missing Lease at once, renews every retry period, and releases it when the last subscriber leaves', () => {
    const ts = testScheduler();
    const { server, replica, writes } = world(ts);
    const a = replica('a');
    ts.run(({ expectObservable }) => {
      const sub = '^ 9999ms !';
      // false on subscription, true in the same frame: GET (404) and POST answered at once.
      expectObservable(a.election.leader$, sub).toBe('(ft)', v);
    });
    // One GET and one create at 0, then the fast-path renewal (an update quoting the last resourceVersion written)
    // every retry period; nothing more once the subscriber left at 10 000 but the release.
    // (The renewal due at 10 000 is not sent: the timer is torn down in the same frame, before it.)
    expect(a.sent).toEqual(['0 get', '0 create', ...every(2_000, 2_000, 8_000, 'update'), '10000 release']);
    expect(writes()).toEqual(['0 a a', '2000 a a', '4000 a a', '6000 a a', '8000 a a', '10000 a ∅']);
    // client-go's ReleaseOnCancel: holder emptied, a 1 s lease, the transition count kept.
    expect(server.get('ctrl')?.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
  });

  it('a released Lease (holderIdentity "") is free: taken at once with one read and one write, the transition counted', () => {
    const ts = testScheduler();
    const { server, replica, writes } = world(ts);
    const a = replica('a');
    ts.run(({ expectObservable }) => {
      // Whoever held it before released it at frame 0, before we subscribe (same frame).
      const previous = server.clients({ client: 'old' }).lease('ctrl');
      previous.create({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 3 }).subscribe();
      expectObservable(a.election.leader$, '^ 2999ms !').toBe('(ft)', v);
    });
    expect(a.sent).toEqual(['0 get', '0 update', '2000 update', '3000 release']);
    expect(writes()).toEqual(['0 old ∅', '0 a a', '2000 a a', '3000 a ∅']);
    expect(server.get('ctrl')?.record).toMatchObject({ holderIdentity: '', leaseTransitions: 4 });
  });

  it('with latency: true after the round trips (f-t), each renewal a retry period after the previous answer', () => {
    const ts = testScheduler();
    const { replica, writes } = world(ts, 10);
    const a = replica('a');
    ts.run(({ expectObservable }) => {
      // GET sent at 0, answered at 20; POST sent at 20, applied at 30, answered at 40.
      expectObservable(a.election.leader$, '^ 4999ms !').toBe('f 39ms t', v);
    });
    expect(a.sent).toEqual(['0 get', '20 create', '2040 update', '4060 update', '5000 release']);
    expect(writes()).toEqual(['30 a a', '2050 a a', '4070 a a', '5010 a ∅']);
  });

  it('released$: at once when no release is in flight; else once the release is answered, or has timed out after requestTimeoutMs', () => {
    const ts = testScheduler();
    const server = new FakeLeaseServer(ts);
    let latencyMs = 10;
    const sent: string[] = [];
    const lease = server.clients({ client: 'a', latencyMs: () => latencyMs }).lease('ctrl');
    const election = leaderElection(logging(lease, ts, sent), { identity: 'a', scheduler: ts, random: () => 0 });
    const released: string[] = [];
    const wait = (label: string) =>
      election.released$.subscribe({ next: () => released.push(`${label} ${ts.now()}`), complete: () => released.push(`${label}|`) });
    ts.run(() => {
      wait('before'); // nothing in flight, nothing subscribed: at once
      const first = election.leader$.subscribe();
      ts.schedule(() => {
        first.unsubscribe(); // release sent at 5000, answered at 5020 (10 ms each way)
        wait('answered');
      }, 5_000);
      ts.schedule(() => election.leader$.subscribe().unsubscribe(), 6_000); // not leading: nothing to release
      ts.schedule(() => wait('idle'), 6_000);
      const second = ts.schedule(() => {
        const again = election.leader$.subscribe();
        ts.schedule(() => {
          latencyMs = 20_000; // the server answers too late
          again.unsubscribe(); // release sent at 9000: times out after requestTimeoutMs (renewDeadline / 2), 14 000
          wait('timedOut');
        }, 2_000);
      }, 7_000);
      void second;
    });
    expect(sent.filter((r) => r.endsWith('release'))).toEqual(['5000 release', '9000 release']);
    expect(released).toEqual(['before 0', 'before|', 'answered 5020', 'answered|', 'idle 6000', 'idle|', 'timedOut 14000', 'timedOut|']);
  });

  it('released$ at worst: two 409s, each answered just inside requestTimeoutMs, chain 5 requests (5 × 4 999 ms)', () => {
    const ts = testScheduler();
    const server = new FakeLeaseServer(ts);
    const sent: string[] = [];
    const lease = server.clients({ client: 'a' }).lease('ctrl');
    let slow = false;
    // Once slow, a release is refused (409: a renewal of ours landed meanwhile, as the client would think) and a read
    // shows the Lease still ours, each answered 1 ms before requestTimeoutMs (5 000 at the defaults).
    const late = <T>(answer: Observable<T>) => timer(4_999, ts).pipe(mergeMap(() => answer));
    const conflict = () => throwError(() => new LeaseError('Conflict', 'release', 'ctrl', 'modified', 409));
    const client: LeaseClient = {
      ...lease,
      get: () => (slow ? late(lease.get()) : lease.get()),
      update: (rv, record) => (slow && record.holderIdentity === '' ? late(conflict()) : lease.update(rv, record)),
    };
    const election = leaderElection(logging(client, ts, sent), { identity: 'a', scheduler: ts, random: () => 0 });
    const released: number[] = [];
    ts.run(() => {
      const running = election.leader$.subscribe();
      ts.schedule(() => {
        slow = true;
        running.unsubscribe();
        election.released$.subscribe(() => released.push(ts.now()));
      }, 5_000);
    });
    // Each sent when the one before is answered; the third 409 ends it (a release tries twice again at most).
    expect(sent.slice(-5)).toEqual(['5000 release', '9999 get', '14998 release', '19997 get', '24996 release']);
    expect(released).toEqual([5_000 + 5 * 4_999]);
  });

  it('the leader dies: the other candidate takes over exactly one lease duration after it last saw the record change', () => {
    const ts = testScheduler();
    const { server, replica, writes } = world(ts);
    const a = replica('a');
    const b = replica('b');
    ts.run(({ expectObservable }) => {
      // a is killed at 4 500: cut off from the API server and gone (its release never arrives).
      ts.schedule(() => a.partition(), 4_500);
      expectObservable(a.election.leader$, '^ 4499ms !').toBe('(ft)', v);
      // b polls at 1 000, 3 000, 5 000, …: the read at 5 000 shows a's renewal of 4 000, the last change it sees.
      // It wakes exactly when that record lapses, 5 000 + 15 000, reads it unchanged and takes it over.
      expectObservable(b.election.leader$, '1000ms ^ 21999ms !').toBe('1000ms f 18999ms t', v);
    });
    expect(a.sent).toEqual(['0 get', '0 create', '2000 update', '4000 update', '4500 release']);
    expect(b.sent).toEqual([
      ...every(2_000, 1_000, 19_000, 'get'),
      '20000 get',
      '20000 update',
      ...every(2_000, 22_000, 22_000, 'update'),
      '23000 release',
    ]);
    expect(writes()).toEqual(['0 a a', '2000 a a', '4000 a a', '20000 b b', '22000 b b', '23000 b ∅']);
    expect(server.get('ctrl')?.record).toMatchObject({ holderIdentity: '', leaseTransitions: 1 });
  });

  it('a partitioned leader steps down at its renew deadline (renewals failing), before the other can take the Lease', () => {
    const ts = testScheduler();
    const { server, replica, writes } = world(ts);
    const a = replica('a');
    const b = replica('b');
    ts.run(({ expectObservable }) => {
      ts.schedule(() => a.partition(), 4_500);
      ts.schedule(() => a.heal(), 22_500);
      // a's last good renewal started at 4 000: it leads until 4 000 + 10 000 by its own clock,
      // although it is still subscribed and still trying.
      expectObservable(a.election.leader$, '^ 22999ms !').toBe('(ft) 13996ms f', v);
      // b, as in the death case: takes over at 5 000 + 15 000 = 20 000, six seconds after a stepped down.
      expectObservable(b.election.leader$, '1000ms ^ 22999ms !').toBe('1000ms f 18999ms t', v);
    });
    // Four failed renewals (6 000 … 12 000), each followed by a read (client-go's slow path after any failed fast-path
    // renewal), stepped down at 14 000 (the deadline fires before the wake due then), then a candidate's reads,
    // failing too, every retry period.
    // On leaving at 23 000 (partition healed) a still believes the Lease it last saw is its own and tries to release
    // it, as client-go does, quoting that record's resourceVersion: refused (409, b has written since), a reads,
    // sees b holding it, and stops there. b's Lease is untouched.
    expect(a.sent).toEqual([
      '0 get',
      '0 create',
      ...every(2_000, 2_000, 4_000, 'update'),
      ...every(2_000, 6_000, 12_000, 'update').flatMap((update) => [update, update.replace('update', 'get')]),
      ...every(2_000, 14_000, 22_000, 'get'),
      '23000 release',
      '23000 get',
    ]);
    expect(b.sent.filter((r) => !r.endsWith(' get'))).toEqual(['20000 update', '22000 update', '24000 release']);
    expect(writes()).toEqual(['0 a a', '2000 a a', '4000 a a', '20000 b b', '22000 b b', '24000 b ∅']);
    expect(server.get('ctrl')?.record).toMatchObject({ holderIdentity: '', leaseTransitions: 1 });
  });

  it('refCount: two subscribers share one campaign; once both left, no request is sent and no timer runs', () => {
    const ts = testScheduler();
    const { server, replica, writes } = world(ts);
    const a = replica('a');
    ts.run(({ expectObservable }) => {
      expectObservable(a.election.leader$, '^ 4999ms !').toBe('(ft)', v);
      // The second one gets the latest status replayed (true), and starts nothing new.
      expectObservable(a.election.leader$, '1000ms ^ 5999ms !').toBe('1000ms t', v);
      // status$ shares the same campaign too.
      expectObservable(a.election.status$, '3000ms ^ 999ms !').toBe('3000ms s', {
        s: { leader: true, holderIdentity: 'a', leaseTransitions: 0 },
      });
    });
    // One GET, one create, one renewal per retry period for all three subscribers; the release at 7 000
    // when the last one left; nothing after it (and the flush bound found no timer left).
    expect(a.sent).toEqual(['0 get', '0 create', '2000 update', '4000 update', '6000 update', '7000 release']);
    expect(writes()).toEqual(['0 a a', '2000 a a', '4000 a a', '6000 a a', '7000 a ∅']);
    expect(server.get('ctrl')?.record.holderIdentity).toBe('');
  });

  it('resubscribing after the last subscriber left starts a new campaign (false first, not a replayed true)', () => {
    const ts = testScheduler();
    const { replica, writes } = world(ts);
    const a = replica('a');
    ts.run(({ expectObservable }) => {
      expectObservable(a.election.leader$, '^ 2999ms !').toBe('(ft)', v);
      expectObservable(a.election.leader$, '5000ms ^ 999ms !').toBe('5000ms (ft)', v);
    });
    expect(a.sent).toEqual(['0 get', '0 create', '2000 update', '3000 release', '5000 get', '5000 update', '6000 release']);
    expect(writes()).toEqual(['0 a a', '2000 a a', '3000 a ∅', '5000 a a', '6000 a ∅']);
  });
});
