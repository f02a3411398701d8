import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TIMING,
  afterRead,
  afterWrite,
  begin,
  initialElection,
  nextAttemptIn,
  type Candidate,
} from '../../src/leaderelection/machine.ts';
import type { LeaseSnapshot } from '../../src/leaderelection/record.ts';

// Cases found by mutation testing the election machine (gaps102): each fails with one hand-made mutation of machine.ts
// that every other spec let through.
const me: Candidate = { identity: 'a', timing: DEFAULT_TIMING };
const lease = (holder: string, rv = '10'): LeaseSnapshot => ({
  name: 'l',
  resourceVersion: rv,
  record: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: 't0', leaseTransitions: 3 },
});

describe('election machine: edges', () => {
  it('a lease duration of whole seconds plus a fraction is written rounded up: a peer never waits less than we lead', () => {
    // 1 500 ms: a record saying 1 s would let a peer take over 1 s after it saw our write, while we lead 1.2 s after it.
    const short: Candidate = { identity: 'a', timing: { leaseDurationMs: 1_500, renewDeadlineMs: 1_200, retryPeriodMs: 500 } };
    expect(afterRead(initialElection, null, 0, short, true).next).toMatchObject({ type: 'create', record: { leaseDurationSeconds: 2 } });
  });

  it('a leader that no longer wants the Lease does not renew it on the fast path: it reads', () => {
    const state = afterWrite(initialElection, lease('a', '30'), 1_000, 1_000, me);
    expect(begin(state, 3_000, me, true)).toMatchObject({ type: 'update', purpose: 'renew' });
    expect(begin(state, 3_000, me, false)).toEqual({ type: 'get' });
  });

  it("a leader renews every retry period unjittered (client-go jitters only a candidate's attempts)", () => {
    const state = afterWrite(initialElection, lease('a', '30'), 1_000, 1_000, me);
    expect(nextAttemptIn(state, 1_000, me, 0.5, 1.2)).toBe(2_000);
    // A candidate's wait is stretched: 2 000 × (1 + 0.5 × 1.2).
    expect(nextAttemptIn(afterRead(initialElection, lease('b'), 0, me, true).state, 0, me, 0.5, 1.2)).toBe(3_200);
  });
});
