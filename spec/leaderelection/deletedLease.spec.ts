/**
 * A Lease deleted by hand (`kubectl delete lease`) while it is held: client-go's tryAcquireOrRenew falls back to a read
 * after *any* failed fast-path renewal and creates the Lease when the read finds none, so the leader keeps leading.
 * Before (review audit27) only a 409 was read after: the leader's renewals failed (404) until its renew deadline and
 * it lost the lead ~10 s later, then took it back. Default timing, the fake Lease server, virtual time.
 */
import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { sharding, type ShardStatus } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

function world() {
  const scheduler = new TestScheduler(() => true);
  scheduler.maxFrames = 1_000_000;
  const server = new FakeLeaseServer(scheduler);
  const kubectl = server.clients({ client: 'kubectl' });
  /** `kubectl delete lease <name>` at `ms`. */
  const deleteAt = (ms: number, name: string) =>
    scheduler.schedule(() => kubectl.lease(name).delete!(server.get(name)!.resourceVersion).subscribe(), ms);
  return { scheduler, server, deleteAt };
}

describe('a Lease deleted by hand', () => {
  it('its leader keeps leading: the renewal after the deletion fails (404), the read finds none, the Lease is created again', () => {
    const { scheduler, server, deleteAt } = world();
    const election = leaderElection(server.clients({ client: 'a' }).lease('ctrl'), { identity: 'a', scheduler });
    const flips: string[] = [];
    const errors: string[] = [];
    const sub = new Subscription();
    sub.add(election.leader$.subscribe((l) => flips.push(`${scheduler.now()}:${l}`)));
    sub.add(election.errors$.subscribe((e) => errors.push(`${scheduler.now()}:${e.reason}:${e.operation}`)));
    deleteAt(30_001, 'ctrl');
    scheduler.schedule(() => sub.unsubscribe(), 60_000);
    scheduler.flush();
    expect(flips).toEqual(['0:false', '0:true']);
    // The one failed renewal (reported), then the read and the create at the same retry.
    expect(errors).toEqual(['32000:NotFound:update']);
    const created = server.writes.filter((w) => w.lease === 'ctrl' && w.at === 32_000);
    expect(created.map((w) => w.record.holderIdentity)).toEqual(['a']);
  });

  it("a member's own member Lease is created again at its next retry, and the group keeps every shard held", () => {
    const { scheduler, server, deleteAt } = world();
    const a = sharding(server.clients({ client: 'a' }), { name: 'g', shards: 4, identity: 'a', scheduler });
    const b = sharding(server.clients({ client: 'b' }), { name: 'g', shards: 4, identity: 'b', scheduler });
    const sub = new Subscription();
    let sa: ShardStatus | undefined;
    let sb: ShardStatus | undefined;
    const heldA: number[] = [];
    sub.add(a.status$.subscribe((s) => (sa = s)));
    sub.add(b.status$.subscribe((s) => (sb = s)));
    deleteAt(30_001, 'g-member-a');
    scheduler.schedule(() => heldA.push(sa!.held.size), 29_000);
    scheduler.schedule(() => heldA.push(sa!.held.size), 32_001);
    scheduler.schedule(() => {
      heldA.push(sa!.held.size);
      sub.unsubscribe();
    }, 120_000);
    scheduler.flush();
    const recreated = server.writes.filter((w) => w.lease === 'g-member-a' && w.at > 30_001);
    expect(recreated[0]?.at).toBe(32_000);
    expect(sa!.members).toEqual(['a', 'b']);
    expect(sb!.members).toEqual(['a', 'b']);
    expect(heldA[0]).toBeGreaterThan(0);
    expect(new Set(heldA).size).toBe(1); // a kept its shards throughout
    expect(sa!.held.size + sb!.held.size).toBe(4);
  });
});

describe('a server that fails every Lease write and answers reads', () => {
  it('is asked at most renew, read, write once an attempt (client-go: one slow path per tryAcquireOrRenew), not in a loop', () => {
    const { scheduler, server } = world();
    let writesFail = false;
    let sub = new Subscription();
    const asked: string[] = [];
    const client = server.clients({
      client: 'a',
      fault: (request) => {
        if (request.lease === 'ctrl') asked.push(`${scheduler.now()}:${request.operation}`);
        // A loop in one frame (write, read, write…) would never end the flush: cut it, the assertions below say so.
        if (asked.length > 100) sub.unsubscribe();
        return writesFail && request.operation !== 'get' && request.operation !== 'list' ? 'status500' : 'ok';
      },
    });
    const election = leaderElection(client.lease('ctrl'), { identity: 'a', scheduler });
    sub = election.leader$.subscribe();
    sub.add(election.errors$.subscribe());
    scheduler.schedule(() => ((writesFail = true), (asked.length = 0)), 10_001);
    scheduler.schedule(() => sub.unsubscribe(), 20_000);
    scheduler.flush();
    // Every 2 s retry period from 12 000 to 18 000: the renewal, its read, one write after it; never more in one frame.
    const perFrame = new Map<string, number>();
    for (const a of asked) perFrame.set(a.split(':')[0]!, (perFrame.get(a.split(':')[0]!) ?? 0) + 1);
    expect(Math.max(...perFrame.values())).toBeLessThanOrEqual(3);
    expect(asked.filter((a) => a.startsWith('12000:'))).toEqual(['12000:update', '12000:get', '12000:update']);
  });
});
