/**
 * Leader election's and sharding's faults while nothing subscribes to their `errors$` are reported as an informer's
 * are (src/5-informer/unobservedErrors.ts, the one home): `process.emitWarning`, type `RxInformerWarning`, the reason
 * as `code`, rate limited per reason (one per 5 minutes, counting what was left out); none while `errors$` has a
 * subscriber, none with `reportUnobservedErrors: false`; a `Conflict` (the protocol's own race) never, but for the
 * misuse of one identity by two candidates (left62). A Lease API
 * denied by RBAC (403 on every request) left every replica a follower without a word. Default timing, virtual time.
 */
import { throwError, type Observable } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { testScheduler } from '../../marbles/support/testScheduler.ts';
import {
  LeaseError,
  leaderElection,
  sharding,
  type LeaseClient,
  type LeaseClients,
  type LeaseOperation,
} from '../../src/leaderelection/index.ts';
import { warningsOf } from '../support/warnings.ts';
import { FakeLeaseServer } from '../../src/testing/fakeLeases.ts';

const MINUTE = 60_000;
const FORBIDDEN = 'leases.coordination.k8s.io is forbidden: User "system:serviceaccount:ops:ctl" cannot get resource "leases"';

/** Every request fails with `reason` (403 Forbidden by default): RBAC without the Lease verbs. */
function failing(name: string, reason: 'Forbidden' | 'Conflict' = 'Forbidden'): LeaseClient {
  const fail = (operation: LeaseOperation): Observable<never> =>
    throwError(
      () =>
        new LeaseError(
          reason,
          operation,
          name,
          reason === 'Forbidden' ? FORBIDDEN : 'the object has been modified',
          reason === 'Forbidden' ? 403 : 409,
        ),
    );
  return { name, get: () => fail('get'), create: () => fail('create'), update: () => fail('update') };
}

const failingClients = (reason?: 'Forbidden' | 'Conflict'): LeaseClients => ({
  lease: (name) => failing(name, reason),
  list: () => throwError(() => new LeaseError('Forbidden', 'list', 'apples-member-*', FORBIDDEN, 403)),
});

describe('leader election and sharding report the faults nobody observes on their errors$', () => {
  let warn: MockInstance<typeof process.emitWarning>;
  beforeEach(() => {
    warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());
  /** What was warned: [message, type, code]. */
  const warnings = () => warningsOf(warn);

  /** Runs `leader$` (and, with `observe`, `errors$`) for 6 minutes of virtual time; the reasons errors$ saw. */
  function runs(
    make: (scheduler: ReturnType<typeof testScheduler>) => { run$: Observable<unknown>; errors$: Observable<LeaseError> },
    observe = false,
  ): string[] {
    const scheduler = testScheduler();
    const seen: string[] = [];
    scheduler.run(() => {
      const { run$, errors$ } = make(scheduler);
      const errors = observe ? errors$.subscribe((e) => seen.push(e.reason)) : undefined;
      const running = run$.subscribe();
      scheduler.schedule(() => {
        running.unsubscribe();
        errors?.unsubscribe();
      }, 6 * MINUTE);
    });
    return seen;
  }

  const election =
    (options: { reportUnobservedErrors?: boolean; reason?: 'Forbidden' | 'Conflict' } = {}) =>
    (scheduler: ReturnType<typeof testScheduler>) => {
      const e = leaderElection(failing('ctrl', options.reason), {
        identity: 'a',
        scheduler,
        random: () => 0,
        ...(options.reportUnobservedErrors === undefined ? {} : { reportUnobservedErrors: options.reportUnobservedErrors }),
      });
      return { run$: e.leader$, errors$: e.errors$ };
    };

  it('a Lease API denied by RBAC, nobody on errors$: one warning at once; again within 5 minutes: none; after: one, counting what was left out', () => {
    runs(election());
    // A read every retryPeriod (2 s): 150 in the first 5 minutes, the 151st at 5 minutes reported with them.
    expect(warnings()).toEqual([
      [`leader election ctrl: Forbidden: get lease ctrl: ${FORBIDDEN}`, 'RxInformerWarning', 'Forbidden'],
      [
        `leader election ctrl: Forbidden: get lease ctrl: ${FORBIDDEN}; 149 more Forbidden since the last report`,
        'RxInformerWarning',
        'Forbidden',
      ],
    ]);
  });

  it('leader election: none while errors$ has a subscriber, none with reportUnobservedErrors: false, none for a Conflict', () => {
    expect(runs(election(), true).slice(0, 2)).toEqual(['Forbidden', 'Forbidden']);
    runs(election({ reportUnobservedErrors: false }));
    runs(election({ reason: 'Conflict' }));
    expect(warn).not.toHaveBeenCalled();
  });

  it('two candidates with one identity, nobody on their errors$: each warns of the misuse once (a Conflict, yet no race: left62)', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      const server = new FakeLeaseServer(scheduler);
      const candidate = () =>
        leaderElection(server.clients({ client: 'a', latencyMs: () => 10 }).lease('ctrl'), { identity: 'a', scheduler, random: () => 0 });
      const subs = [candidate().leader$.subscribe()];
      scheduler.schedule(() => subs.push(candidate().leader$.subscribe()), 1_003);
      scheduler.schedule(() => subs.forEach((s) => s.unsubscribe()), 6 * MINUTE);
    });
    // Their 409s go on all along (each renews over the other): those are the protocol's races, not warned of.
    const misuse = 'leader election ctrl: Conflict: update lease ctrl: another candidate uses the identity "a": ';
    expect(warnings()).toEqual([
      [expect.stringContaining(misuse), 'RxInformerWarning', 'Conflict'],
      [expect.stringContaining(misuse), 'RxInformerWarning', 'Conflict'],
    ]);
  });

  it('the misuse is not warned of while errors$ has a subscriber, nor with reportUnobservedErrors: false', () => {
    const seen: string[] = [];
    for (const observe of [true, false]) {
      const scheduler = testScheduler();
      scheduler.run(() => {
        const server = new FakeLeaseServer(scheduler);
        const candidate = () => {
          const e = leaderElection(server.clients({ client: 'a', latencyMs: () => 10 }).lease('ctrl'), {
            identity: 'a',
            scheduler,
            random: () => 0,
            ...(observe ? {} : { reportUnobservedErrors: false }),
          });
          return [e.leader$.subscribe(), ...(observe ? [e.errors$.subscribe((error) => seen.push(error.message))] : [])];
        };
        const subs = candidate();
        scheduler.schedule(() => subs.push(...candidate()), 1_003);
        scheduler.schedule(() => subs.forEach((s) => s.unsubscribe()), 6 * MINUTE);
      });
    }
    expect(seen.filter((m) => m.includes('another candidate uses the identity'))).toHaveLength(2);
    expect(warn).not.toHaveBeenCalled();
  });

  const shards =
    (options: { reportUnobservedErrors?: boolean } = {}) =>
    (scheduler: ReturnType<typeof testScheduler>) => {
      const s = sharding(failingClients(), { name: 'apples', shards: 2, identity: 'a', scheduler, random: () => 0, ...options });
      return { run$: s.held$, errors$: s.errors$ };
    };

  it('sharding, nobody on errors$: one warning per reason at once, as the sharding (its elections say nothing of their own)', () => {
    runs(shards());
    const first = warnings().filter(([message]) => !String(message).includes('more Forbidden'));
    expect(first).toEqual([[expect.stringMatching(/^sharding apples: Forbidden: /), 'RxInformerWarning', 'Forbidden']]);
    expect(warnings().every(([message]) => String(message).startsWith('sharding apples: Forbidden: '))).toBe(true);
    expect(warnings()).toHaveLength(2);
  });

  it('sharding: none while errors$ has a subscriber, none with reportUnobservedErrors: false', () => {
    expect(runs(shards(), true).length).toBeGreaterThan(0);
    runs(shards({ reportUnobservedErrors: false }));
    expect(warn).not.toHaveBeenCalled();
  });
});
