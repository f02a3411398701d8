/**
 * Soak runner: many random fault schedules against the emulator, each checked
 * as in the conformance suite; prints progress, every failing seed with its
 * schedule, and a markdown summary.
 *
 *   npm run soak -- [--seed N] [--schedules N] [--progress N] [--concurrency N] [--http2]
 *   npm run soak -- --recovery [--seed N] [--schedules N] [--clock virtual|node]
 *
 * `--recovery`: the recovery-latency soak instead (spec/resilience/recovery): virtual
 * time, default informer options, a per-fault table of time to converge.
 *
 * Schedule i uses seed N + i, so `--seed S --schedules 1` replays schedule S.
 * Exits 1 when any schedule diverged.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { runSchedule, type FaultCount } from './harness/run.ts';
import { describeSchedule, scheduleArb, type Schedule } from './harness/schedule.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    schedules: { type: 'string', default: '300' },
    progress: { type: 'string' },
    concurrency: { type: 'string', default: '2' },
    recovery: { type: 'boolean', default: false },
    clock: { type: 'string', default: 'virtual' },
    http2: { type: 'boolean', default: false },
  },
});

function integer(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`--${name} must be an integer, got ${value}`);
  return n;
}

const seed = integer(values.seed, 'seed', Date.now() % 1_000_000_000);
const total = integer(values.schedules, 'schedules', 300);
const progressEvery = integer(values.progress, 'progress', Math.max(10, Math.round(total / 20)));
const concurrency = Math.max(1, integer(values.concurrency, 'concurrency', 2));

if (values.recovery) {
  const { recoverySoak } = await import('./recovery/soak.ts');
  if (values.clock !== 'virtual' && values.clock !== 'node') throw new Error(`--clock must be virtual or node, got ${values.clock}`);
  // The emulator soak below is top-level code: leave before it starts.
  process.exit(recoverySoak({ seed, schedules: total, clock: values.clock, progressEvery }));
}
const arbitrary = scheduleArb();

function scheduleFor(s: number): Schedule {
  const [schedule] = fc.sample(arbitrary, { seed: s, numRuns: 1 });
  if (!schedule) throw new Error(`no schedule for seed ${s}`);
  return schedule;
}

const faults: Record<string, FaultCount> = {};
const errors: Record<string, number> = {};
const failing: number[] = [];
let done = 0;
let operations = 0;
let requests = 0;
let watchList = 0;
const started = performance.now();
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);

console.log(`soak: ${total} schedules from seed ${seed}, ${concurrency} at a time${values.http2 ? ', over HTTP/2' : ''}`);

async function one(s: number): Promise<void> {
  const schedule = scheduleFor(s);
  const result = await runSchedule(schedule, { http2: values.http2 });
  done++;
  operations += result.operations;
  requests += result.requests;
  if (schedule.config.watchList) watchList++;
  for (const [kind, n] of Object.entries(result.faults)) {
    const into = (faults[kind] ??= { scheduled: 0, applied: 0 });
    into.scheduled += n.scheduled;
    into.applied += n.applied;
  }
  for (const [reason, n] of Object.entries(result.errorsByReason)) errors[reason] = (errors[reason] ?? 0) + n;
  if (result.divergences.length) {
    failing.push(s);
    console.log(`\n✗ seed ${s} diverged (replay: npm run soak -- --seed ${s} --schedules 1)`);
    console.log(describeSchedule(schedule).replace(/^/gm, '    '));
    for (const d of result.divergences) console.log(`  - ${d}`);
  }
  if (done % progressEvery === 0 || done === total) {
    console.log(
      `[${String(done).padStart(String(total).length)}/${total}] ${seconds()} s, ${operations} operations, ${failing.length} divergent`,
    );
  }
}

let next = 0;
await Promise.all(
  Array.from({ length: Math.min(concurrency, total) }, async () => {
    while (next < total) await one(seed + next++);
  }),
);

const byKind = Object.entries(faults).sort(([a], [b]) => a.localeCompare(b));
const totalApplied = byKind.reduce((n, [, f]) => n + f.applied, 0);
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
console.log('');
console.log(row(['', '']));
console.log(row(['---', '---:']));
console.log(row(['schedules', total]));
console.log(row(['first seed', seed]));
console.log(row(['of which streaming lists', watchList]));
console.log(row(['operations (writes, deletes, recreates)', operations]));
console.log(row(['requests', requests]));
console.log(row(['faults injected (applied)', totalApplied]));
console.log(row(['divergences', failing.length]));
console.log(row(['elapsed', `${seconds()} s`]));
console.log('');
console.log(row(['fault', 'scheduled', 'applied']));
console.log(row(['---', '---:', '---:']));
for (const [kind, f] of byKind) console.log(row([kind, f.scheduled, f.applied]));
console.log('');
console.log(row(['errors$ reason', 'reported']));
console.log(row(['---', '---:']));
for (const [reason, n] of Object.entries(errors).sort(([a], [b]) => a.localeCompare(b))) console.log(row([reason, n]));
if (failing.length) {
  console.log(`\nfailing seeds: ${failing.join(' ')}`);
  process.exitCode = 1;
}
