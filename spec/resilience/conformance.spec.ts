/**
 * The conformance property: for random schedules of writes and faults against
 * the emulator, an informer ends with exactly the server's objects, every
 * subscriber's history is consistent with the server's, every fault is
 * reported on errors$ (and nothing else is), and never more than one request
 * is in flight. See harness/run.ts for the checks, harness/schedule.ts for
 * the schedules. A failure prints fast-check's seed and path, the schedule
 * and what diverged; `npm run soak -- --seed S` runs more.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { map, type Observable } from 'rxjs';
import type { ListWatch } from '../../src/pipeline.ts';
import type { WatchFrame } from '../../src/pipeline.ts';
import { runSchedule, type RunResult } from './harness/run.ts';
import { describeSchedule, scheduleArb, type Schedule } from './harness/schedule.ts';

/**
 * Schedules per property; two properties run side by side (their waits are mostly idle).
 * Replay a failure with the seed and path fast-check printed:
 *   RESILIENCE_SEED=<seed> RESILIENCE_PATH=<path> npx vitest run spec/resilience/conformance.spec.ts
 */
const RUNS = Number(process.env['RESILIENCE_RUNS'] ?? 40);
const SEED = process.env['RESILIENCE_SEED'] === undefined ? undefined : Number(process.env['RESILIENCE_SEED']);
const PATH = process.env['RESILIENCE_PATH'];

const printable = (schedule: Schedule): Schedule =>
  Object.defineProperty(schedule, fc.toStringMethod, { value: () => `\n${describeSchedule(schedule)}\n` });

async function conforms(schedule: Schedule): Promise<void> {
  const result = await runSchedule(schedule);
  if (result.divergences.length) {
    throw new Error(`the informer diverged:\n${describeSchedule(schedule)}\n${result.divergences.map((d) => `  - ${d}`).join('\n')}`);
  }
}

function property(name: string): void {
  it.concurrent(
    name,
    async () => {
      await fc.assert(fc.asyncProperty(scheduleArb().map(printable), conforms), {
        numRuns: RUNS,
        endOnFailure: true,
        ...(SEED === undefined ? {} : { seed: SEED }),
        ...(PATH === undefined ? {} : { path: PATH }),
      });
    },
    150_000,
  );
}

describe('conformance under random fault schedules', () => {
  property('store, subscriber histories, errors$ and in-flight requests agree with the server (batch 1)');
  property('store, subscriber histories, errors$ and in-flight requests agree with the server (batch 2)');
});

// ── the checks can fail: each sabotage of the transport is caught ──────────

const fixed = (steps: Schedule['steps'], config: Partial<Schedule['config']> = {}): Schedule => ({
  config: {
    kind: 'configmaps',
    namespace: undefined,
    watchList: false,
    serverWatchList: true,
    pageSize: 2,
    historyLimit: 4,
    initial: [
      { ns: 'default', name: 'a' },
      { ns: 'ns-a', name: 'b' },
      { ns: 'ns-b', name: 'c' },
    ],
    lateJoinAt: 1,
    seed: 7,
    ...config,
  },
  steps,
});

/** Rewrites the frames of every watch. */
const onWatchFrames =
  (rewrite: (frames: Observable<WatchFrame>) => Observable<WatchFrame>) =>
  (inner: ListWatch): ListWatch => ({ list: (o) => inner.list(o), watch: (o) => rewrite(inner.watch(o)) });

const isEvent = (frame: WatchFrame, type: string) => !(frame instanceof Error) && frame.type === type;

/** A watch whose stalled window lets the informer's resourceVersion be compacted away (the stall is noticed at the last step). */
const expiresWhileStalled = fixed([
  { op: 'fault', target: 'watch', fault: { type: 'stallWatch' } },
  { op: 'untilStalled' },
  { op: 'write', ns: 'default', name: 'a' },
  { op: 'write', ns: 'ns-a', name: 'd' },
  { op: 'delete', pick: 1 },
  { op: 'compact' },
  { op: 'sleep', ms: 1 },
]);

function divergent(result: RunResult, pattern: RegExp): void {
  expect(result.divergences.join('\n')).toMatch(pattern);
}

describe('the conformance checks catch a broken informer', () => {
  it('control: the stalled-then-expired schedule conforms with the real transport', async () => {
    const result = await runSchedule(expiresWhileStalled);
    expect(result.divergences).toEqual([]);
    expect(result.errorsByReason).toMatchObject({ Timeout: 1, Expired: 1 });
  });

  it('410 swallowed (the ERROR event turned into a bookmark): Expired missing from errors$', async () => {
    const sabotage = onWatchFrames((frames) =>
      frames.pipe(map((frame) => (isEvent(frame, 'ERROR') ? { type: 'BOOKMARK', object: { metadata: {} } } : frame))),
    );
    const result = await runSchedule(expiresWhileStalled, { sabotage });
    // (The store does not converge either: every resume at the compacted resourceVersion ends at once, a VeryShortWatch.)
    divergent(result, /not reported on errors\$: Expired/);
  });

  it('a lost DELETED event: the store and every subscriber keep the object', async () => {
    const sabotage = onWatchFrames((frames) =>
      frames.pipe(map((frame) => (isEvent(frame, 'DELETED') ? { type: 'BOOKMARK', object: { metadata: {} } } : frame))),
    );
    const result = await runSchedule(
      fixed([
        { op: 'sleep', ms: 50 },
        { op: 'delete', pick: 0 },
      ]),
      { sabotage },
    );
    divergent(result, /store: extra default\/a/);
    divergent(result, /events\$ subscriber: extra default\/a/);
  });

  it('a malformed line not reported: MalformedLine missing from errors$', async () => {
    const sabotage = onWatchFrames((frames) =>
      frames.pipe(map((frame) => (frame instanceof Error ? { type: 'BOOKMARK', object: { metadata: {} } } : frame))),
    );
    const result = await runSchedule(
      fixed([
        { op: 'fault', target: 'watch', fault: { type: 'malformedLine' } },
        { op: 'sleep', ms: 50 },
      ]),
      { sabotage },
    );
    divergent(result, /not reported on errors\$: MalformedLine/);
  });

  it('a stall rule that does not fire (a 10-minute margin, past the clock jump): Timeout missing', async () => {
    const stalledThenClosed = fixed([
      { op: 'fault', target: 'watch', fault: { type: 'stallWatch' } },
      { op: 'untilStalled' },
      { op: 'write', ns: 'default', name: 'a' },
      { op: 'sleep', ms: 1 }, // the harness moves the informer's clock past the default margin here
      { op: 'closeWatches', clean: true }, // and the server ends the watch, so that the run ends soon either way
    ]);
    const control = await runSchedule(stalledThenClosed);
    expect(control.divergences).toEqual([]);
    expect(control.errorsByReason).toMatchObject({ Timeout: 1 });
    const result = await runSchedule(stalledThenClosed, { informerOptions: { stallMarginMs: 600_000 } });
    divergent(result, /not reported on errors\$: Timeout/);
  });

  it('a leaked watch (opened again and never closed): the server sees two requests open at once', async () => {
    const sabotage = (inner: ListWatch): ListWatch => ({
      list: (o) => inner.list(o),
      watch: (o) => {
        inner.watch({ ...o, timeoutSeconds: 1 }).subscribe({ error: () => undefined });
        return inner.watch(o);
      },
    });
    // A write the informer must see before the run converges: the watch that brings it is open by then, and the leaked
    // one, opened just before it, too (a plain 50 ms sleep could end the run first on a loaded machine).
    const result = await runSchedule(
      fixed([
        { op: 'write', ns: 'default', name: 'a' },
        { op: 'sleep', ms: 50 },
      ]),
      { sabotage },
    );
    divergent(result, /the server had requests open at once/);
  });
});
