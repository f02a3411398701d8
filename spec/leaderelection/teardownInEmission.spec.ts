/**
 * The last subscriber leaving inside an emission (`take(1)`, `first()`, `takeWhile`) runs the campaign's teardown while
 * `report()` / `finish()` are still on the stack: nothing may be armed after it (review audit37: a renew-deadline timer
 * of ~10 s and a retry timer of ~2 s stayed armed, keeping a process alive ~10 s after `firstValueFrom(leader$…)`).
 * Default timing, in virtual time: `flush()` ends when nothing is scheduled, so the clock tells what was left armed.
 */
import { filter, first, take, takeWhile } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

function setup() {
  const scheduler = new TestScheduler(() => true);
  scheduler.maxFrames = 200_000;
  const server = new FakeLeaseServer(scheduler);
  return { scheduler, server };
}

/** Candidate `a` of the Lease `ctrl`, 10 ms a request, default timing. */
function electionOf({ scheduler, server }: ReturnType<typeof setup>) {
  return leaderElection(server.clients({ client: 'a', latencyMs: () => 10 }).lease('ctrl'), {
    identity: 'a',
    scheduler,
    random: () => 0,
    reportUnobservedErrors: false,
  });
}

describe('leaderElection: the last subscriber leaving inside an emission', () => {
  it('take(1) on leader$: released, and no timer left armed after the release', () => {
    const world = setup();
    const { scheduler, server } = world;
    const election = electionOf(world);
    let leftAt = -1;
    election.leader$.pipe(filter(Boolean), take(1)).subscribe({ complete: () => (leftAt = scheduler.now()) });
    scheduler.flush();
    expect(leftAt).toBeGreaterThan(0);
    expect(server.get('ctrl')?.record.holderIdentity).toBe(''); // the release outlives the subscription, on purpose
    // The release is answered within a few 10 ms round trips; a renew deadline (10 s) or a retry (2 s) left armed ends
    // far later.
    expect(scheduler.now()).toBeLessThan(leftAt + 100);
  });

  it('takeWhile(leader) on leader$ (stop on losing): no timer left armed once the campaign ends', () => {
    const world = setup();
    const { scheduler, server } = world;
    const election = electionOf(world);
    let leftAt = -1;
    let led = false;
    election.leader$
      .pipe(takeWhile((leader) => !led || leader))
      .subscribe({ next: (leader) => (led ||= leader), complete: () => (leftAt = scheduler.now()) });
    // Another candidate takes the Lease over by hand: the holder loses it at its next renewal.
    scheduler.schedule(() => {
      const held = server.get('ctrl')!;
      const record = { ...held.record, holderIdentity: 'b' };
      server.clients({ client: 'b' }).lease('ctrl').update(held.resourceVersion, record).subscribe();
    }, 5_000);
    scheduler.flush();
    expect(led).toBe(true);
    expect(leftAt).toBeGreaterThan(5_000);
    expect(scheduler.now()).toBeLessThan(leftAt + 100);
  });

  it('first() on status$: nothing armed at all once the first status is out', () => {
    const world = setup();
    const { scheduler, server } = world;
    const election = electionOf(world);
    election.status$.pipe(first()).subscribe();
    scheduler.flush();
    expect(scheduler.now()).toBe(0); // the first status is emitted before any request: no attempt, no timer
    expect(server.get('ctrl')).toBeUndefined();
  });
});

describe('sharding: the last subscriber leaving inside an emission', () => {
  it('take(1) on the first status holding every shard: nothing but the releases after it', () => {
    const { scheduler, server } = setup();
    const shards = sharding(server.clients({ client: 'a', latencyMs: () => 10 }), {
      name: 'g',
      shards: 4,
      identity: 'a',
      scheduler,
      reportUnobservedErrors: false,
    });
    let leftAt = -1;
    shards.status$
      .pipe(
        filter((s) => s.held.size === 4),
        take(1),
      )
      .subscribe({ complete: () => (leftAt = scheduler.now()) });
    scheduler.flush();
    expect(leftAt).toBeGreaterThan(0);
    // Each release is one request of 10 ms (a Conflict would add a read and a write): well under a retry period.
    expect(scheduler.now()).toBeLessThan(leftAt + 100);
  });
});
