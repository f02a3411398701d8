/**
 * sharding() against a hostile member Lease (review audit8, shardHash): an identity past MAX_IDENTITY_LENGTH is not a
 * member, and is reported once on errors$ (`ValidationFailed`), however many listings show it. Default timing, in
 * virtual time. The bounds themselves are rows of shardingMachine.spec.ts.
 */
import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { LeaseError } from '../../src/leaderelection/errors.ts';
import { sharding, type ShardStatus } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

describe('sharding() and a hostile member Lease', () => {
  it('a 1 MiB holderIdentity is no member, reported once (ValidationFailed) over 30 s of listings', () => {
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 100_000;
    const server = new FakeLeaseServer(scheduler);
    const huge = 'x'.repeat(1024 * 1024);
    server
      .clients({ client: 'evil' })
      .lease('g-member-evil', { 'rx-informer.io/sharding': 'g' })
      .create({ holderIdentity: huge, leaseDurationSeconds: 15, leaseTransitions: 0 })
      .subscribe();
    const shards = sharding(server.clients({ client: 'a' }), { name: 'g', shards: 16, identity: 'a', scheduler });
    const errors: LeaseError[] = [];
    let status: ShardStatus | undefined;
    const subscription = new Subscription();
    subscription.add(shards.errors$.subscribe((e) => errors.push(e)));
    subscription.add(shards.status$.subscribe((s) => (status = s)));
    scheduler.schedule(() => subscription.unsubscribe(), 30_000);
    scheduler.flush();
    expect(status?.members).toEqual(['a']);
    expect(status?.held.size).toBe(16);
    expect(errors.map((e) => [e.reason, e.operation, e.lease])).toEqual([['ValidationFailed', 'list', 'g-member-evil']]);
    expect(errors[0]!.message).toContain('holderIdentity of 1048576 characters');
  });

  it('refuses an identity the other members would ignore (longer than 253 characters) or an empty one', () => {
    const clients = new FakeLeaseServer().clients({ client: 'a' });
    expect(() => sharding(clients, { name: 'g', shards: 4, identity: 'x'.repeat(254) })).toThrow(/at most 253 characters/);
    expect(() => sharding(clients, { name: 'g', shards: 4, identity: '' })).toThrow(TypeError);
    // Its member Lease's whole name is at most 253 (audit27): `g-member-` and 244 characters.
    expect(() => sharding(clients, { name: 'g', shards: 4, identity: 'x'.repeat(245) })).toThrow(/is not a Kubernetes object name/);
    expect(() => sharding(clients, { name: 'g', shards: 4, identity: 'x'.repeat(244) })).not.toThrow();
  });

  it("refuses a timing that breaks client-go's rules when it is made, not when it is first subscribed", () => {
    const clients = new FakeLeaseServer().clients({ client: 'a' });
    const make = (timing: { leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number }) => () =>
      sharding(clients, { name: 'g', shards: 4, identity: 'a', ...timing });
    expect(make({ leaseDurationMs: 10_000 })).toThrow(/^sharding: leaseDurationMs must be greater than renewDeadlineMs$/);
    expect(make({ retryPeriodMs: 9_000 })).toThrow(/renewDeadlineMs must be greater than retryPeriodMs × 1.2/);
    expect(make({ leaseDurationMs: 0, renewDeadlineMs: -1 })).toThrow(/leaseDurationMs must be greater than zero/);
    expect(make({})).not.toThrow();
  });
});
