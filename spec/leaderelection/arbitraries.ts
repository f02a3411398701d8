import fc from 'fast-check';
import { DEFAULT_TIMING } from '../../src/leaderelection/machine.ts';
import type { ReplicaPlan, SchedulePlan } from './simulation.ts';

/** The drift bound the guarantee is proven for: every clock within ±5 % of real time. */
export const DRIFT = 0.05;
const CHAOS_UNTIL = 40_000;

const replica = (drift: number): fc.Arbitrary<ReplicaPlan> =>
  fc.record({
    rate: fc.double({ min: 1 - drift, max: 1 + drift, noNaN: true }),
    offset: fc.integer({ min: -3_600_000, max: 3_600_000 }),
    startAt: fc.integer({ min: 0, max: 5_000 }),
    killAt: fc.option(fc.integer({ min: 5_000, max: CHAOS_UNTIL }), { nil: undefined, freq: 4 }),
    partition: fc.option(
      fc
        .tuple(fc.integer({ min: 0, max: CHAOS_UNTIL }), fc.integer({ min: 0, max: 20_000 }))
        .map(([from, length]): readonly [number, number] => [from, Math.min(CHAOS_UNTIL, from + length)]),
      { nil: undefined, freq: 3 },
    ),
  });

/** 2–5 replicas; at least two are never killed during the chaos, so someone can take over after the strike. */
export const schedulePlan = (drift = DRIFT): fc.Arbitrary<SchedulePlan> =>
  fc
    .record({
      seed: fc.integer(),
      replicas: fc.array(replica(drift), { minLength: 2, maxLength: 5 }),
      maxLatencyMs: fc.integer({ min: 0, max: 300 }),
      faultRate: fc.double({ min: 0, max: 0.4, noNaN: true }),
      strike: fc.constantFrom<SchedulePlan['strike']>('kill', 'partition', 'stop'),
      keys: fc.integer({ min: 1, max: 5 }),
    })
    .map(({ replicas, ...rest }) => ({
      ...rest,
      timing: DEFAULT_TIMING,
      drift,
      chaosUntil: CHAOS_UNTIL,
      strikeAt: CHAOS_UNTIL + DEFAULT_TIMING.leaseDurationMs + 2 * DEFAULT_TIMING.retryPeriodMs + 5_000,
      replicas: replicas.map((r, i) => (i < 2 ? { ...r, killAt: undefined } : r)),
    }));
