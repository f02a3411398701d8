/**
 * sharding() deletes stale member Leases (review audit15: one Lease was left per departed member, listed every retry
 * period by every replica, until the listing passed `maxBodyBytes` and every view froze). Default timing (lease 15 s,
 * retry 2 s: a released member Lease unchanged for 5 min is deleted), against the fake Lease server, in virtual time.
 * The rule itself is rows of shardingMachine.spec.ts.
 */
import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { LeaseError } from '../../src/leaderelection/errors.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { STALE_MEMBER_MS } from '../../src/leaderelection/shardingMachine.ts';
import { FakeLeaseServer, type FakeClientOptions, type FakeLeaseRequest } from '../../src/testing/fakeLeases.ts';

function world(maxFrames: number) {
  const scheduler = new TestScheduler(() => true);
  scheduler.maxFrames = maxFrames;
  const server = new FakeLeaseServer(scheduler);
  const subscription = new Subscription();
  const errors: LeaseError[] = [];
  const deletes: (FakeLeaseRequest & { at: number })[] = [];
  /** A replica joining now; `leave()` unsubscribes it (it releases its Leases). */
  const replica = (identity: string, options: Partial<FakeClientOptions> = {}) => {
    const fault = (request: FakeLeaseRequest) => {
      if (request.operation === 'delete') deletes.push({ ...request, at: scheduler.now() });
      return options.fault?.(request) ?? 'ok';
    };
    const shards = sharding(server.clients({ ...options, client: identity, fault }), { name: 'g', shards: 2, identity, scheduler });
    const own = new Subscription();
    own.add(shards.errors$.subscribe((e) => errors.push(e)));
    own.add(shards.status$.subscribe());
    subscription.add(own);
    return { leave: () => own.unsubscribe() };
  };
  const at = (ms: number, work: () => void) => scheduler.schedule(work, ms - scheduler.now());
  /** What errors$ said about member Leases (the shard elections' own 409s are reported as always). */
  const memberErrors = () => errors.filter((e) => e.lease.startsWith('g-member-'));
  const members = () => server.names().filter((name) => name.startsWith('g-member-'));
  return { scheduler, server, subscription, memberErrors, deletes, replica, at, members };
}

describe('sharding() and the member Leases of departed replicas', () => {
  it('a departed member Lease is deleted once released and unchanged for 5 min (at default timing), not before', () => {
    const { scheduler, server, subscription, memberErrors, deletes, replica, at } = world(500_000);
    replica('a');
    at(10_000, () => {
      const b = replica('b');
      at(20_000, () => b.leave());
    });
    const seen: Record<string, string | undefined> = {};
    const look = (ms: number) => at(ms, () => (seen[ms] = server.get('g-member-b')?.record.holderIdentity));
    // b's release is written at 20 000, and a's listing then first shows it: deleted by the listing at 320 000.
    look(20_001);
    look(319_999);
    look(320_001);
    at(330_000, () => subscription.unsubscribe());
    scheduler.flush();
    expect(STALE_MEMBER_MS).toBe(300_000);
    expect(seen).toEqual({ 20001: '', 319999: '', 320001: undefined });
    expect(deletes.map((d) => [d.at, d.client, d.lease])).toEqual([[320_000, 'a', 'g-member-b']]);
    expect(memberErrors()).toEqual([]);
  });

  it('a member Lease taken back while the deletion is on its way is not deleted (a 409, not reported)', () => {
    const { scheduler, server, subscription, memberErrors, deletes, replica, at } = world(500_000);
    let back: { leave(): void } | undefined;
    // a's delete takes 1 s to reach the server; b comes back (same identity) the moment it is sent.
    replica('a', {
      latencyMs: (request) => (request.operation === 'delete' ? 1_000 : 0),
      fault: (request) => {
        if (request.operation === 'delete') back ??= replica('b');
        return 'ok';
      },
    });
    at(10_000, () => {
      const b = replica('b');
      at(20_000, () => b.leave());
    });
    at(330_000, () => subscription.unsubscribe());
    let holder: string | undefined;
    // Right after the deletion reached the server (321 000), and before b's next attempt could have created it again.
    at(321_001, () => (holder = server.get('g-member-b')?.record.holderIdentity));
    scheduler.flush();
    expect(back).toBeDefined();
    expect(deletes.map((d) => [d.at, d.client, d.lease])).toEqual([[320_000, 'a', 'g-member-b']]);
    expect(holder).toBe('b');
    expect(memberErrors()).toEqual([]);
  });

  it('of two replicas only one deletes, and neither reports anything', () => {
    const { scheduler, subscription, memberErrors, deletes, replica, at, members } = world(500_000);
    replica('a');
    replica('c');
    at(10_000, () => {
      const b = replica('b');
      at(20_000, () => b.leave());
    });
    let left: string[] = [];
    at(329_999, () => (left = members()));
    at(330_000, () => subscription.unsubscribe());
    scheduler.flush();
    expect(left.sort()).toEqual(['g-member-a', 'g-member-c']);
    expect(deletes.map((d) => [d.client, d.lease])).toEqual([['a', 'g-member-b']]);
    expect(memberErrors()).toEqual([]);
  });

  it('a failed deletion (500) is reported and tried again a minute later', () => {
    let failing = true;
    const { scheduler, subscription, memberErrors, deletes, replica, at, members } = world(500_000);
    replica('a', { fault: (request) => (request.operation === 'delete' && failing ? 'status500' : 'ok') });
    at(10_000, () => {
      const b = replica('b');
      at(20_000, () => b.leave());
    });
    at(321_000, () => (failing = false));
    let left: string[] = [];
    at(439_999, () => (left = members()));
    at(440_000, () => subscription.unsubscribe());
    scheduler.flush();
    expect(deletes.map((d) => d.at)).toEqual([320_000, 380_000]);
    expect(memberErrors().map((e) => [e.reason, e.operation, e.lease])).toEqual([['ServerError', 'delete', 'g-member-b']]);
    expect(left).toEqual(['g-member-a']);
  });

  it('500 members come and go (half of them crash): the member Leases on the server stay under a bound', () => {
    const { scheduler, server, subscription, memberErrors, replica, at, members } = world(10_000_000);
    replica('a');
    let most = 0;
    let cut = false;
    // One after the other (each schedules the next: the clock's queue stays short).
    const cycle = (i: number) => {
      if (i === 500) return;
      const partitioned = i % 2 === 1 ? () => cut : () => false;
      cut = false;
      const b = replica(`b${i}`, { partitioned });
      // Half leave cleanly (release), half crash: their release never arrives, the survivors release it.
      at(scheduler.now() + 5_000, () => {
        cut = true;
        b.leave();
      });
      at(scheduler.now() + 14_999, () => {
        most = Math.max(most, members().length);
        at(scheduler.now() + 1, () => cycle(i + 1));
      });
    };
    at(1_000, () => cycle(0));
    at(1_000 + 500 * 15_000 + 400_000, () => subscription.unsubscribe());
    scheduler.flush();
    // 5 min (and a lease duration for a crashed one) of departures, one every 15 s, and a: under 30 (500 without deletion).
    expect(most).toBeLessThan(30);
    expect(server.names().filter((n) => n.startsWith('g-member-b'))).toEqual([]);
    expect(memberErrors().filter((e) => e.operation === 'delete')).toEqual([]);
  });
});
