/**
 * More schedules than `npm test` runs: `node spec/leaderelection/soak.ts [schedules] [seed]`
 * (default 20 000). Prints each failing plan (replayable through runSchedule) and exits 1 on any.
 */
import fc from 'fast-check';
import { schedulePlan } from './arbitraries.ts';
import { runSchedule, violations } from './simulation.ts';

const count = Number(process.argv[2] ?? 20_000);
const seed = Number(process.argv[3] ?? Date.now() % 2 ** 31);
const started = Date.now();
let failed = 0;
for (const plan of fc.sample(schedulePlan(), { numRuns: count, seed })) {
  const found = violations(runSchedule(plan));
  if (found.length > 0) {
    failed++;
    console.log(JSON.stringify({ plan, found }));
  }
}
console.log(`${count} schedules (seed ${seed}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
