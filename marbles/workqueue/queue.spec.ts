import { map, ReplaySubject, Subject, timer } from 'rxjs';
import { describe, it } from 'vitest';
import { createWorkQueue } from '../../src/workqueue/index.ts';
import { finished, testScheduler } from './helpers.ts';

describe('WorkQueue in virtual time', () => {
  it('get() emits when an item is added, then completes', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      ts.schedule(() => q.add('a'), 7);
      expectObservable(q.get()).toBe('7ms (a|)');
    });
  });

  it('get() completes empty when the queue shuts down', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      ts.schedule(() => q.shutDown(), 5);
      expectObservable(q.get()).toBe('5ms |');
    });
  });

  it('runs at most `concurrency` workers, taking items as slots free up', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      const values = q.process((k) => timer(10, ts).pipe(map(() => k.toUpperCase())), 2);
      for (const k of ['a', 'b', 'c', 'd', 'e']) q.add(k);
      ts.schedule(() => q.shutDown(), 25);
      expectObservable(finished(values)).toBe('10ms (ab) 6ms (cd) 6ms (e|)');
    });
  });

  it('re-runs an item added during its processing only after it is done', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      const starts = new Subject<string>();
      const events = q.process((k) => {
        starts.next(k);
        return timer(10, ts);
      }, 2);
      expectObservable(starts).toBe('a 2ms b 6ms a');
      expectObservable(finished(events)).toBe('10ms a 2ms b 6ms a');
      q.add('a');
      ts.schedule(() => q.add('a'), 3);
      ts.schedule(() => q.add('b'), 3);
    });
  });

  it('shutDownWithDrain completes when the last in-flight item is done; later adds are ignored', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      const durations: Record<string, number> = { a: 30, b: 50, c: 5 };
      const events = q.process((k) => timer(durations[k] ?? 0, ts), 2);
      const drained = new ReplaySubject<void>();
      q.add('a');
      q.add('b');
      ts.schedule(() => q.shutDownWithDrain().subscribe(drained), 10);
      ts.schedule(() => q.add('c'), 20);
      expectObservable(drained).toBe('50ms (x|)', { x: undefined });
      expectObservable(finished(events)).toBe('30ms a 19ms (b|)');
    });
  });

  it('after shutDown, queued items still drain through the workers', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      const events = q.process(() => timer(10, ts));
      q.add('a');
      q.add('b');
      ts.schedule(() => q.shutDown(), 1);
      expectObservable(finished(events)).toBe('10ms a 9ms (b|)');
    });
  });

  it('measures queue and work durations and in-flight time on the scheduler clock', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts, name: 'm' });
      const metricEvents = q.metrics$.pipe(map((e) => `${e.type}:${e.item}`));
      const snapshots = new ReplaySubject<unknown>();
      expectObservable(metricEvents).toBe('(AGB) 10ms (DH) 11ms E', {
        A: 'add:a',
        B: 'add:b',
        G: 'get:a',
        D: 'done:a',
        H: 'get:b',
        E: 'done:b',
      });
      // Frame-0 work is scheduled so that expectObservable has subscribed to the hot metrics$.
      ts.schedule(() => {
        q.process(() => timer(15, ts)).subscribe();
        q.add('a');
        q.add('b');
      }, 0);
      ts.schedule(() => {
        const m = q.metrics();
        snapshots.next({
          depth: m.depth,
          queue: m.queueDurationSeconds,
          work: m.workDurationSeconds,
          unfinished: m.unfinishedWorkSeconds,
          longest: m.longestRunningProcessorSeconds,
        });
        snapshots.complete();
      }, 20);
      expectObservable(snapshots).toBe('20ms (s|)', {
        s: {
          depth: 0,
          queue: { count: 2, sumSeconds: 0.015 },
          work: { count: 1, sumSeconds: 0.015 },
          unfinished: 0.005,
          longest: 0.005,
        },
      });
    });
  });
});
