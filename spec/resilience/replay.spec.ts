/**
 * Record and replay: for random schedules of writes, churn and faults against the emulator (the
 * conformance harness's), the informer's ListWatch is recorded on the informer's clock; the trace is
 * then replayed under a TestScheduler into an informer with the same options. Its events (every
 * field a handler reads, in order) and its final store must equal the live run's, event for event.
 *
 *   REPLAY_RUNS=<n> REPLAY_SEED=<seed> npx vitest run spec/resilience/replay.spec.ts
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import type { Subscription } from 'rxjs';
import { ConfigMap, Pod, informer, type InformerEvent, type KubeObject, type Resource, type Store } from '../../src/index.ts';
import { readTrace, record, traceText, traceWriter, trimTrace, type Trace } from '../../src/pipeline.ts';
import { replayListWatch, type ReplayListWatch } from '../../src/testing/index.ts';
import { harnessInformerOptions, runSchedule } from './harness/run.ts';
import { describeSchedule, scheduleArb, type Kind, type Schedule } from './harness/schedule.ts';

const RUNS = Number(process.env['REPLAY_RUNS'] ?? 6);
const SEED = process.env['REPLAY_SEED'] === undefined ? undefined : Number(process.env['REPLAY_SEED']);
const RESOURCES: Record<Kind, Resource<KubeObject>> = { configmaps: ConfigMap, pods: Pod };
/** How long a replay may run past the trace's last line before the test stops it (a replay that never finishes). */
const REPLAY_SLACK_MS = 10 * 60_000;

const meta = (o: KubeObject) =>
  `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}@${o.metadata.resourceVersion ?? ''}#${o.metadata.uid ?? ''}`;

/** An event as a line: every field a handler reads. */
function describeEvent(e: InformerEvent<KubeObject>): string {
  switch (e.type) {
    case 'added':
      return `added ${meta(e.object)}${e.isInInitialList ? ' initial' : ''}`;
    case 'updated':
      return `updated ${meta(e.oldObject)} -> ${meta(e.object)}${e.resync ? ' resync' : ''}${e.isInInitialList ? ' initial' : ''}`;
    case 'deleted':
      return `deleted ${meta(e.object)}${e.finalStateUnknown ? ' unknown' : ''}${e.isInInitialList ? ' initial' : ''}`;
    default:
      return JSON.stringify(e);
  }
}

const storeOf = (store: Store<KubeObject> | undefined) => (store ? store.list().map(meta).sort() : []);

interface Run {
  readonly events: readonly string[];
  readonly store: readonly string[];
}

async function live(schedule: Schedule): Promise<Run & { trace: Trace }> {
  let text = '';
  let writer: ReturnType<typeof traceWriter> | undefined;
  const events: string[] = [];
  let store: Store<KubeObject> | undefined;
  const result = await runSchedule(schedule, {
    sabotage: (listWatch, clock) => {
      writer = traceWriter({ write: (line) => (text += line), resources: [schedule.config.kind], scheduler: clock });
      return record(listWatch, writer);
    },
    observe: (cache) => {
      const subscription = cache.events$.subscribe((e) => events.push(describeEvent(e)));
      subscription.add(cache.store$.subscribe((s) => (store = s)));
      return subscription;
    },
  });
  writer?.close();
  if (result.divergences.length) throw new Error(`the live run diverged:\n${result.divergences.join('\n')}`);
  return { events, store: storeOf(store), trace: readTrace(text) };
}

function replayed(schedule: Schedule, trace: Trace): Run & { replay: ReplayListWatch } {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  const events: string[] = [];
  let store: Store<KubeObject> | undefined;
  let replay: ReplayListWatch | undefined;
  scheduler.run(() => {
    replay = replayListWatch(trace, { scheduler });
    const cache = informer(replay, RESOURCES[schedule.config.kind], harnessInformerOptions(schedule.config, scheduler));
    const subscription: Subscription = cache.events$.subscribe((e) => events.push(describeEvent(e)));
    subscription.add(cache.store$.subscribe((s) => (store = s)));
    const stop = () => subscription.unsubscribe();
    subscription.add(replay.finished$.subscribe(stop));
    const last = trace.lines.at(-1)?.at ?? 0;
    subscription.add(scheduler.schedule(stop, last + REPLAY_SLACK_MS));
  });
  return { events, store: storeOf(store), replay: replay! };
}

async function replaysAsRecorded(schedule: Schedule): Promise<void> {
  const run = await live(schedule);
  const again = replayed(schedule, run.trace);
  const context = `\n${describeSchedule(schedule)}\n`;
  expect(
    again.replay.mismatches.map((m) => m.message),
    context,
  ).toEqual([]);
  expect(again.replay.remaining, context).toBe(0);
  expect(again.events, context).toEqual(run.events);
  expect(again.store, context).toEqual(run.store);

  // A window from the middle on still replays, to the same store (streaming-list traces are not cut).
  if (schedule.config.watchList) return;
  const middle = run.trace.lines[Math.floor(run.trace.lines.length / 2)]!.at;
  let window: Trace;
  try {
    window = readTrace(traceText(trimTrace(run.trace, { fromMs: middle })));
  } catch (error) {
    if (error instanceof Error && /no watch (of \S+ )?starts/.test(error.message)) return;
    throw error;
  }
  const trimmed = replayed(schedule, window);
  expect(
    trimmed.replay.mismatches.map((m) => m.message),
    `trimmed from ${middle} ms${context}`,
  ).toEqual([]);
  expect(trimmed.store, `trimmed from ${middle} ms${context}`).toEqual(run.store);
}

describe('record, then replay in virtual time', () => {
  it('an informer replaying a recorded run emits the live run’s events and ends with its store', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Stalls need the harness to move the live clock, which a replay reproduces only through the recorded times.
        scheduleArb({ maxOperations: 20, maxFaults: 4 }),
        replaysAsRecorded,
      ),
      { numRuns: RUNS, endOnFailure: true, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  }, 150_000);

  it('the check can fail: a replay of a trace that lost one watch event differs from the live run', async () => {
    const schedule: Schedule = {
      config: {
        kind: 'configmaps',
        namespace: undefined,
        watchList: false,
        serverWatchList: true,
        pageSize: 2,
        historyLimit: 10,
        initial: [],
        lateJoinAt: 0,
        seed: 1,
      },
      steps: [
        { op: 'write', ns: 'default', name: 'a' },
        { op: 'write', ns: 'default', name: 'b' },
        { op: 'sleep', ms: 20 },
      ],
    };
    const run = await live(schedule);
    const lost = run.trace.lines.findIndex((l) => l.type === 'event' && l.event.type === 'ADDED');
    expect(lost).toBeGreaterThanOrEqual(0);
    const tampered: Trace = { ...run.trace, lines: run.trace.lines.filter((_, i) => i !== lost) };
    expect(replayed(schedule, tampered).events).not.toEqual(run.events);
    expect(replayed(schedule, run.trace).events).toEqual(run.events);
  }, 60_000);
});
