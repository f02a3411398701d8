/**
 * scheduleAfter: timers past Node's 2^31−1 ms are chained, never fired at once (fake timers emulate the overflow).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Subject, asyncScheduler } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { MAX_TIMER_DELAY_MS, scheduleAfter } from '../../src/util/scheduleAfter.ts';
import { traceWriter } from '../../src/1-transport/trace/writer.ts';
import { replayListWatch } from '../../src/testing/replayListWatch.ts';
import { resync } from '../../src/3-deltas/resync.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import type { KubeObject } from '../../src/0-model/objects.ts';

const DAY = 24 * 3_600_000;

afterEach(() => {
  vi.useRealTimers();
});

describe('scheduleAfter', () => {
  it('runs work once, at its time, however long the delay (asyncScheduler under fake timers)', () => {
    vi.useFakeTimers();
    const ran: number[] = [];
    const start = Date.now();
    scheduleAfter(asyncScheduler, () => ran.push(Date.now() - start), 30 * DAY);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(ran).toEqual([]);
    vi.advanceTimersByTime(30 * DAY - MAX_TIMER_DELAY_MS - 1);
    expect(ran).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ran).toEqual([30 * DAY]);
    vi.advanceTimersByTime(100 * DAY);
    expect(ran).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('unsubscribing cancels it in any part of the chain; ≤ 0 and NaN are now, Infinity never', () => {
    vi.useFakeTimers();
    const ran: string[] = [];
    const long = scheduleAfter(asyncScheduler, () => ran.push('long'), 60 * DAY);
    vi.advanceTimersByTime(40 * DAY);
    long.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
    scheduleAfter(asyncScheduler, () => ran.push('negative'), -5);
    scheduleAfter(asyncScheduler, () => ran.push('NaN'), Number.NaN);
    const never = scheduleAfter(asyncScheduler, () => ran.push('never'), Infinity);
    vi.advanceTimersByTime(1000 * DAY);
    expect(ran).toEqual(['negative', 'NaN']);
    never.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('in virtual time, the same', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.maxFrames = Infinity;
    const ran: number[] = [];
    scheduleAfter(scheduler, () => ran.push(scheduler.now()), 3 * MAX_TIMER_DELAY_MS + 7);
    scheduler.flush();
    expect(ran).toEqual([3 * MAX_TIMER_DELAY_MS + 7]);
  });
});

describe('its users, at their default clock (asyncScheduler) under fake timers', () => {
  it('traceWriter: a durationMs of 30 days stops after 30 days, not at once', () => {
    vi.useFakeTimers();
    const writer = traceWriter({ write: () => undefined, resources: ['pods'], durationMs: 30 * DAY });
    vi.advanceTimersByTime(29 * DAY);
    expect(writer.stopped).toBeUndefined();
    vi.advanceTimersByTime(DAY);
    expect(writer.stopped).toBe('duration');
  });

  it('resync: a resyncPeriod of 30 days ticks every 30 days, not every millisecond', () => {
    vi.useFakeTimers();
    const source = new Subject<SourceEvent<KubeObject>>();
    const ticks: number[] = [];
    const start = Date.now();
    const sub = source.pipe(resync<KubeObject>(30 * DAY)).subscribe((e) => void (e.type === 'resync' && ticks.push(Date.now() - start)));
    source.next({ type: 'replace', items: [], resourceVersion: '1' });
    vi.advanceTimersByTime(1000); // (a timer Node overflows would have ticked 1000 times by now)
    expect(ticks).toEqual([]);
    vi.advanceTimersByTime(30 * DAY - 1001);
    expect(ticks).toEqual([]);
    vi.advanceTimersByTime(30 * DAY + 1);
    expect(ticks).toEqual([30 * DAY, 60 * DAY]);
    sub.unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('replayListWatch: a line 30 days after the one before it comes 30 days later, not at once', () => {
    vi.useFakeTimers();
    const pod = { metadata: { name: 'a', namespace: 'default', resourceVersion: '11' } };
    const trace = [
      {
        type: 'header',
        format: 'rx-informer-trace',
        version: 1,
        startedAt: '2026-01-01T00:00:00.000Z',
        resources: ['pods'],
        redacted: true,
      },
      { type: 'watch', at: 0, id: 0, options: { resourceVersion: '10' } },
      { type: 'event', at: 30 * DAY, id: 0, event: { type: 'ADDED', object: pod } },
    ]
      .map((line) => `${JSON.stringify(line)}\n`)
      .join('');
    const seen: string[] = [];
    const watching = replayListWatch(trace)
      .watch({ resourceVersion: '10' })
      .subscribe((frame) => seen.push('type' in frame ? frame.type : frame.reason));
    vi.advanceTimersByTime(29 * DAY);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(DAY);
    expect(seen).toEqual(['ADDED']);
    watching.unsubscribe();
  });
});
