import { Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { LeaseError } from '../../src/leaderelection/errors.ts';
import { FakeLeaseServer, type FakeLeaseFault } from '../../src/testing/fakeLeases.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';

function setup(fault: (op: string) => FakeLeaseFault = () => 'ok') {
  const scheduler = new TestScheduler(() => true);
  scheduler.maxFrames = 200_000;
  const server = new FakeLeaseServer(scheduler);
  let partitioned = false;
  const clients = (client: string) =>
    server.clients({
      client,
      latencyMs: () => 10,
      fault: (r) => fault(`${r.client}:${r.operation}`),
      partitioned: () => client === 'a' && partitioned,
    });
  const log: string[] = [];
  const elect = (id: string) => leaderElection(clients(id).lease('ctrl'), { identity: id, scheduler, random: () => 0 });
  const watch = (id: string) => {
    const election = elect(id);
    const sub = new Subscription();
    sub.add(election.leader$.subscribe((l) => log.push(`${scheduler.now()} ${id} ${l}`)));
    return { election, sub };
  };
  return { scheduler, server, log, watch, elect, partition: () => (partitioned = true) };
}

describe('leaderElection', () => {
  it('takes a missing Lease, renews every retry period, and is shared (one campaign for many subscribers)', () => {
    const { scheduler, server, log, watch } = setup();
    const a = watch('a');
    const again = a.election.leader$.subscribe();
    scheduler.schedule(() => (a.sub.unsubscribe(), again.unsubscribe()), 10_000);
    scheduler.flush();
    // GET (404) and POST, 10 ms each way.
    expect(log).toEqual(['0 a false', '40 a true']);
    // Created at 30, renewed every retry period after the previous answer, released on the last unsubscribe.
    expect(server.writes.map((w) => `${w.at} ${w.record.holderIdentity || '∅'}`)).toEqual([
      '30 a',
      '2050 a',
      '4070 a',
      '6090 a',
      '8110 a',
      '10010 ∅',
    ]);
    expect(server.get('ctrl')?.record).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });

  it('a second candidate waits a lease duration after the leader stops renewing, then takes over and counts the transition', () => {
    const { scheduler, server, log, watch, partition } = setup();
    watch('a');
    scheduler.schedule(() => watch('b'), 1_000);
    scheduler.schedule(partition, 5_000);
    scheduler.maxFrames = 30_000;
    scheduler.flush();
    // a's last renewal started at 4 060 → it steps down at 14 060 by its own clock.
    // b's poll answered at 5 040 showed that renewal → b waits until 20 040, reads, writes: leader at 20 100.
    expect(log).toEqual(['0 a false', '40 a true', '1000 b false', '14060 a false', '20100 b true']);
    expect(server.get('ctrl')?.record).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('reports every conflict, 5xx, dropped connection and timeout on errors$ and keeps going', () => {
    const faults: FakeLeaseFault[] = ['status500', 'dropBefore', 'hang', 'ok'];
    let n = 0;
    const { scheduler, log, elect } = setup((op) => (op.startsWith('a:') ? (faults[n++] ?? 'ok') : 'ok'));
    const a = elect('a');
    const errors: string[] = [];
    const subs = [
      a.errors$.subscribe((e: LeaseError) => errors.push(`${e.operation} ${e.reason}`)),
      a.leader$.subscribe((l) => log.push(`${scheduler.now()} ${l}`)),
    ];
    scheduler.schedule(() => subs.forEach((s) => s.unsubscribe()), 30_000);
    scheduler.flush();
    expect(errors).toEqual(['get ServerError', 'get NetworkError', 'get Timeout']);
    expect(log).toEqual(['0 false', expect.stringMatching(/^\d+ true$/)]);
  });

  it('a conflict on the fast-path renewal falls back to a read (client-go slow path) and is reported', () => {
    const { scheduler, server, elect } = setup();
    const a = elect('a');
    const errors: string[] = [];
    const subs = [a.errors$.subscribe((e) => errors.push(`${e.operation} ${e.reason} ${e.status}`)), a.leader$.subscribe()];
    // Someone bumps the Lease behind a's back (same record, new resourceVersion: `kubectl annotate` does).
    scheduler.schedule(() => {
      const now = server.get('ctrl')!;
      server.clients({ client: 'meddler' }).lease('ctrl').update(now.resourceVersion, now.record).subscribe();
    }, 1_000);
    scheduler.schedule(() => subs.forEach((s) => s.unsubscribe()), 5_000);
    scheduler.flush();
    expect(errors).toEqual(['update Conflict 409']);
    expect(server.writes.filter((w) => w.client === 'a').length).toBeGreaterThanOrEqual(3);
  });

  it('two candidates with one identity (a misuse): each says so once on errors$, at its first 409 that reads a renewal it never sent', () => {
    const { scheduler, elect } = setup();
    const errors: string[] = [];
    const subs: Subscription[] = [];
    const candidate = (name: string) => {
      const election = elect('a');
      subs.push(election.leader$.subscribe());
      subs.push(election.errors$.subscribe((e) => errors.push(`${scheduler.now()} ${name} ${e.operation} ${e.reason} ${e.message}`)));
    };
    candidate('first');
    scheduler.schedule(() => candidate('second'), 1_003);
    scheduler.schedule(() => subs.forEach((s) => s.unsubscribe()), 30_000);
    scheduler.flush();
    const misuse = errors.filter((e) => e.includes('another candidate'));
    expect(misuse.map((e) => e.split(' ').slice(1, 4).join(' '))).toEqual(['first update Conflict', 'second update Conflict']);
    expect(misuse[0]).toContain(
      'update lease ctrl: another candidate uses the identity "a": the Lease holds a renewal under it that this candidate never sent',
    );
    // Their 409s go on (each renews over the other): reported as ever, the misuse once each.
    expect(errors.length).toBeGreaterThan(misuse.length + 2);
  });

  it('one candidate whose renewal was answered too late (lost) and then refused: no misuse (the renewal read is its own)', () => {
    let n = 0;
    let gets = 0;
    // The second renewal lands but its answer is lost, and the read after it fails too (500); the next renewal quotes
    // the old resourceVersion: 409.
    const { scheduler, elect } = setup((op) =>
      op === 'a:update' && ++n === 2 ? 'dropAfter' : op === 'a:get' && ++gets === 2 ? 'status500' : 'ok',
    );
    const a = elect('a');
    const errors: string[] = [];
    const subs = [a.errors$.subscribe((e) => errors.push(`${e.operation} ${e.reason}`)), a.leader$.subscribe()];
    scheduler.schedule(() => subs.forEach((s) => s.unsubscribe()), 10_000);
    scheduler.flush();
    expect(errors).toEqual(['update NetworkError', 'get ServerError', 'update Conflict']);
  });

  it('refuses a timing that breaks client-go rules', () => {
    const { server } = setup();
    expect(() =>
      leaderElection(server.clients({ client: 'a' }).lease('x'), { identity: 'a', leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }),
    ).toThrow(/leaseDurationMs must be greater/);
  });

  it('refuses an empty identity: a Lease held by "" reads as released, so two such candidates both lead', () => {
    const { server } = setup();
    expect(() => leaderElection(server.clients({ client: 'a' }).lease('x'), { identity: '' })).toThrow(TypeError);
    expect(() => leaderElection(server.clients({ client: 'a' }).lease('x'), {} as { identity: string })).toThrow(/identity/);
  });
});
