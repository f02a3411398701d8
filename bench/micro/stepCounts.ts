/**
 * What metrics83's per-informer counting (`StepCounter.record`, src/5-informer/stepCounts.ts) costs an informer step,
 * in process: `record` of a watch step (one event, no error) at the default scheduler's `now()`, and of a first
 * list's `replace` step of `pods` events, against the same loop without it, taking turns round after round (an A/B
 * in one process: the machine's load weighs on all alike). Prints ns per step and per listed item, medians.
 *
 *   node bench/micro/stepCounts.ts [pods=50000] [rounds=9] [modules]
 *
 * `modules`: copies of stepCounts.ts separated by commas (default this tree's), each timed in turn: an A/B of two
 * versions (one whose `record` takes `now`, read by the caller at every step, as metrics83's did, or a clock).
 *
 * Compare with bench/micro/perEvent.ts's main-thread µs per event (docs/performance.md, "(left87)").
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StepCounter } from '../../src/5-informer/stepCounts.ts';
import { monotonicScheduler } from '../../src/util/monotonicNow.ts';

const [podsArg = '50000', roundsArg = '9', modulesArg] = process.argv.slice(2);
const paths = modulesArg?.split(',') ?? [new URL('../../src/5-informer/stepCounts.ts', import.meta.url).pathname];
/** Each copy's `record` as the informer calls it (metrics83's with `scheduler.now()` read at every step). */
const copies = await Promise.all(
  paths.map(async (path) => {
    const { StepCounter: Counter } = (await import(pathToFileURL(resolve(path)).href)) as { StepCounter: new () => StepCounter };
    const takesNow = !String(Counter.prototype.record).includes('clock');
    const record = takesNow
      ? (c: StepCounter, s: Step) => (c.record as unknown as (s: Step, now: number) => void)(s, monotonicScheduler.now())
      : (c: StepCounter, s: Step) => c.record(s, monotonicScheduler);
    return { path, Counter, record };
  }),
);
const pods = Number(podsArg);
const rounds = Number(roundsArg);
type Step = Parameters<StepCounter['record']>[0];
const types = ['added', 'updated', 'deleted'] as const;
const watchSteps: Step[] = Array.from({ length: 1024 }, (_, i) => ({
  step: 'watch',
  synced: true,
  events: [{ type: types[i % 3]! }] as unknown as Step['events'],
  errors: [],
}));
const replace: Step = {
  step: 'replace',
  synced: true,
  events: Array.from({ length: pods }, () => ({ type: 'added' })) as unknown as Step['events'],
  errors: [],
};
const steps = 2_000_000;
let sink = 0;

type Copy = (typeof copies)[number];
/** ns per watch step: `steps` steps, with a copy's `record`, or (none) with only a read of the step. */
function watchRound(copy: Copy | undefined): number {
  const counter = new (copy?.Counter ?? copies[0]!.Counter)();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < steps; i++) {
    const s = watchSteps[i & 1023]!;
    if (copy) copy.record(counter, s);
    else sink += s.events.length;
  }
  const ns = Number(process.hrtime.bigint() - t0) / steps;
  sink += counter.snapshot().eventsTotal.added;
  return ns;
}

/** ns per listed item of a first list's `replace` step. */
function listRound(copy: Copy): number {
  const counter = new copy.Counter();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 20; i++) copy.record(counter, replace);
  const ns = Number(process.hrtime.bigint() - t0) / (20 * pods);
  sink += counter.snapshot().listsTotal;
  return ns;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const watch = new Map<Copy | undefined, number[]>([[undefined, []], ...copies.map((c) => [c, []] as [Copy, number[]])]);
const list = new Map<Copy, number[]>(copies.map((c) => [c, []]));
const contenders = [undefined, ...copies];
for (let r = 0; r <= rounds; r++) {
  const order = r % 2 === 0 ? contenders : [...contenders].reverse();
  for (const c of order) {
    const w = watchRound(c);
    const l = c ? listRound(c) : 0;
    if (r === 0) continue; // cold
    watch.get(c)!.push(w);
    if (c) list.get(c)!.push(l);
  }
}
const none = median(watch.get(undefined)!);
for (const c of copies)
  console.log(
    JSON.stringify({
      module: c.path,
      recordNsPerWatchStep: +(median(watch.get(c)!) - none).toFixed(1),
      recordNsPerListedItem: +median(list.get(c)!).toFixed(2),
      rounds,
      load: (await import('node:os')).loadavg()[0]!.toFixed(2),
    }),
  );
if (sink < 0) console.log(sink);
