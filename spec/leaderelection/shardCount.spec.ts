/**
 * Replicas of one group that count different `shards` (a rolling update that changes `shards`; two controllers naming
 * one group): key → shard is FNV mod `shards` while the shard Leases are shared, so before (review audit27) a key had
 * two holders at once, silently. Every Lease of ours carries the count (`rx-informer.io/shards`); a replica that lists
 * a live Lease of its group with another count holds no shard and says so once (`ValidationFailed`), until the other
 * count's Leases are released or lapsed. Default timing, the fake Lease server, virtual time.
 */
import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { LeaseError } from '../../src/leaderelection/errors.ts';
import { sharding, type Sharding, type ShardStatus } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

const KEYS = Array.from({ length: 400 }, (_, i) => `ns/obj-${i}`);

function world() {
  const scheduler = new TestScheduler(() => true);
  scheduler.maxFrames = 10_000_000;
  const server = new FakeLeaseServer(scheduler);
  const live = new Map<string, { shards: Sharding; status?: ShardStatus; errors: LeaseError[]; sub: Subscription }>();
  const doubles: string[] = [];
  /** Every key's owners among the running replicas, after any replica's status changed. */
  const check = () => {
    for (const key of KEYS) {
      const owners = [...live].filter(([, r]) => r.shards.owns(key)).map(([id]) => id);
      if (owners.length > 1) doubles.push(`${scheduler.now()} ${key} ${owners.join(',')}`);
    }
  };
  const join = (identity: string, shards: number, name = 'g') => {
    const replica = sharding(server.clients({ client: identity, latencyMs: () => 5 }), { name, shards, identity, scheduler });
    const entry = { shards: replica, errors: [] as LeaseError[], sub: new Subscription(), status: undefined as ShardStatus | undefined };
    live.set(identity, entry);
    entry.sub.add(replica.errors$.subscribe((e) => entry.errors.push(e)));
    entry.sub.add(
      replica.status$.subscribe((s) => {
        entry.status = s;
        check();
      }),
    );
  };
  const leave = (identity: string) => {
    live.get(identity)!.sub.unsubscribe();
    live.delete(identity);
    check();
  };
  const at = (ms: number, work: () => void) => scheduler.schedule(work, ms - scheduler.now());
  return { scheduler, live, doubles, join, leave, at };
}

const mismatches = (errors: readonly LeaseError[]) => errors.filter((e) => e.reason === 'ValidationFailed');

describe('sharding() replicas counting different shards', () => {
  it('a rolling update 4 → 8: no key has two holders at any time, each side says so once, the group settles once the old are gone', () => {
    const { scheduler, live, doubles, join, leave, at } = world();
    const held: Record<string, number[]> = {};
    at(0, () => {
      join('old-1', 4);
      join('old-2', 4);
    });
    at(30_000, () => join('new-1', 8));
    at(45_000, () => (held['45000'] = [...live.values()].map((r) => r.status!.held.size)));
    at(60_000, () => {
      leave('old-1');
      join('new-2', 8);
    });
    const errors: Record<string, LeaseError[]> = {};
    at(90_000, () => {
      errors['old-2'] = live.get('old-2')!.errors;
      leave('old-2');
    });
    at(150_000, () => {
      const total = [...live.values()].reduce((n, r) => n + r.status!.held.size, 0);
      held['150000'] = [total];
      errors['new-1'] = live.get('new-1')!.errors;
      for (const id of [...live.keys()]) leave(id);
    });
    scheduler.flush();
    expect(doubles).toEqual([]);
    // While both counts are live nobody holds a shard (the old ones let theirs go once they listed the new member).
    expect(held['45000']).toEqual([0, 0, 0]);
    expect(held['150000']).toEqual([8]); // settled: the new count holds every shard
    for (const id of ['old-2', 'new-1']) {
      const said = mismatches(errors[id]!);
      expect(said).toHaveLength(1);
      expect(said[0]!.message).toMatch(
        /counts (8|4) shards in this group, this replica (4|8).*Recreate rollout, or give the new count another group name/,
      );
    }
  });

  it('two controllers naming one group with different counts: both hold nothing and say so, each once', () => {
    const { scheduler, live, join, at } = world();
    const seen: number[] = [];
    const said: number[] = [];
    at(0, () => {
      join('pods-1', 8, 'workers');
      join('cms-1', 4, 'workers');
    });
    at(120_000, () => {
      for (const r of live.values()) {
        seen.push(r.status!.held.size);
        said.push(mismatches(r.errors).length);
        r.sub.unsubscribe();
      }
    });
    scheduler.flush();
    expect(seen).toEqual([0, 0]);
    expect(said).toEqual([1, 1]);
  });
});
