/**
 * sharding(): the last subscriber leaving inside a status emission stops the step's remaining effects (gaps102 mutant
 * S28, closed by gaps108). A handover's drain arms a recheck at its bound (leaseDurationMs, 15 s by default) in the
 * same step as the status: carried out after the run's teardown, that timer would outlive it and keep a process alive
 * for up to 15 s after, say, `firstValueFrom(status$.pipe(filter(…)))`. Default timing, in virtual time (frames are
 * ms): `flush()` ends when nothing is scheduled, so the clock tells what was left armed.
 */
import { Subscription, takeWhile, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { SHARDS_LABEL } from '../../src/leaderelection/record.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

describe('sharding(): leaving inside the status that starts a handover', () => {
  it('no recheck of the drain bound is armed after the teardown: nothing is left scheduled once the releases are done', () => {
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 60_000;
    const server = new FakeLeaseServer(scheduler);
    const a = sharding(server.clients({ client: 'a' }), { name: 'g', shards: 2, identity: 'a', scheduler });
    const statuses: string[] = [];
    const cancelled: string[] = [];
    let leftAt = -1;
    a.status$.pipe(takeWhile((s) => s.members.length < 2)).subscribe({
      next: (s) => statuses.push(`${scheduler.now()} ${[...s.held].join(',')} ${s.members.join(',')}`),
      complete: () => (leftAt = scheduler.now()),
    });
    const work = new Subscription();
    scheduler.schedule(() => {
      // A key of shard 1 (b's by hashing, as b joins), in flight for 60 s; then b's member Lease appears (written by
      // hand: no replica b keeps timers of its own).
      const key = ['k0', 'k1', 'k2', 'k3'].find((k) => a.shardOf(k) === 1)!;
      work.add(a.gate(key, () => timer(60_000, scheduler)).subscribe({ complete: () => cancelled.push(`${scheduler.now()} ${key}`) }));
      const time = new Date(scheduler.now()).toISOString();
      const labels = { 'rx-informer.io/sharding': 'g', [SHARDS_LABEL]: '2' };
      server
        .clients({ client: 'b' })
        .lease('g-member-b', labels)
        .create({ holderIdentity: 'b', leaseDurationSeconds: 15, acquireTime: time, renewTime: time, leaseTransitions: 0 })
        .subscribe();
    }, 5_000);
    scheduler.flush();
    expect(statuses).toEqual(['0  a', '0  a', '0 0 a', '0 0,1 a']);
    expect(leftAt).toBe(6_000); // a's listing of 6 000 sees b: the status that hands shard 1 over ends the run
    expect(cancelled).toEqual(['6000 k1']); // the run's end cancels the work in flight
    expect([server.get('g-shard-0')?.record.holderIdentity, server.get('g-shard-1')?.record.holderIdentity]).toEqual(['', '']);
    expect(scheduler.now()).toBe(6_000); // a recheck left armed would have run at 21 000
  });
});
