/**
 * sharding().gate: a handed-over shard waits for *all* its in-flight work (gaps102 mutant S16, closed by gaps108).
 * Default timing (the drain bound is leaseDurationMs, 15 s, far beyond the work here), in virtual time (frames are ms).
 */
import { Subscription, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

describe('sharding().gate: two works in flight on a shard handed over', () => {
  it('the shard is released once the second one ended, not when the first did', () => {
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 40_000;
    const server = new FakeLeaseServer(scheduler);
    const subscription = new Subscription();
    const a = sharding(server.clients({ client: 'a' }), { name: 'g', shards: 2, identity: 'a', scheduler });
    const b = sharding(server.clients({ client: 'b' }), { name: 'g', shards: 2, identity: 'b', scheduler });
    subscription.add(a.status$.subscribe());
    const ended: string[] = [];
    const held: string[] = [];
    subscription.add(a.held$.subscribe((h) => held.push(`${scheduler.now()} a ${[...h].join(',')}`)));
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];
    scheduler.schedule(() => {
      // Two keys of each shard: one ends at 8 000, the other at 12 000.
      for (const shard of [0, 1]) {
        const [first, second] = keys.filter((k) => a.shardOf(k) === shard);
        for (const [key, ms] of [
          [first!, 3_000],
          [second!, 7_000],
        ] as const)
          subscription.add(a.gate(key, () => timer(ms, scheduler)).subscribe({ complete: () => ended.push(`${scheduler.now()} ${key}`) }));
      }
      subscription.add(b.status$.subscribe());
    }, 5_000);
    scheduler.schedule(() => subscription.unsubscribe(), 30_000);
    scheduler.flush();
    // b's member Lease is seen at 6 000: shard 1 goes to b (by hashing), so a takes no new key of it from then on.
    expect(held).toEqual(['0 a ', '0 a 0', '0 a 0,1', '6000 a 0']);
    expect(ended).toEqual(['8000 k0', '8000 k1', '12000 k2', '12000 k3']);
    const shard1 = server.writes.filter((w) => w.lease === 'g-shard-1' && w.at > 6_000 && w.at < 14_000);
    // Released once k3 (shard 1's second work) ended, not at 8 000 with k1; b takes it at its next attempt.
    expect(shard1.map((w) => `${w.at} ${w.client} ${w.record.holderIdentity}`)).toEqual(['8000 a a', '10000 a a', '12000 a ', '13000 b b']);
  });
});
