/**
 * A member Lease counts for a bounded time whatever it says (review audit27): one planted with leaseDurationSeconds
 * 2,000,000,000 kept a phantom member, and its shards unheld, for ever (an hour after it was deleted, too). Now a
 * member counts for at most MEMBER_LEASE_FACTOR × our lease duration after its last change (a longer one reported
 * once, ValidationFailed), and one no longer listed (deleted by hand) for at most our lease duration. Default timing,
 * the fake Lease server, virtual time.
 */
import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { LeaseError } from '../../src/leaderelection/errors.ts';
import { sharding, type ShardStatus } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

function world(ghostLeaseSeconds: number) {
  const scheduler = new TestScheduler(() => true);
  scheduler.maxFrames = 10_000_000;
  const server = new FakeLeaseServer(scheduler);
  const evil = server.clients({ client: 'evil' }).lease('g-member-ghost', { 'rx-informer.io/sharding': 'g' });
  evil.create({ holderIdentity: 'ghost', leaseDurationSeconds: ghostLeaseSeconds, leaseTransitions: 0 }).subscribe();
  const a = sharding(server.clients({ client: 'a' }), { name: 'g', shards: 8, identity: 'a', scheduler });
  const b = sharding(server.clients({ client: 'b' }), { name: 'g', shards: 8, identity: 'b', scheduler });
  const sub = new Subscription();
  const status: { a?: ShardStatus; b?: ShardStatus } = {};
  const errors: LeaseError[] = [];
  sub.add(a.status$.subscribe((s) => (status.a = s)));
  sub.add(b.status$.subscribe((s) => (status.b = s)));
  sub.add(a.errors$.subscribe((e) => errors.push(e)));
  const held: Record<number, number> = {};
  /** How many shards a and b hold together at `ms`. */
  const heldAt = (ms: number) => scheduler.schedule(() => (held[ms] = status.a!.held.size + status.b!.held.size), ms);
  const deleteAt = (ms: number) => scheduler.schedule(() => evil.delete!(server.get('g-member-ghost')!.resourceVersion).subscribe(), ms);
  const end = (ms: number) => scheduler.schedule(() => sub.unsubscribe(), ms);
  return { scheduler, status, errors, held, heldAt, deleteAt, end };
}

describe('member Leases counted for a bounded time', () => {
  it('a leaseDurationSeconds of 2,000,000,000 counts for 4 × our lease duration (60 s), reported once', () => {
    const { scheduler, status, errors, held, heldAt, end } = world(2_000_000_000);
    heldAt(30_000);
    heldAt(90_000);
    end(600_000);
    scheduler.flush();
    expect(held[30_000]).toBeLessThan(8); // the ghost counts at first: its shards are nobody's
    expect(held[90_000]).toBe(8);
    expect(status.a!.members).toEqual(['a', 'b']);
    const said = errors.filter((e) => e.reason === 'ValidationFailed');
    expect(said.map((e) => e.lease)).toEqual(['g-member-ghost']);
    expect(said[0]!.message).toMatch(/leaseDurationSeconds 2000000000 \(more than 4 × this replica's 15 s\)/);
  });

  it('a member Lease deleted by hand stops counting within our own lease duration (15 s), not its own (50 s)', () => {
    const { scheduler, errors, held, heldAt, deleteAt, end } = world(50);
    deleteAt(1_000);
    heldAt(17_000);
    end(60_000);
    scheduler.flush();
    expect(held[17_000]).toBe(8);
    expect(errors.filter((e) => e.reason === 'ValidationFailed')).toEqual([]);
  });
});
