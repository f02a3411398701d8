/**
 * sharding() cases found by mutation testing (gaps102): each fails with one hand-made mutation of sharding.ts that
 * every other spec let through.
 */
import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer, type FakeLeaseRequest } from '../../src/testing/fakeLeases.ts';

const clients = () => new FakeLeaseServer().clients({ client: 'a' });

describe('sharding() options: the Lease names', () => {
  it("the last shard's Lease name is checked: with 101 shards, `<name>-shard-100` is one character too long", () => {
    // 244 + '-member-b' (9) = 253: the member Lease is nameable; 244 + '-shard-99' (9) = 253 too, '-shard-100' is 254.
    const name = 'g'.repeat(244);
    expect(() => sharding(clients(), { name, shards: 100, identity: 'b' })).not.toThrow();
    expect(() => sharding(clients(), { name, shards: 101, identity: 'b' })).toThrow(
      /the Lease name "g+-shard-100" .*is not a Kubernetes object name/,
    );
  });
});

describe('sharding(): stale member Leases under a long lease duration', () => {
  it('with a 60 s lease a released member Lease is deleted after 10 lease durations (10 min), not after 5 min', () => {
    // Frames are ms of virtual time; leaseDurationMs 60 000 (renew deadline 40 000), retry period the default 2 000.
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 700_000;
    const server = new FakeLeaseServer(scheduler);
    const subscription = new Subscription();
    const deletes: string[] = [];
    const replica = (identity: string) => {
      const fault = (request: FakeLeaseRequest) => {
        if (request.operation === 'delete') deletes.push(`${scheduler.now()} ${request.client} ${request.lease}`);
        return 'ok' as const;
      };
      const timing = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000 };
      const shards = sharding(server.clients({ client: identity, fault }), { name: 'g', shards: 2, identity, scheduler, ...timing });
      const own = shards.status$.subscribe();
      subscription.add(own);
      return own;
    };
    const at = (ms: number, work: () => void) => scheduler.schedule(work, ms - scheduler.now());
    const seen: Record<number, string | undefined> = {};
    const look = (ms: number) => at(ms, () => (seen[ms] = server.get('g-member-b')?.record.holderIdentity));
    replica('a');
    at(10_000, () => {
      const b = replica('b');
      at(20_000, () => b.unsubscribe());
    });
    // b's release is written at 20 000, a's listing then first shows it: deleted by the listing at 620 000.
    look(320_001);
    look(619_999);
    look(620_001);
    at(630_000, () => subscription.unsubscribe());
    scheduler.flush();
    expect(seen).toEqual({ 320001: '', 619999: '', 620001: undefined });
    expect(deletes).toEqual(['620000 a g-member-b']);
  });
});

describe('sharding().gate: the signal given to work', () => {
  it('is not aborted when the work ends by itself (only a lost or drained-out shard, or an unsubscribe, aborts it)', () => {
    // Frames are ms of virtual time, the timing the default one: one replica holds its one shard from its first round.
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 10_000;
    const server = new FakeLeaseServer(scheduler);
    const shards = sharding(server.clients({ client: 'a' }), { name: 'g', shards: 1, identity: 'a', scheduler });
    const signals: AbortSignal[] = [];
    const results: number[] = [];
    const sub = shards.held$.subscribe();
    scheduler.schedule(() => {
      sub.add(
        shards
          .gate('k', (signal) => {
            signals.push(signal);
            return [1];
          })
          .subscribe((n) => results.push(n)),
      );
    }, 3_000);
    scheduler.schedule(() => sub.unsubscribe(), 5_000);
    scheduler.flush();
    expect(results).toEqual([1]);
    expect(signals.map((s) => s.aborted)).toEqual([false]);
  });
});

describe('sharding(): owns and gate after the run', () => {
  it('once the last subscriber left, no key is owned and gate() runs nothing (the Leases are released)', () => {
    // Frames are ms of virtual time, the timing the default one: one replica holds its one shard from its first round.
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 10_000;
    const server = new FakeLeaseServer(scheduler);
    const shards = sharding(server.clients({ client: 'a' }), { name: 'g', shards: 1, identity: 'a', scheduler });
    const owned: boolean[] = [];
    let ran = 0;
    const sub = shards.held$.subscribe();
    scheduler.schedule(() => owned.push(shards.owns('k')), 3_000);
    scheduler.schedule(() => sub.unsubscribe(), 5_000);
    scheduler.schedule(() => {
      owned.push(shards.owns('k'));
      shards.gate('k', () => [ran++]).subscribe();
    }, 6_000);
    scheduler.flush();
    expect(owned).toEqual([true, false]);
    expect(ran).toBe(0);
  });
});
