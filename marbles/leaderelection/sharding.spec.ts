import { delay, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { leakCheckingScheduler } from '../support/leakCheckingScheduler.ts';
import { describe, expect, it } from 'vitest';
import { FakeLeaseServer, type FakeLeaseRequest } from '../../src/testing/fakeLeases.ts';
import { shardOf } from '../../src/leaderelection/hash.ts';
import { sharding, type Sharding } from '../../src/leaderelection/sharding.ts';

// Frames are milliseconds of virtual time at the default timing (lease 15 s, renew deadline 10 s, retry 2 s);
// the fake server answers in the frame a request is sent. Four shards of the group "apples".
const SHARDS = 4;
const held = {
  e: new Set<number>(),
  a: new Set([0]),
  b: new Set([0, 1]),
  c: new Set([0, 1, 2]),
  d: new Set([0, 1, 2, 3]),
  h: new Set([2, 3]),
  p: new Set([1, 2, 3]),
  q: new Set([0, 2, 3]),
  r: new Set([3]),
  o: new Set([1]),
  s: new Set([2]),
};

/** The clock stops here; anything still scheduled then outlived its subscribers. */
const BOUND = 80_000;

function world(shards = SHARDS) {
  const ts = leakCheckingScheduler(BOUND);
  const server = new FakeLeaseServer(ts);
  /** While true every Lease write fails (500) and reads and listings still answer: an API server in trouble. */
  let writesFail = false;
  const failWrites = (fail: boolean) => (writesFail = fail);
  /** Requests that fail (500) whatever else happens. */
  let refused = (request: FakeLeaseRequest) => request.lease === '';
  const refuse = (which: (request: FakeLeaseRequest) => boolean) => (refused = which);
  const replica = (identity: string): { shards: Sharding; partition(): void } => {
    let partitioned = false;
    const fault = (request: FakeLeaseRequest) =>
      refused(request) || (writesFail && request.operation !== 'get' && request.operation !== 'list') ? 'status500' : 'ok';
    return {
      shards: sharding(server.clients({ client: identity, partitioned: () => partitioned, fault }), {
        name: 'apples',
        shards,
        identity,
        scheduler: ts,
        random: () => 0,
      }),
      partition: () => (partitioned = true),
    };
  };
  /** Applied writes as `<frame> <client> <lease suffix> <holder or ∅>`. */
  const writes = (from = 0) =>
    server.writes
      .filter((w) => w.at >= from)
      .map((w) => `${w.at} ${w.client} ${w.lease.replace('apples-', '')} ${w.record.holderIdentity || '∅'}`);
  const holders = () => Array.from({ length: shards }, (_, i) => server.get(`apples-shard-${i}`)?.record.holderIdentity);
  return { ts, server, replica, writes, holders, failWrites, refuse };
}

/** A key of `shard`. */
const keyOf = (shard: number) => Array.from({ length: 100 }, (_, i) => `ops/apple-${i}`).find((k) => shardOf(k, SHARDS) === shard)!;

describe('sharding held$ and gate (marbles, default timing)', () => {
  it('a joining replica takes its share within a retry period of the release; the last to leave releases every Lease', () => {
    const { ts, replica, writes, holders } = world();
    const a = replica('a');
    const b = replica('b');
    ts.run(({ expectObservable }) => {
      // a alone: starts empty, then each shard as its election answers (all in frame 0 here).
      // Its listing at 6 000 sees b's member Lease (written at 5 000): by rendezvous hashing b should hold 0 and 1,
      // which a hands back at once (no key in flight), keeping {2,3}.
      expectObservable(a.shards.held$, '^ 29999ms !').toBe('(eabcd) 5993ms h', held);
      // b: starts empty; its reads of shards 0 and 1 at 5 000 found a holding them; at 7 000 they are released.
      // After a left at 30 000 (its Leases released), b's next attempt at 31 000 takes 2 and 3 too.
      expectObservable(b.shards.held$, '5000ms ^ 34999ms !').toBe('5000ms e 1999ms (ab) 23996ms (cd)', held);
    });
    expect(writes(6_000).slice(0, 7)).toEqual([
      '6000 a member-a a',
      '6000 a shard-0 a',
      '6000 a shard-1 a',
      '6000 a shard-2 a',
      '6000 a shard-3 a',
      '6000 a shard-0 ∅', // in shard order: the machine's inputs are taken one at a time
      '6000 a shard-1 ∅',
    ]);
    expect(writes(30_000).filter((w) => w.startsWith('30000 '))).toEqual(['30000 a member-a ∅', '30000 a shard-2 ∅', '30000 a shard-3 ∅']);
    // b left at 40 000: every Lease it held released in that frame, and nothing written after it.
    expect(writes(40_000)).toEqual([
      '40000 b member-b ∅',
      '40000 b shard-0 ∅',
      '40000 b shard-1 ∅',
      '40000 b shard-2 ∅',
      '40000 b shard-3 ∅',
    ]);
    expect(holders()).toEqual(['', '', '', '']);
  });

  it('a shard handed over keeps its in-flight work: released only once the work is done (gate)', () => {
    const { ts, replica, writes } = world();
    const a = replica('a');
    const b = replica('b');
    const key = keyOf(0);
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const work = cold('3000ms (x|)');
      expectObservable(a.shards.held$, '^ 29999ms !').toBe('(eabcd) 5993ms h', held);
      // Started at 5 500 while shard 0 is ours: it runs to the end (not cut at 6 000, when 0 becomes b's by right).
      expectObservable(
        a.shards.gate(key, () => work),
        '5500ms ^',
      ).toBe('8500ms (x|)');
      expectSubscriptions(work.subscriptions).toBe('5500ms ^ 2999ms !');
      // b gets shard 1 at 7 000 (released at 6 000) but shard 0 only at 9 000, its first read after the release at 8 500.
      expectObservable(b.shards.held$, '5000ms ^ 24999ms !').toBe('5000ms e 1999ms x 1999ms b', { e: held.e, x: new Set([1]), b: held.b });
      // A key of a shard no longer ours (6 000 on) is not run at all: completes at once, nothing subscribed.
      expectObservable(
        a.shards.gate(key, () => cold('x')),
        '6500ms ^',
      ).toBe('6500ms |');
    });
    expect(writes(6_000).filter((w) => w.endsWith('∅') && w.includes('shard'))[0]).toBe('6000 a shard-1 ∅');
    expect(
      writes(6_000)
        .filter((w) => w.includes('shard-0'))
        .slice(0, 4),
    ).toEqual(['6000 a shard-0 a', '8000 a shard-0 a', '8500 a shard-0 ∅', '9000 b shard-0 b']);
  });

  it('a shard lost (renewals failing for a renew deadline) cancels its in-flight work at once', () => {
    const { ts, replica, writes } = world();
    const a = replica('a');
    const key = keyOf(2);
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      ts.schedule(() => a.partition(), 4_500);
      const work = cold('20000ms (x|)');
      // Last good renewals at 4 000: every shard lost at 14 000, one election after the other (same frame).
      expectObservable(a.shards.held$, '^ 19999ms !').toBe('(eabcd) 13993ms (phre)', held);
      expectObservable(
        a.shards.gate(key, () => work),
        '5000ms ^',
      ).toBe('14000ms |');
      expectSubscriptions(work.subscriptions).toBe('5000ms ^ 8999ms !');
    });
    // Nothing reached the server after the partition (the releases on leaving fail too).
    expect(writes(4_001)).toEqual([]);
  });
  it('assigned$ runs ahead of held$: the shards the members give us, as soon as a listing shows them', () => {
    const { ts, replica } = world();
    const a = replica('a');
    const b = replica('b');
    ts.run(({ expectObservable }) => {
      ts.schedule(() => b.partition(), 10_500);
      // b's first listing at 5 000 sees a: 0 and 1 are b's from then on, held at 7 000 (a releases them at 6 000).
      // b is cut off at 10 500 and loses 1 and 0 at 19 000 (its renewals last landed at 9 000); its listings fail, so its
      // view of the members stays as it was, and so does assigned$ (which says nothing before that first listing).
      expectObservable(b.shards.assigned$, '5000ms ^ 29999ms !').toBe('5000ms b', held);
      expectObservable(b.shards.held$, '5000ms ^ 29999ms !').toBe('5000ms e 1999ms (ab) 11996ms (oe)', held);
      // a: alone at first. b's member Lease lapses for a at 25 000, a lease duration after a's listing of 10 000 first showed
      // b's last renewal: b's shards are assigned to a in that frame, before a takes their Leases (lapsed too, same frame).
      expectObservable(a.shards.assigned$, '^ 34999ms !').toBe('d 5999ms h 18999ms d', held);
      expectObservable(a.shards.held$, '^ 34999ms !').toBe('(eabcd) 5993ms h 18999ms (qd)', held);
    });
  });
  it("a dead member's shards are assigned within leaseDuration + retryPeriod of its last renewal: the bound is reached", () => {
    const { ts, replica, writes } = world();
    const a = replica('a');
    const b = replica('b');
    ts.run(({ expectObservable }) => {
      // a lists the members at 0, 2 000, 4 000 …; b joins at 4 001 and renews its member Lease at 4 001, 6 001, 8 001 and
      // 10 001, is cut off at 10 500. a's listing at 10 000 missed b's last renewal by a millisecond: the listing of 12 000
      // shows it first, and b lapses for a a lease duration later, at 27 000 = 10 001 + 15 000 + 2 000 − 1.
      ts.schedule(() => b.partition(), 10_500);
      expectObservable(a.shards.assigned$, '^ 34999ms !').toBe('d 5999ms h 20999ms d', held);
      expectObservable(b.shards.assigned$, '4001ms ^ 30998ms !').toBe('4001ms b', held);
    });
    // At the lapse a releases b's member Lease (quoting the resourceVersion it saw unchanged), so a replica listing it later
    // does not count b alive for a lease duration of its own.
    expect(writes(10_000).filter((w) => w.includes('member-b'))).toEqual(['10001 b member-b b', '27000 a member-b ∅']);
  });
  it('while its own member Lease is not renewed a replica drops no member: Lease writes failing for 40 s widen no assignment', () => {
    const { ts, replica, failWrites } = world();
    const a = replica('a');
    const b = replica('b');
    ts.run(({ expectObservable }) => {
      // Settled by 10 000 (a {2,3}, b {0,1}). Every Lease write fails from 10 500 to 50 500 while listings answer: both
      // stop leading at 20 000 (renew deadline after the last good renewals, of 10 000), their member Leases go unrenewed for
      // 40 s, and each still counts the other. At 52 000 each renews, and gives the other a lease duration from then to
      // renew before it can lapse: nobody is dropped, the assignments never change, a takes its shards back.
      ts.schedule(() => failWrites(true), 10_500);
      ts.schedule(() => failWrites(false), 50_500);
      expectObservable(a.shards.assigned$, '^ 79999ms !').toBe('d 5999ms h', held);
      expectObservable(b.shards.assigned$, '5000ms ^ 74999ms !').toBe('5000ms b', held);
      expectObservable(a.shards.held$, '^ 79999ms !').toBe('(eabcd) 5993ms h 13999ms (re) 31996ms (sh)', held);
    });
  });
  it('a member dropped before the Lease writes failed stays dropped when they come back', () => {
    const { ts, replica, failWrites, refuse, writes } = world();
    const a = replica('a');
    const b = replica('b');
    const c = replica('c');
    // a and b cannot release c's member Lease when it lapses (see the join-after-crash spec): its old record stays.
    refuse((request) => request.lease === 'apples-member-c' && request.client !== 'c');
    const changes: string[] = [];
    const subs: Subscription[] = [];
    ts.run(() => {
      // c is cut off at 1 000 and lapses for a and b by 17 000 (its member Lease stays, unrenewed); every write fails from
      // 18 500 to 48 500. When a and b renew again, c's old record must not count as a renewal seen then.
      ts.schedule(() => c.partition(), 1_000);
      ts.schedule(() => failWrites(true), 18_500);
      ts.schedule(() => failWrites(false), 48_500);
      for (const [name, r] of [
        ['a', a],
        ['b', b],
      ] as const)
        subs.push(r.shards.assigned$.subscribe((s) => changes.push(`${ts.now()} ${name} ${[...s].sort().join('')}`)));
      subs.push(c.shards.held$.subscribe());
      ts.schedule(() => subs.forEach((sub) => sub.unsubscribe()), 79_000);
      ts.schedule(() => changes.push('18000'), 18_000);
    });
    const after = changes.slice(changes.indexOf('18000') + 1);
    expect(after).toEqual([]);
    expect(writes(1_000).filter((w) => w.includes('member-c'))).toEqual([]);
    expect(changes.length).toBeGreaterThan(2);
  });
  it('a replica joining after a crash does not count the dead member: the shards the survivors hand it are taken within a retry period', () => {
    // 12 shards. By rendezvous hashing shard 4 is b's among {a, b}, c's among {a, b, c}, but d's among {a, b, c, d}.
    const { ts, replica, writes } = world(12);
    const a = replica('a');
    const b = replica('b');
    const d = replica('d');
    const c = replica('c');
    const subs: Subscription[] = [];
    const assignedToC: string[] = [];
    ts.run(() => {
      // d crashes at 5 000 (its member Lease stays, last renewed at 4 000); a and b take its shards by 21 000. c, a new
      // identity, joins at 30 000: d's member Lease is in its first listing. b hands shard 4 over to c (its listing shows
      // c's member Lease) and c must take it, not wait for d's Lease to lapse by c's own clock (45 000).
      ts.schedule(() => d.partition(), 5_000);
      subs.push(a.shards.held$.subscribe(), b.shards.held$.subscribe(), d.shards.held$.subscribe());
      ts.schedule(
        () => subs.push(c.shards.assigned$.subscribe((s) => assignedToC.push(`${ts.now()} ${[...s].sort((x, y) => x - y).join(',')}`))),
        30_000,
      );
      ts.schedule(() => subs.forEach((sub) => sub.unsubscribe()), 60_000);
    });
    expect(assignedToC[0]).toMatch(/^30000 (.*,)?4(,.*)?$/);
    // a released d's member Lease when it lapsed (by 21 000): c's first listing does not count d. b's listing at 32 000
    // shows c, b releases 4 then, and c takes it at its next attempt, a retry period later (with d counted: at 45 000).
    expect(
      writes(30_000)
        .filter((w) => w.includes(' shard-4 '))
        .slice(0, 3),
    ).toEqual(['31000 b shard-4 b', '32000 b shard-4 ∅', '34000 c shard-4 c']);
    expect(writes(0).filter((w) => w.includes('member-d ∅'))).toHaveLength(1);
  });

  it("a members' listing slower than one request (a paged one: 8 s against 5 s) is waited for, not timed out every time", () => {
    const ts = leakCheckingScheduler(BOUND);
    const server = new FakeLeaseServer(ts);
    // The listing emits once, after its last page: timed as one request, every listing of a group past one page
    // (500 members) on a server slower than ~1 s a page failed, and a never saw b (audit25).
    const direct = server.clients({ client: 'a' });
    const slow = {
      lease: direct.lease.bind(direct),
      list: (labels: Readonly<Record<string, string>>) => direct.list(labels).pipe(delay(8_000, ts)),
    };
    const a = sharding(slow, { name: 'apples', shards: SHARDS, identity: 'a', scheduler: ts, random: () => 0 });
    const b = sharding(server.clients({ client: 'b' }), { name: 'apples', shards: SHARDS, identity: 'b', scheduler: ts, random: () => 0 });
    const assigned: number[] = [];
    const failures: string[] = [];
    ts.run(() => {
      const subscriptions = [
        a.assigned$.subscribe((s) => assigned.push(s.size)),
        a.errors$.subscribe((e) => failures.push(`${e.reason} ${e.message}`)),
        b.held$.subscribe(),
      ];
      ts.schedule(() => subscriptions.forEach((s) => s.unsubscribe()), 40_000);
    });
    expect(failures.filter((f) => f.startsWith('Timeout list'))).toEqual([]);
    // a shares the shards with b once a listing has shown b.
    expect(assigned.at(-1)).toBeLessThan(SHARDS);
  });

  it("a listing read before our release of a dead member's Lease, answered after it, does not bring the member back", () => {
    const ts = leakCheckingScheduler(BOUND);
    const server = new FakeLeaseServer(ts);
    // a's listings are read by the server when sent and answered 3 s later: longer than the retry period (2 s), so they
    // overlap, and within the request timeout (5 s). b is cut off at 10 500; its last renewal, of 10 000, is first shown
    // by the listing answered at 15 000, so b lapses for a at 30 000, when a releases its member Lease; the listings sent
    // at 28 000 and 30 000 (the same millisecond as the release) still show b's last renewal when they answer, at 31 000
    // and 33 000.
    const direct = server.clients({ client: 'a' });
    const slow = {
      lease: direct.lease.bind(direct),
      list: (labels: Readonly<Record<string, string>>) => direct.list(labels).pipe(delay(3_000, ts)),
    };
    const a = sharding(slow, { name: 'apples', shards: SHARDS, identity: 'a', scheduler: ts, random: () => 0 });
    let partitioned = false;
    const b = sharding(server.clients({ client: 'b', partitioned: () => partitioned }), {
      name: 'apples',
      shards: SHARDS,
      identity: 'b',
      scheduler: ts,
      random: () => 0,
    });
    const assigned: string[] = [];
    ts.run(() => {
      const subscriptions = [a.assigned$.subscribe((s) => assigned.push(`${ts.now()} ${[...s].sort().join('')}`)), b.held$.subscribe()];
      ts.schedule(() => (partitioned = true), 10_500);
      ts.schedule(() => subscriptions.forEach((s) => s.unsubscribe()), 45_000);
    });
    expect(server.writes.filter((w) => w.lease === 'apples-member-b' && w.client === 'a').map((w) => w.at)).toEqual([30_000]);
    // b leaves a's view once, for good (before: back at 31 000, until a listing sent after the release answered).
    expect(assigned).toEqual(['3000 0123', '5000 23', '30000 0123']);
  });

  it("released$ waits for every Lease's release (the shards' and the member's), each given up after requestTimeoutMs", () => {
    const ts = leakCheckingScheduler(BOUND);
    const server = new FakeLeaseServer(ts);
    // From 10 000 the server is slow: 1 500 ms each way, shard 2's answers 2 400 each way, shard 3's never.
    let slow = false;
    const latencyMs = (r: FakeLeaseRequest) => (!slow ? 0 : r.lease === 'apples-shard-2' ? 2_400 : 1_500);
    const fault = (r: FakeLeaseRequest) => (slow && r.lease === 'apples-shard-3' ? 'hang' : 'ok');
    const a = sharding(server.clients({ client: 'a', latencyMs, fault }), { name: 'apples', shards: SHARDS, identity: 'a', scheduler: ts });
    const released: string[] = [];
    const wait = (label: string) =>
      a.released$.subscribe({ next: () => released.push(`${label} ${ts.now()}`), complete: () => released.push(`${label}|`) });
    ts.run(() => {
      wait('before'); // nothing in flight, nothing subscribed: at once; it does not join the group
      const running = a.held$.subscribe();
      ts.schedule(() => wait('running'), 5_000); // nothing released yet: at once
      ts.schedule(() => {
        slow = true;
        running.unsubscribe(); // the member Lease and shards 0-3 released
        wait('left');
      }, 10_000);
      ts.schedule(() => wait('again'), 15_000); // after it: at once
    });
    // The member's and shards 0 and 1's answered at 13 000, shard 2's at 14 800, shard 3's timed out at 15 000.
    expect(released).toEqual(['before 0', 'before|', 'running 5000', 'running|', 'left 15000', 'left|', 'again 15000', 'again|']);
    expect(
      server.writes.filter((w) => w.at >= 10_000).map((w) => `${w.at} ${w.lease.replace('apples-', '')} ${w.record.holderIdentity || '∅'}`),
    ).toEqual(['11500 member-a ∅', '11500 shard-0 ∅', '11500 shard-1 ∅', '12400 shard-2 ∅']);
  });
});
