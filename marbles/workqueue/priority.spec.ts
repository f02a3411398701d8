import { Subject, timer } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createRateLimitingQueue, createWorkQueue, itemExponentialFailureRateLimiter, LOW_PRIORITY } from '../../src/workqueue/index.ts';
import { finished, testScheduler } from './helpers.ts';

describe('priority WorkQueue in virtual time', () => {
  it('takes the highest priority first, FIFO within a priority', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      // one worker, 2 frames per item: a (low) is running when the rest arrive at frame 1
      const events = q.process(() => timer(2, ts));
      q.add('a', LOW_PRIORITY);
      ts.schedule(() => {
        q.add('b', LOW_PRIORITY);
        q.add('c');
        q.add('d', 5);
        q.add('e');
      }, 1);
      ts.schedule(() => q.shutDown(), 3);
      expectObservable(finished(events)).toBe('2ms a 1ms d 1ms c 1ms e 1ms (b|)');
    });
  });

  it('a queued item added again at a higher priority moves up, behind the items already there; a lower add changes nothing', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      const events = q.process(() => timer(2, ts));
      q.add('x'); // running 0..2 while the others queue
      ts.schedule(() => {
        q.add('a', LOW_PRIORITY);
        q.add('b', LOW_PRIORITY);
        q.add('c');
        q.add('b'); // raised: behind c, ahead of a
        q.add('c', LOW_PRIORITY); // lower: c keeps priority 0 and its place
      }, 1);
      ts.schedule(() => q.shutDown(), 3);
      expectObservable(finished(events)).toBe('2ms x 1ms c 1ms b 1ms (a|)');
    });
  });

  it('an item added while in flight is queued at done at the highest priority it was added at', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      const starts = new Subject<string>();
      const events = q.process((k) => {
        starts.next(k);
        return timer(4, ts);
      });
      q.add('a');
      ts.schedule(() => {
        q.add('b');
        q.add('a', LOW_PRIORITY);
        q.add('a', 1); // a, in flight, is now due again at priority 1: it overtakes b at done
      }, 1);
      expectObservable(starts).toBe('a 3ms a 3ms b');
      expectObservable(finished(events)).toBe('4ms a 3ms a 3ms b');
    });
  });

  it('the low item waits for the items queued before it plus the higher ones added while it waits, then runs', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createWorkQueue<string>({ scheduler: ts });
      const events = q.process(() => timer(3, ts));
      // at 0: a (priority 0) and l (low) queued; a runs 0..3. Higher items b and c arrive while l waits.
      q.add('a');
      q.add('l', LOW_PRIORITY);
      ts.schedule(() => q.add('b'), 2);
      ts.schedule(() => q.add('c'), 5);
      ts.schedule(() => q.shutDown(), 12);
      // l waited for 0 items queued before it (a was already running) plus b and c: the bound, 2, is reached.
      expectObservable(finished(events)).toBe('3ms a 2ms b 2ms c 2ms (l|)');
    });
  });

  it('addAfter and addRateLimited carry the priority; a delayed item keeps its earliest time and highest priority', () => {
    const ts = testScheduler();
    ts.run(({ expectObservable }) => {
      const q = createRateLimitingQueue<string>({ scheduler: ts, rateLimiter: itemExponentialFailureRateLimiter<string>(5, 1000) });
      const events = q.process((k) => timer(k === 'w' ? 10 : 1, ts));
      q.add('w'); // the worker is busy 0..10, so everything below is ready before it frees up
      ts.schedule(() => {
        q.addAfter('c', 2); // ready at 3, priority 0
        q.addAfter('a', 5, LOW_PRIORITY);
        q.addAfter('a', 3, 2); // the same pending add: ready at 4, priority 2
        q.addRateLimited('b', LOW_PRIORITY); // 5 ms: ready at 6
        q.addAfter('d', 2, 1); // ready at 3, priority 1
      }, 1);
      ts.schedule(() => q.shutDown(), 12);
      expectObservable(finished(events)).toBe('10ms w a d c (b|)');
    });
    expect(() => createWorkQueue<string>().add('x', Number.NaN)).toThrow(/priority must be a finite number/);
  });
});

describe('priority WorkQueue metrics', () => {
  it('depth by priority follows adds, raises and gets; a raise is not an add', () => {
    const q = createWorkQueue<string>();
    const events: string[] = [];
    q.metrics$.subscribe((e) => {
      if (e.type === 'add') events.push(`add:${e.item}@${e.priority}`);
      if (e.type === 'raise') events.push(`raise:${e.item}@${e.from}->${e.to}`);
      if (e.type === 'get') events.push(`get:${e.item}@${e.priority}`);
    });
    q.add('a', LOW_PRIORITY);
    q.add('b', LOW_PRIORITY);
    q.add('c');
    expect(q.metrics()).toMatchObject({
      depth: 3,
      addsTotal: 3,
      depthByPriority: [
        { priority: 0, depth: 1 },
        { priority: -100, depth: 2 },
      ],
    });
    q.add('b', 7);
    expect(q.metrics()).toMatchObject({
      depth: 3,
      addsTotal: 3,
      depthByPriority: [
        { priority: 7, depth: 1 },
        { priority: 0, depth: 1 },
        { priority: -100, depth: 1 },
      ],
    });
    q.get().subscribe();
    expect(q.metrics().depthByPriority).toEqual([
      { priority: 0, depth: 1 },
      { priority: -100, depth: 1 },
    ]);
    expect(q.priorityOf('b')).toBe(7); // in flight, taken at 7
    expect(q.priorityOf('a')).toBe(LOW_PRIORITY);
    expect(q.priorityOf('z')).toBeUndefined();
    expect(events).toEqual(['add:a@-100', 'add:b@-100', 'add:c@0', 'raise:b@-100->7', 'get:b@7']);
  });

  it('a run cancelled by unsubscribing process() is queued again at the priority it was taken at', () => {
    const q = createWorkQueue<string>();
    const running = q.process(() => new Subject<never>()).subscribe();
    q.add('a', LOW_PRIORITY);
    expect(q.sizes()).toMatchObject({ processing: 1, queued: 0 });
    q.add('b', 3);
    running.unsubscribe();
    expect(q.sizes()).toMatchObject({ processing: 0, queued: 2 });
    expect(q.priorityOf('a')).toBe(LOW_PRIORITY);
    expect(q.metrics().depthByPriority).toEqual([
      { priority: 3, depth: 1 },
      { priority: LOW_PRIORITY, depth: 1 },
    ]);
  });
});
