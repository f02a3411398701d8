/**
 * The reflector's recovery rules as a table: how a watch ended (and what came
 * before) → what next, at once or after the backoff. Pure, so no timers.
 */
import { describe, expect, it } from 'vitest';
import { InformerError, errorFromStatus, type ErrorReason } from '../../src/0-model/errors.ts';
import {
  BROKEN_RESUMES_BEFORE_RELIST,
  MAX_RETRY_AFTER_SECONDS,
  NO_FAILURES,
  afterListFailure,
  afterWatch,
  isTooLargeResourceVersion,
  type Decision,
  type RecoveryCounters,
  type WatchEnd,
} from '../../src/2-source/recovery.ts';

const fault = (reason: ErrorReason, status?: number, retryAfterSeconds?: number) =>
  new InformerError(reason, reason, { status, phase: 'watch', retryAfterSeconds });
const tooLarge = errorFromStatus(
  504,
  {
    kind: 'Status',
    status: 'Failure',
    reason: 'Timeout',
    code: 504,
    message: 'Too large resource version: 99, current: 20',
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
  },
  'watch',
);

type Row = readonly [
  what: string,
  end: WatchEnd['end'],
  progress: boolean,
  counters: RecoveryCounters,
  expected: Decision,
  after: RecoveryCounters,
];
const fresh = NO_FAILURES;
const rows: readonly Row[] = [
  ['server ended the stream (timeout)', 'clean', true, fresh, { next: 'resume', backoff: false }, fresh],
  ['server ended a quiet stream', 'clean', false, { brokenResumes: 2, failuresAtSameRV: 1 }, { next: 'resume', backoff: false }, fresh],
  ['silent for the idle timeout', 'idle', false, fresh, { next: 'resume', backoff: false }, fresh],
  ['very short watch', fault('VeryShortWatch'), false, fresh, { next: 'resume', backoff: true }, { brokenResumes: 0, failuresAtSameRV: 1 }],
  [
    'network error after progress',
    fault('NetworkError'),
    true,
    fresh,
    { next: 'resume', backoff: false },
    { brokenResumes: 1, failuresAtSameRV: 0 },
  ],
  [
    '5xx ERROR event after progress (2nd)',
    fault('ServerError', 500),
    true,
    { brokenResumes: 1, failuresAtSameRV: 0 },
    { next: 'resume', backoff: false },
    { brokenResumes: 2, failuresAtSameRV: 0 },
  ],
  [
    'third broken resume in a row',
    fault('NetworkError'),
    true,
    { brokenResumes: BROKEN_RESUMES_BEFORE_RELIST - 1, failuresAtSameRV: 0 },
    { next: 'relist', backoff: true },
    fresh,
  ],
  [
    'network error without progress',
    fault('NetworkError'),
    false,
    fresh,
    { next: 'resume', backoff: true },
    { brokenResumes: 0, failuresAtSameRV: 1 },
  ],
  [
    '5xx answer',
    fault('ServerError', 503),
    false,
    { brokenResumes: 1, failuresAtSameRV: 1 },
    { next: 'resume', backoff: true },
    { brokenResumes: 0, failuresAtSameRV: 2 },
  ],
  ['stall margin timeout', fault('Timeout'), false, fresh, { next: 'resume', backoff: true }, { brokenResumes: 0, failuresAtSameRV: 1 }],
  [
    '429 with Retry-After',
    fault('TooManyRequests', 429, 7),
    false,
    fresh,
    { next: 'resume', backoff: true, retryAfterSeconds: 7 },
    { brokenResumes: 0, failuresAtSameRV: 1 },
  ],
  [
    '429 with a 30-day Retry-After',
    fault('TooManyRequests', 429, 2_592_000),
    false,
    fresh,
    { next: 'resume', backoff: true, retryAfterSeconds: MAX_RETRY_AFTER_SECONDS },
    { brokenResumes: 0, failuresAtSameRV: 1 },
  ],
  [
    'undecodable line after progress',
    fault('MalformedLine'),
    true,
    { brokenResumes: 0, failuresAtSameRV: 1 },
    { next: 'resume', backoff: false },
    { brokenResumes: 0, failuresAtSameRV: 1 },
  ],
  [
    'undecodable line again at the same rv',
    fault('MalformedLine'),
    false,
    { brokenResumes: 0, failuresAtSameRV: 1 },
    { next: 'relist', backoff: false },
    { brokenResumes: 0, failuresAtSameRV: 2 },
  ],
  [
    'undecodable line a third time at the same rv',
    fault('MalformedLine'),
    false,
    { brokenResumes: 0, failuresAtSameRV: 2 },
    { next: 'relist', backoff: true },
    { brokenResumes: 0, failuresAtSameRV: 3 },
  ],
  ['410 after progress', fault('Expired', 410), true, fresh, { next: 'relist', backoff: false }, fresh],
  [
    '410 at the start of a resumed watch (its rv aged out while it was idle or stalled)',
    fault('Expired', 410),
    false,
    fresh,
    { next: 'relist', backoff: false },
    fresh,
  ],
  [
    'too large resource version (client-go: the backoff, then a list at the last resourceVersion)',
    tooLarge,
    false,
    { brokenResumes: 1, failuresAtSameRV: 2 },
    { next: 'relist', backoff: true },
    { brokenResumes: 0, failuresAtSameRV: 3 },
  ],
  ['403', fault('Forbidden', 403), false, fresh, { next: 'relist', backoff: true }, { brokenResumes: 0, failuresAtSameRV: 1 }],
  [
    '401 after progress',
    fault('Unauthorized', 401),
    true,
    fresh,
    { next: 'relist', backoff: true },
    { brokenResumes: 0, failuresAtSameRV: 1 },
  ],
];

describe('afterWatch: the recovery rules as a table', () => {
  for (const [what, end, progress, counters, expected, after] of rows) {
    it(`${what} → ${expected.next}${expected.backoff ? ' after the backoff' : ' at once'}`, () => {
      const outcome = afterWatch({ end, progress, initial: false }, counters);
      expect(outcome.decision).toEqual(expected);
      expect(outcome.counters).toEqual(after);
    });
  }

  it('410 before any progress on a watch from a list just received (a relist loop in the making) → relist after the backoff', () => {
    expect(afterWatch({ end: fault('Expired', 410), progress: false, initial: false, fromList: true }, fresh).decision).toEqual({
      next: 'relist',
      backoff: true,
    });
    expect(afterWatch({ end: fault('Expired', 410), progress: true, initial: false, fromList: true }, fresh).decision).toEqual({
      next: 'relist',
      backoff: false,
    });
  });

  it('a streaming list: refused parameters → plain list at once; ended before its initial events → plain list after the backoff; broken → relist after the backoff, progress or not (no storm of whole-collection streams)', () => {
    expect(afterWatch({ end: fault('Invalid', 422), progress: false, initial: true }, fresh).decision).toEqual({
      next: 'listInstead',
      backoff: false,
    });
    expect(afterWatch({ end: fault('BadRequest', 400), progress: false, initial: true }, fresh).decision).toEqual({
      next: 'listInstead',
      backoff: false,
    });
    expect(afterWatch({ end: 'clean', progress: true, initial: true }, fresh).decision).toEqual({ next: 'listInstead', backoff: true });
    expect(afterWatch({ end: fault('NetworkError'), progress: true, initial: true }, fresh).decision).toEqual({
      next: 'relist',
      backoff: true,
    });
    expect(afterWatch({ end: fault('NetworkError'), progress: false, initial: true }, fresh).decision).toEqual({
      next: 'relist',
      backoff: true,
    });
    expect(afterWatch({ end: fault('MalformedLine'), progress: true, initial: true }, fresh).decision).toEqual({
      next: 'relist',
      backoff: true,
    });
    expect(
      afterWatch({ end: fault('ServerError', 500), progress: true, initial: true }, { brokenResumes: 2, failuresAtSameRV: 0 }).decision,
    ).toEqual({ next: 'relist', backoff: true });
    // …and what it delivered does not reset the backoff.
    expect(afterWatch({ end: fault('NetworkError'), progress: true, initial: true }, fresh).resetBackoff).toBe(false);
  });

  it('progress resets the backoff, except on a very short watch (a bookmark then the end is no progress worth it)', () => {
    expect(afterWatch({ end: 'clean', progress: true, initial: false }, fresh).resetBackoff).toBe(true);
    expect(afterWatch({ end: fault('NetworkError'), progress: true, initial: false }, fresh).resetBackoff).toBe(true);
    expect(afterWatch({ end: fault('VeryShortWatch'), progress: true, initial: false }, fresh).resetBackoff).toBe(false);
    expect(afterWatch({ end: fault('VeryShortWatch'), progress: true, initial: false }, fresh).decision).toEqual({
      next: 'resume',
      backoff: true,
    });
    expect(afterWatch({ end: fault('NetworkError'), progress: false, initial: false }, fresh).resetBackoff).toBe(false);
  });

  it("a 503's Retry-After counts on a watch as on a list", () => {
    expect(afterWatch({ end: fault('ServerError', 503, 20), progress: false, initial: false }, fresh).decision).toEqual({
      next: 'resume',
      backoff: true,
      retryAfterSeconds: 20,
    });
  });
});

describe('afterListFailure', () => {
  it('410 at a resourceVersion or on a continue page, or too large: list again at once at ""; 410 at "" and others: backoff', () => {
    expect(afterListFailure(fault('Expired', 410), '12', false)).toEqual({ next: 'relistLatest', backoff: false });
    expect(afterListFailure(fault('Expired', 410), '', true)).toEqual({ next: 'relistLatest', backoff: false });
    expect(afterListFailure(fault('Expired', 410), '', false)).toEqual({ next: 'relist', backoff: true });
    expect(afterListFailure(tooLarge, '99', false)).toEqual({ next: 'relistLatest', backoff: false });
    expect(afterListFailure(fault('TooManyRequests', 429, 1e9), '0', false)).toEqual({
      next: 'relist',
      backoff: true,
      retryAfterSeconds: MAX_RETRY_AFTER_SECONDS,
    });
    expect(afterListFailure(fault('ServerError', 500), '0', false)).toEqual({ next: 'relist', backoff: true });
  });

  it('a continue token expired a 2nd time in a row: the restart at "" waits the backoff (the 1st restarts at once)', () => {
    expect(afterListFailure(fault('Expired', 410), '', true, 0, 1)).toEqual({ next: 'relistLatest', backoff: false });
    expect(afterListFailure(fault('Expired', 410), '', true, 0, 2)).toEqual({ next: 'relistLatest', backoff: true });
    expect(afterListFailure(fault('Expired', 410), '12', false, 0, 0)).toEqual({ next: 'relistLatest', backoff: false });
  });
});

describe('isTooLargeResourceVersion', () => {
  it('knows the cause type, and the message of servers older than it; not other 504s', () => {
    expect(isTooLargeResourceVersion(tooLarge)).toBe(true);
    expect(
      isTooLargeResourceVersion(
        errorFromStatus(
          504,
          { kind: 'Status', code: 504, reason: 'Timeout', message: 'Too large resource version: 5, current: 3' },
          'list',
        ),
      ),
    ).toBe(true);
    expect(
      isTooLargeResourceVersion(
        errorFromStatus(504, { kind: 'Status', code: 504, reason: 'Timeout', message: 'request timed out' }, 'list'),
      ),
    ).toBe(false);
    expect(
      isTooLargeResourceVersion(errorFromStatus(500, { kind: 'Status', code: 500, message: 'Too large resource version' }, 'list')),
    ).toBe(false);
  });
});
