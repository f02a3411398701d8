/**
 * leaderElection(): one release in flight at a time (gaps102 mutant L22, closed by gaps108). A release that met a 409
 * reads the Lease and releases what is still ours; while that read is in flight, the end of the renewal that caused
 * the 409 hands the Lease back too. Without the guard both send a release: the second quotes a resourceVersion the
 * first one replaced, and gets a needless 409 (harmless to the Lease, which the precondition protects, but an error on
 * errors$ and one more request, in the SIGTERM path that `released$` waits for). Default timing, in virtual time
 * (frames are ms); the latencies are the server's, chosen to order the answers.
 */
import { BehaviorSubject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { FakeLeaseServer, type FakeLeaseRequest } from '../../src/testing/fakeLeases.ts';

describe('leaderElection(): a release retried after a 409 while the renewal that caused it ends', () => {
  it('sends one release at a time: the retry is left to the release already in flight', () => {
    const scheduler = new TestScheduler(() => true);
    scheduler.maxFrames = 20_000;
    const server = new FakeLeaseServer(scheduler);
    // From 4 000 (the second renewal): to the server, back — a renewal lands first and answers last; a release lands
    // after it (409) and answers at once; a read takes 50 ms each way.
    const ways: Record<string, [number, number]> = { update: [1, 100], release: [2, 1], get: [50, 50] };
    const calls = new WeakMap<FakeLeaseRequest, number>();
    const latencyMs = (request: FakeLeaseRequest) => {
      const n = calls.get(request) ?? 0;
      calls.set(request, n + 1);
      return scheduler.now() < 4_000 ? 0 : (ways[request.operation]?.[n % 2] ?? 0);
    };
    const sent: string[] = [];
    const fault = (request: FakeLeaseRequest) => {
      sent.push(`${scheduler.now()} ${request.operation}`);
      return 'ok' as const;
    };
    const want$ = new BehaviorSubject(true);
    const election = leaderElection(server.clients({ client: 'a', latencyMs, fault }).lease('ctrl'), {
      identity: 'a',
      scheduler,
      want$,
      reportUnobservedErrors: false,
    });
    const errors: string[] = [];
    const sub = election.errors$.subscribe((e) => errors.push(`${scheduler.now()} ${e.reason} ${e.operation}`));
    sub.add(election.leader$.subscribe());
    // Scheduled from 3 000: after the renewal timer of 4 000, so that renewal is in flight when we stop wanting.
    scheduler.schedule(() => scheduler.schedule(() => want$.next(false), 1_000), 3_000);
    scheduler.schedule(() => sub.unsubscribe(), 10_000);
    scheduler.flush();
    // 4 000: the renewal (lands at 4 001) and the release (lands at 4 002: 409, answered at 4 003, then a read); the
    // renewal's answer (4 101) hands the Lease back again while the read is on its way (answered at 4 103).
    expect(sent.filter((s) => s.endsWith('release'))).toEqual(['4000 release', '4101 release']);
    expect(errors).toEqual(['4003 Conflict release']);
    expect(server.writes.map((w) => `${w.at} ${w.record.holderIdentity}`)).toEqual(['0 a', '2000 a', '4001 a', '4103 ']);
  });
});
