import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TIMING,
  afterRead,
  afterWrite,
  begin,
  initialElection,
  leading,
  nextAttemptIn,
  noOwnWrites,
  release,
  sentWrite,
  sharedIdentity,
  MAX_OWN_WRITES,
  timingProblem,
  type Candidate,
  type ElectionState,
} from '../../src/leaderelection/machine.ts';
import type { LeaderElectionRecord, LeaseSnapshot } from '../../src/leaderelection/record.ts';

const me: Candidate = { identity: 'a', timing: DEFAULT_TIMING };
const record = (holderIdentity: string, renewTime = 't0', leaseTransitions = 3): LeaderElectionRecord => ({
  holderIdentity,
  leaseDurationSeconds: 15,
  renewTime,
  leaseTransitions,
});
const lease = (holder: string, rv = '10', renewTime = 't0'): LeaseSnapshot => ({
  name: 'l',
  resourceVersion: rv,
  record: record(holder, renewTime),
});

describe('election machine', () => {
  it.each([
    [{ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }, undefined],
    [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }, 'leaseDurationMs must be greater than renewDeadlineMs'],
    [{ leaseDurationMs: 15_000, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }, 'renewDeadlineMs must be greater than retryPeriodMs × 1.2'],
    [{ leaseDurationMs: 0, renewDeadlineMs: -1, retryPeriodMs: 0 }, 'leaseDurationMs must be greater than zero'],
    // client-go's durations written in seconds (audit19: 292 Lease requests and 86 leader flips in 2 s).
    [
      { leaseDurationMs: 15, renewDeadlineMs: 10, retryPeriodMs: 2 },
      'leaseDurationMs must be at least 1000 (a Lease holds whole seconds), got 15: milliseconds, not seconds',
    ],
    [{ leaseDurationMs: 1_000, renewDeadlineMs: 600, retryPeriodMs: 200 }, undefined],
  ])('timing %o → %s', (timing, problem) => expect(timingProblem(timing)).toBe(problem));

  // One row per rule: what was read at which local time (first seen at 0), what we send.
  it.each<[string, LeaseSnapshot | null, number, string | undefined]>([
    ['no Lease: create it', null, 0, 'create'],
    ['released Lease: take it at once', lease(''), 0, 'update:acquire'],
    ['ours: renew', lease('a'), 0, 'update:renew'],
    ["b's, seen unchanged for 14.999 s: wait", lease('b'), 14_999, undefined],
    ["b's, seen unchanged for 15 s: take it", lease('b'), 15_000, 'update:acquire'],
  ])('%s', (_, read, at, expected) => {
    let state: ElectionState = initialElection;
    if (read) state = afterRead(state, read, 0, me, true).state;
    const step = afterRead(state, read, at, me, true);
    const next = step.next;
    expect(next === undefined ? undefined : next.type === 'update' ? `update:${next.purpose}` : next.type).toBe(expected);
  });

  it('a changed record restarts the lease duration (judged by our clock when it arrived, not by renewTime)', () => {
    let state = afterRead(initialElection, lease('b', '10', 't0'), 0, me, true).state;
    state = afterRead(state, lease('b', '11', 't1'), 10_000, me, true).state;
    expect(afterRead(state, lease('b', '11', 't1'), 24_999, me, true).next).toBeUndefined();
    expect(afterRead(state, lease('b', '11', 't1'), 25_000, me, true).next).toMatchObject({
      type: 'update',
      purpose: 'acquire',
      resourceVersion: '11',
    });
  });

  it('taking over counts a transition; renewing keeps acquireTime and the count', () => {
    const state = afterRead(initialElection, lease('b'), 0, me, true).state;
    const take = afterRead(state, lease('b'), 15_000, me, true).next;
    expect(take).toMatchObject({ record: { holderIdentity: 'a', leaseTransitions: 4, leaseDurationSeconds: 15 } });
    const ours: LeaseSnapshot = { name: 'l', resourceVersion: '20', record: { ...record('a'), acquireTime: 'then' } };
    const renew = afterRead(initialElection, ours, 0, me, true).next;
    expect(renew).toMatchObject({ purpose: 'renew', record: { acquireTime: 'then', leaseTransitions: 3 } });
  });

  it('leads until renewDeadline after the start of the last successful write', () => {
    const state = afterWrite(initialElection, lease('a', '30'), 1_000, 1_400, me);
    expect(leading(state, 10_999)).toBe(true);
    expect(leading(state, 11_000)).toBe(false);
    expect(begin(state, 3_000, me, true)).toMatchObject({ type: 'update', purpose: 'renew', resourceVersion: '30' });
    expect(begin(state, 11_000, me, true)).toEqual({ type: 'get' });
    expect(leading(afterWrite(initialElection, lease('', '31'), 1_000, 1_400, me), 1_500)).toBe(false);
  });

  it('not wanting: reads, never writes', () => {
    expect(afterRead(initialElection, null, 0, me, false).next).toBeUndefined();
    expect(afterRead(initialElection, lease(''), 0, me, false).next).toBeUndefined();
  });

  it('release empties the holder with leaseDurationSeconds 1 (client-go ReleaseOnCancel), only when the Lease is ours', () => {
    const ours = afterWrite(initialElection, lease('a', '40'), 0, 0, me);
    expect(release(ours, 5, 'a')).toMatchObject({
      type: 'update',
      purpose: 'release',
      resourceVersion: '40',
      record: { holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 3 },
    });
    expect(release(afterRead(initialElection, lease('b'), 0, me, true).state, 5, 'a')).toBeUndefined();
  });

  it('waits a retry period, but wakes when the holder lapses', () => {
    const seen = afterRead(initialElection, lease('b'), 0, me, true).state;
    expect(nextAttemptIn(seen, 0, me, 0, 0)).toBe(2_000);
    expect(nextAttemptIn(seen, 14_000, me, 0, 0)).toBe(1_000);
    expect(nextAttemptIn(seen, 15_000, me, 0, 0)).toBe(2_000); // lapsed already and this attempt failed
    expect(nextAttemptIn(seen, 0, me, 0.5, 1.2)).toBe(3_200);
  });
});

describe('sharedIdentity: another candidate with our identity, told by the read after a 409', () => {
  const renew = (renewTime: string) =>
    ({ type: 'update', purpose: 'renew', resourceVersion: '1', record: record('a', renewTime) }) as const;
  const own = ['t1', 't2'].reduce((o, t) => sentWrite(o, renew(t)), noOwnWrites);
  it.each<[string, LeaseSnapshot | null, boolean]>([
    ['our identity, a renewTime we never sent: shared', lease('a', '12', 't9'), true],
    ['our identity, a renewTime we sent (its answer lost, or a label bumped the resourceVersion): ours', lease('a', '12', 't1'), false],
    [
      'our identity, no renewTime (we always send one): shared',
      { name: 'l', resourceVersion: '12', record: { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 3 } },
      true,
    ],
    ["someone else's: a plain conflict", lease('b', '12', 't9'), false],
    ['released: a plain conflict', lease('', '12', 't9'), false],
    ['no Lease: a plain conflict', null, false],
  ])('%s', (_, read, shared) => expect(sharedIdentity(own, read, 'a').shared).toBe(shared));

  it('said once: the next reads that show it again are not', () => {
    const first = sharedIdentity(own, lease('a', '12', 't9'), 'a');
    expect([first.shared, sharedIdentity(first.own, lease('a', '14', 't10'), 'a').shared]).toEqual([true, false]);
  });

  it('remembers the last MAX_OWN_WRITES renewTimes sent (a read is not one; a write with none adds none)', () => {
    let o = noOwnWrites;
    for (let i = 0; i <= MAX_OWN_WRITES; i++) o = sentWrite(o, renew(`w${i}`));
    o = sentWrite(sentWrite(o, { type: 'get' }), {
      type: 'create',
      record: { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 },
    });
    expect(o.renewTimes).toHaveLength(MAX_OWN_WRITES);
    expect([
      sharedIdentity(o, lease('a', '2', 'w0'), 'a').shared,
      sharedIdentity(o, lease('a', '2', `w${MAX_OWN_WRITES}`), 'a').shared,
    ]).toEqual([true, false]);
  });
});
