import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { REFLECTOR_BACKOFF } from '../../src/2-source/backoff.ts';
import { discoveryRetryStep } from '../../src/discovery/discoveryRetry.ts';
import { BACKOFF_START, type BackoffState } from '../../src/util/backoff.ts';

const unavailable = (retryAfterSeconds?: number) =>
  new InformerError('ServerError', 'the server is currently unable to handle the request', { status: 503, retryAfterSeconds });
const forbidden = new InformerError('Forbidden', 'forbidden', { status: 403 });

/** Jitter at its least (0) and at its most (just under 1). */
const low = () => 0;
const high = () => 0.999;

describe('discoveryRetryStep', () => {
  const rows: {
    readonly row: string;
    readonly state: BackoffState;
    readonly faults: readonly InformerError[];
    readonly now: number;
    readonly random: () => number;
    readonly retryInMs: number | undefined;
    readonly after: BackoffState;
  }[] = [
    {
      row: 'a clean read: no retry, the backoff starts over',
      state: { currentMs: 6400, lastAt: 1000 },
      faults: [],
      now: 2000,
      random: low,
      retryInMs: undefined,
      after: BACKOFF_START,
    },
    {
      row: 'a first fault: 800 ms',
      state: BACKOFF_START,
      faults: [unavailable()],
      now: 0,
      random: low,
      retryInMs: 800,
      after: { currentMs: 1600, lastAt: 0 },
    },
    {
      row: 'a first fault, jitter at its most: under 1.6 s',
      state: BACKOFF_START,
      faults: [unavailable()],
      now: 0,
      random: high,
      retryInMs: 800 + 0.999 * 800,
      after: { currentMs: 1600, lastAt: 0 },
    },
    {
      row: 'the next fault: doubled',
      state: { currentMs: 1600, lastAt: 0 },
      faults: [forbidden],
      now: 900,
      random: low,
      retryInMs: 1600,
      after: { currentMs: 3200, lastAt: 900 },
    },
    {
      row: 'at most 30 s before jitter',
      state: { currentMs: 30_000, lastAt: 0 },
      faults: [forbidden],
      now: 60_000,
      random: low,
      retryInMs: 30_000,
      after: { currentMs: 30_000, lastAt: 60_000 },
    },
    {
      row: 'over 2 min after the last fault: from 800 ms again',
      state: { currentMs: 30_000, lastAt: 0 },
      faults: [forbidden],
      now: 120_001,
      random: low,
      retryInMs: 800,
      after: { currentMs: 1600, lastAt: 120_001 },
    },
    {
      row: 'a Retry-After longer than the backoff: the Retry-After',
      state: BACKOFF_START,
      faults: [forbidden, unavailable(5)],
      now: 0,
      random: low,
      retryInMs: 5000,
      after: { currentMs: 1600, lastAt: 0 },
    },
    {
      row: 'a Retry-After shorter than the backoff: the backoff',
      state: { currentMs: 3200, lastAt: 0 },
      faults: [unavailable(1)],
      now: 10,
      random: low,
      retryInMs: 3200,
      after: { currentMs: 6400, lastAt: 10 },
    },
    {
      row: 'a hostile Retry-After: at most 300 s',
      state: BACKOFF_START,
      faults: [unavailable(1e9)],
      now: 0,
      random: low,
      retryInMs: 300_000,
      after: { currentMs: 1600, lastAt: 0 },
    },
    {
      row: 'a negative Retry-After: the backoff',
      state: BACKOFF_START,
      faults: [unavailable(-5)],
      now: 0,
      random: low,
      retryInMs: 800,
      after: { currentMs: 1600, lastAt: 0 },
    },
  ];
  it.each(rows)('$row', ({ state, faults, now, random, retryInMs, after }) => {
    const out = discoveryRetryStep(state, faults, now, random);
    if (retryInMs === undefined) expect(out.retryInMs).toBeUndefined();
    else expect(out.retryInMs).toBeCloseTo(retryInMs);
    expect(out.state).toEqual(after);
  });

  it("is the reflector's rule, from its one home (REFLECTOR_BACKOFF in src/2-source/backoff.ts)", () => {
    expect(REFLECTOR_BACKOFF).toEqual({ initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1, resetAfterMs: 120_000, quietFrom: 'failure' });
    // The default rule is that very one: the same steps as with REFLECTOR_BACKOFF given, whatever it holds.
    const faults = [unavailable()];
    let [byDefault, given] = [BACKOFF_START, BACKOFF_START];
    for (let now = 0; now < 400_000; now += 50_000) {
      const a = discoveryRetryStep(byDefault, faults, now, low);
      const b = discoveryRetryStep(given, faults, now, low, REFLECTOR_BACKOFF);
      expect(a).toEqual(b);
      [byDefault, given] = [a.state, b.state];
    }
  });
});
