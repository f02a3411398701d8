/**
 * The one backoff rule (`src/util/backoff.ts`), shared by the reflector's `Backoff` and the reachability probe:
 * a table of (state, now, rule, random) → (wait, state), then the two shells' differences, which are options.
 */
import { describe, expect, it } from 'vitest';
import { BACKOFF_START, backoffStep, type BackoffRule, type BackoffState } from '../../src/util/backoff.ts';
import { MAX_TIMER_DELAY_MS } from '../../src/util/scheduleAfter.ts';
import { Backoff } from '../../src/pipeline.ts';
import { NO_PROBES, nextProbe } from '../../src/1-transport/reachability.ts';

/** client-go's reflector backoff: NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0). */
const reflector: BackoffRule = { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1, resetAfterMs: 120_000, quietFrom: 'failure' };
const at = (currentMs: number | undefined, lastAt: number | undefined): BackoffState => ({ currentMs, lastAt });

describe('backoffStep', () => {
  it.each<[string, BackoffState, number, Partial<BackoffRule>, number, number, BackoffState]>([
    // name, state, now, rule (over `reflector`), random, wait, state after
    ['the first step: initialMs', BACKOFF_START, 5, {}, 0, 800, at(1600, 5)],
    ['jitter: d + random · jitter · d', BACKOFF_START, 5, {}, 0.5, 1200, at(1600, 5)],
    ['jitter 0.5, random 1', BACKOFF_START, 5, { jitter: 0.5 }, 1, 1200, at(1600, 5)],
    ['jitter 0: random ignored', BACKOFF_START, 5, { jitter: 0 }, 0.9, 800, at(1600, 5)],
    ['grows by factor', at(1600, 0), 10, {}, 0, 1600, at(3200, 10)],
    ['factor 3', at(2400, 0), 10, { factor: 3 }, 0, 2400, at(7200, 10)],
    ['capped at maxMs', at(25_600, 0), 10, {}, 0, 25_600, at(30_000, 10)],
    ['at maxMs it stays', at(30_000, 0), 10, {}, 0.5, 45_000, at(30_000, 10)],
    ['factor 0: no growth (client-go)', at(800, 0), 10, { factor: 0 }, 0, 800, at(800, 10)],
    [
      'initialMs over maxMs: first wait initialMs (client-go)',
      BACKOFF_START,
      0,
      { initialMs: 5_000, maxMs: 1_000 },
      0,
      5_000,
      at(1_000, 0),
    ],
    ['exactly resetAfterMs quiet: no reset', at(6400, 0), 120_000, {}, 0, 6400, at(12_800, 120_000)],
    ['more than resetAfterMs quiet: from initialMs', at(6400, 0), 120_001, {}, 0, 800, at(1600, 120_001)],
    ["quietFrom 'retry': lastAt is the end of the wait", BACKOFF_START, 5, { quietFrom: 'retry' }, 0, 800, at(1600, 805)],
    ["quietFrom 'retry': quiet measured from there", at(6400, 1_000), 121_000, { quietFrom: 'retry' }, 0, 6400, at(12_800, 127_400)],
    ["Node's timer limit caps the wait", at(40 * 86_400_000, 0), 1, { maxMs: Infinity }, 0.5, MAX_TIMER_DELAY_MS, at(80 * 86_400_000, 1)],
    ['Infinity, random 0: the timer limit, not 0', at(Infinity, 0), 1, { maxMs: Infinity }, 0, MAX_TIMER_DELAY_MS, at(Infinity, 1)],
    ['NaN: 0', BACKOFF_START, 1, { initialMs: NaN }, 0, 0, at(NaN, 1)],
  ])('%s', (_, state, now, rule, random, waitMs, after) => {
    expect(backoffStep(state, now, { ...reflector, ...rule }, () => random)).toEqual({ waitMs, state: after });
  });

  it('is pure: the state given is not changed', () => {
    const state = at(1600, 0);
    backoffStep(state, 10, reflector, () => 0);
    expect(state).toEqual(at(1600, 0));
  });
});

describe('the two shells', () => {
  it("Backoff (the reflector's) waits no longer than Node's timer limit (a longer timer fires after 1 ms)", () => {
    const b = new Backoff({ initialMs: 20 * 86_400_000, maxMs: 40 * 86_400_000 }, () => 0.5);
    expect(b.next(0)).toBe(MAX_TIMER_DELAY_MS);
    expect(b.next(1)).toBe(MAX_TIMER_DELAY_MS);
  });

  it('Backoff with factor 0 keeps initialMs, as client-go (not 0)', () => {
    const b = new Backoff({ factor: 0 }, () => 0);
    expect([b.next(0), b.next(1), b.next(2)]).toEqual([800, 800, 800]);
  });

  it('the reflector measures the quiet from the failure, the probe from the probe sent (a wait past resetAfterMs does not start it over)', () => {
    const options = { initialMs: 100_000, maxMs: 400_000, resetAfterMs: 120_000, jitter: 0 };
    const b = new Backoff(options, () => 0);
    expect([b.next(0), b.next(100_000), b.next(100_000 + 200_000)]).toEqual([100_000, 200_000, 100_000]); // client-go: reset
    let pace = NO_PROBES;
    const probes: number[] = [];
    for (let i = 0, now = 0; i < 3; i++) {
      const next = nextProbe(pace, now, options, () => 0);
      probes.push(next.waitMs);
      pace = next.pace;
      now += next.waitMs + 10; // the probe's answer comes 10 ms after it is sent
    }
    expect(probes).toEqual([100_000, 200_000, 400_000]);
  });
});
