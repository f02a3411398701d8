import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING } from '../../src/leaderelection/machine.ts';
import { DRIFT, schedulePlan } from './arbitraries.ts';
import { runSchedule, violations, type SchedulePlan } from './simulation.ts';

const RUNS = Number(process.env['LEADERELECTION_RUNS'] ?? 500);

describe('leader election, 2–5 replicas in virtual time (drift ±5 %, latencies, 500s, dropped and hung requests, deaths, partitions)', () => {
  it(`keeps one leader at most, hands over in time, and a partitioned leader steps down (${RUNS} schedules)`, () => {
    fc.assert(
      fc.property(schedulePlan(), (plan) => {
        const result = runSchedule(plan);
        expect(violations(result)).toEqual([]);
        expect(result.leadership.length).toBeGreaterThan(0);
      }),
      { numRuns: RUNS },
    );
  });

  it('the drift bound matters: a slow leader clock (−25 %) and a fast candidate clock (+25 %) break the guarantee (L 15 s / RD 10 s)', () => {
    // The leader steps down 10 s / 0.75 = 13.3 s after its last renewal started; the candidate
    // takes over 15 s / 1.25 = 12 s after it saw that renewal: both lead for about a second.
    const plan: SchedulePlan = {
      seed: 1,
      timing: DEFAULT_TIMING,
      drift: 0.25,
      replicas: [
        { rate: 0.75, offset: 0, startAt: 0 },
        { rate: 1.25, offset: 0, startAt: 1_000 },
      ],
      maxLatencyMs: 0,
      faultRate: 0,
      chaosUntil: 0,
      strikeAt: 30_000,
      strike: 'partition',
      keys: 1,
    };
    const found = violations(runSchedule(plan));
    expect(found.some((v) => v.startsWith('two leaders'))).toBe(true);
    expect(DRIFT).toBeLessThan(0.2); // 15/10 = 1.5 > (1 + DRIFT) / (1 − DRIFT)
  });
});
