/**
 * A step of the wall clock (an NTP step, `date -s`, a VM's clock set on resume) moves no duration (review audit18).
 * Every duration and deadline is measured on the default scheduler's clock, a monotonic one (src/util/monotonicNow.ts),
 * as client-go's Go times carry a monotonic reading; only times written for others to read stay `Date.now()`'s.
 * Virtual time: vitest's fake timers fake the timers, `Date` and `performance`; `vi.setSystemTime` steps `Date` alone,
 * as a wall-clock step does. Each row runs at the defaults (no scheduler given).
 */
import { NEVER, Subject, asyncScheduler, mergeMap, of, throwError, timer, type SchedulerLike } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { KubeObject } from '../../src/0-model/objects.ts';
import { readTrace } from '../../src/1-transport/trace/format.ts';
import { traceWriter } from '../../src/1-transport/trace/writer.ts';
import { decoder } from '../../src/2-source/decode.ts';
import { listAndWatch } from '../../src/2-source/listAndWatch.ts';
import { HandlerMetricsRecorder } from '../../src/5-informer/handleEvents.ts';
import { informerHealth, readiness, type HealthInput, type InformerHealth } from '../../src/5-informer/health.ts';
import { informerMetrics$ } from '../../src/metrics/informerMetrics.ts';
import { fakeListWatch, httpFailure, listPage } from '../../src/testing/fakeListWatch.ts';
import { fakeResource } from '../../src/testing/index.ts';
import { createDelayingQueue } from '../../src/workqueue/delayingQueue.ts';
import { WorkQueue } from '../../src/workqueue/workQueue.ts';

const FAKED = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] as const;
const HOUR = 3_600_000;

afterEach(() => {
  vi.useRealTimers();
});

function fake(): () => number {
  vi.useFakeTimers({ toFake: [...FAKED], now: Date.UTC(2026, 10, 28) });
  const t0 = performance.now();
  return () => Math.round(performance.now() - t0);
}

describe('the reflector', () => {
  /** A silent watch (accepted, never answered): when each watch was opened, by the monotonic clock. */
  function silentWatchesOpened(stepMs: number): number[] {
    const elapsed = fake();
    const times: number[] = [];
    const watches = Array.from({ length: 200 }, () => () => {
      times.push(elapsed());
      return NEVER;
    });
    const sub = listAndWatch(fakeListWatch({ lists: [of(listPage('10', []))], watches }), {
      decode: decoder(KubeObject),
      random: () => 0,
    }).subscribe();
    vi.advanceTimersByTime(10_000);
    vi.setSystemTime(Date.now() + stepMs);
    vi.advanceTimersByTime(2 * HOUR);
    sub.unsubscribe();
    return times;
  }

  it.each([
    ['no step', 0],
    ['the wall clock stepped back an hour at 10 s', -HOUR],
    ['the wall clock stepped forward an hour at 10 s', HOUR],
  ])('%s: a silent watch is resumed every 60 s (the idle rule)', (_, step) => {
    // Was: stepped back, resumed at 3 660 001 (the deadline an hour in the wall clock's future).
    expect(silentWatchesOpened(step).slice(0, 3)).toEqual([0, 60_001, 120_002]);
  });

  /**
   * Six lists fail (the backoff grows to 25.6 s), the seventh answers; three silent watches are resumed by the idle
   * rule (no progress: the backoff is not reset), the fourth fails at once. Its wait, 2 min after the last failure, is
   * the first again (client-go's 2-minute quiet period) however the wall clock stepped meanwhile.
   */
  function waitAfterQuietPeriod(stepMs: number): number {
    const elapsed = fake();
    const calls: number[] = [];
    const failing = () => {
      calls.push(elapsed());
      return throwError(() => httpFailure(500, 'list'));
    };
    const silent = () => {
      calls.push(elapsed());
      return NEVER;
    };
    const lists = [...Array.from({ length: 6 }, () => failing), () => (calls.push(elapsed()), of(listPage('10', [])))];
    const fails = () => (calls.push(elapsed()), timer(0).pipe(mergeMap(() => throwError(() => httpFailure(500)))));
    const watches = [silent, silent, silent, fails, silent];
    const sub = listAndWatch(fakeListWatch({ lists, watches }), { decode: decoder(KubeObject), random: () => 0 }).subscribe();
    vi.advanceTimersByTime(60_000);
    vi.setSystemTime(Date.now() + stepMs);
    vi.advanceTimersByTime(10 * 60_000);
    sub.unsubscribe();
    expect(calls).toHaveLength(12);
    return calls[11]! - calls[10]!;
  }

  it.each([
    ['no step', 0],
    ['the wall clock stepped back an hour', -HOUR],
  ])('%s: a failure 2 min after the last starts the backoff over (800 ms)', (_, step) => {
    // Was: stepped back, 30 000 (the quiet period measured on the wall clock, an hour short).
    expect(waitAfterQuietPeriod(step)).toBe(1 + 800); // the watch fails a tick after it opens, then waits 800 ms
  });
});

describe('the delaying work queue', () => {
  function taken(stepMs: number): string[] {
    const elapsed = fake();
    const q = createDelayingQueue<string>();
    const got: string[] = [];
    const take = (): void => {
      q.get().subscribe((k) => {
        got.push(`${k}@${elapsed()}`);
        q.done(k);
        take();
      });
    };
    take();
    q.addAfter('soon', 5_000);
    q.addAfter('later', 1_800_000);
    vi.advanceTimersByTime(1_000);
    vi.setSystemTime(Date.now() + stepMs);
    vi.advanceTimersByTime(2 * HOUR);
    q.shutDown();
    return got;
  }

  it.each([
    ['no step', 0],
    ['the wall clock stepped back an hour', -HOUR], // was: soon@3605000, later@5400000
    ['the wall clock stepped forward an hour', HOUR], // was: later@5000, with the 5 s one
  ])('%s: each item is ready when its delay is up', (_, step) => {
    expect(taken(step)).toEqual(['soon@5000', 'later@1800000']);
  });
});

describe('readiness', () => {
  /** An informer synced, then failing every request for 3 minutes of real time; the wall clock stepped by `stepMs`. */
  function verdict(stepMs: number): { readonly ready: boolean } {
    fake();
    const state$ = new Subject<HealthInput>();
    let latest: InformerHealth | undefined;
    informerHealth('pods', state$ as never).subscribe((h) => (latest = h));
    state$.next({ step: 'replace', synced: true, resourceVersion: '1', errors: [] });
    const failure = new InformerError('ServerError', 'HTTP 503', { phase: 'watch', status: 503 });
    state$.next({ step: 'error', synced: true, resourceVersion: '1', errors: [failure] });
    vi.setSystemTime(Date.now() + stepMs);
    vi.advanceTimersByTime(180_000);
    return readiness([latest!]);
  }

  it.each([
    ['no step', 0],
    ['the wall clock stepped back an hour', -HOUR], // was: ready (failingSince 57 minutes in the future)
  ])('%s: failing for 3 minutes is stale, not ready', (_, step) => {
    expect(verdict(step).ready).toBe(false);
  });
});

describe('a trace recording', () => {
  it('across a wall-clock step back of 1 s still reads, its times as they passed', () => {
    const elapsed = fake();
    let text = '';
    const w = traceWriter({ write: (t) => (text += t), resources: ['pods'] });
    const id = w.nextId();
    w.line({ type: 'watch', id, options: { resourceVersion: '1', allowWatchBookmarks: true, timeoutSeconds: 300 } } as never);
    vi.advanceTimersByTime(5_000);
    w.eventLine(id, '{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"2"}}}');
    vi.setSystemTime(Date.now() - 1_000);
    vi.advanceTimersByTime(100);
    w.eventLine(id, '{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"3"}}}');
    w.close();
    expect(elapsed()).toBe(5_100);
    // Was: TraceFormatError, time goes backwards (4 100 ms after 5 000 ms).
    const ats = readTrace(text).lines.map((l) => `${l.type}@${'at' in l ? l.at : '-'}`);
    expect(ats).toEqual(['watch@0', 'event@5000', 'event@5100', 'stop@5100']);
  });
});

describe('metric durations', () => {
  /** An item waits 1 s, runs 0.5 s; the wall clock steps back an hour in each. */
  function queueMetrics(options: { readonly scheduler?: SchedulerLike } = {}) {
    fake();
    const q = new WorkQueue<string>(options);
    q.add('a');
    vi.advanceTimersByTime(1_000);
    vi.setSystemTime(Date.now() - HOUR);
    q.get().subscribe();
    vi.advanceTimersByTime(500);
    const during = q.metrics();
    vi.setSystemTime(Date.now() - HOUR);
    q.done('a');
    return { during, after: q.metrics() };
  }

  it('at the defaults, a work queue times waits and work as they passed', () => {
    const { during, after } = queueMetrics();
    // Was: -3 599 and -3 599.5 (a summary's _sum going down reads as a counter reset to rate()).
    expect(during.unfinishedWorkSeconds).toBe(0.5);
    expect(after.queueDurationSeconds.sumSeconds).toBe(1);
    expect(after.workDurationSeconds.sumSeconds).toBe(0.5);
  });

  it('a scheduler given whose clock steps back (asyncScheduler: Date.now()): durations are 0, never below', () => {
    const { during, after } = queueMetrics({ scheduler: asyncScheduler });
    expect(during.unfinishedWorkSeconds).toBe(0.5); // both readings after the first step
    expect(after.queueDurationSeconds.sumSeconds).toBe(0);
    expect(after.workDurationSeconds.sumSeconds).toBe(0);
  });

  it("a handler's duration on a clock that steps back is 0, never below", () => {
    let now = 10_000;
    const handler = new HandlerMetricsRecorder(() => now);
    const startedAt = now;
    now -= HOUR;
    handler.observe(startedAt);
    expect(handler.snapshot().durationSeconds).toEqual({ count: 1, sumSeconds: 0 });
  });

  it("an informer's sync duration on a clock that steps back is 0, never below", () => {
    fake();
    const state$ = new Subject<unknown>();
    let synced: number | undefined;
    const informer = { state$, resource: fakeResource() } as unknown as Parameters<typeof informerMetrics$>[0];
    informerMetrics$(informer, asyncScheduler).subscribe((m) => (synced = m.syncDurationSeconds));
    vi.setSystemTime(Date.now() - HOUR);
    state$.next({ step: 'replace', synced: true, resourceVersion: '1', store: new Map(), events: [], errors: [] });
    expect(synced).toBe(0); // was: -3 600
  });
});
