/**
 * `npm run soak -- --recovery [--schedules N] [--seed S] [--clock virtual|node]`:
 * the recovery-latency soak. Schedule i is seed S + i (its fault kind cycles
 * with the seed), run in virtual time against the simulated server with an
 * informer at default options. Prints every failing seed with its schedule
 * and trace, then the per-fault table. Returns the exit code (1: a bound missed).
 */
import { FAULTS, scheduleFor } from './faults.ts';
import { markdownTable, summarize } from './report.ts';
import { runRecovery, type Clock, type RecoveryResult } from './simulation.ts';

export interface RecoverySoakOptions {
  readonly seed: number;
  readonly schedules: number;
  readonly clock: Clock;
  readonly progressEvery: number;
}

export function recoverySoak(options: RecoverySoakOptions): number {
  const { seed, schedules, clock } = options;
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  console.log(`recovery soak: ${schedules} schedules from seed ${seed}, ${clock} clock, default informer options`);
  const results: RecoveryResult[] = [];
  let virtualMs = 0;
  for (let i = 0; i < schedules; i++) {
    const result = runRecovery(scheduleFor(seed + i), clock);
    results.push(result);
    virtualMs += result.virtualMs;
    if (result.problems.length > 0) {
      console.log(`\n✗ seed ${seed + i} (${result.schedule.kind}): ${result.problems.join('; ')}`);
      console.log(`  replay: npm run soak -- --recovery --seed ${seed + i} --schedules 1${clock === 'virtual' ? '' : ` --clock ${clock}`}`);
      console.log(result.report.replace(/^/gm, '    '));
    }
    if ((i + 1) % options.progressEvery === 0 || i + 1 === schedules) {
      console.log(`[${i + 1}/${schedules}] ${elapsed()}, ${results.filter((r) => r.problems.length > 0).length} failing`);
    }
  }
  const failing = results.filter((r) => r.problems.length > 0);
  console.log('');
  console.log(markdownTable(summarize(results)));
  console.log('');
  console.log(
    `${schedules} schedules, ${(virtualMs / 3_600_000).toFixed(1)} virtual hours in ${elapsed()}; latency: from the fault (see below) to the first moment the store equals the server after the last write`,
  );
  for (const [kind, spec] of Object.entries(FAULTS)) console.log(`- ${kind}: ${spec.what}`);
  if (failing.length > 0) {
    console.log(`\nfailing seeds: ${failing.map((r) => r.schedule.seed).join(' ')}`);
    return 1;
  }
  return 0;
}
