import { EMPTY, finalize, NEVER, of, Subject, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createWorkQueue, WorkQueueError, type WorkEvent, type WorkQueueMetricEvent } from '../../src/workqueue/index.ts';
import { caught, getNow, NOTHING, take } from './helpers.ts';

describe('WorkQueue basics', () => {
  it('hands items out FIFO', () => {
    const q = createWorkQueue<string>();
    for (const k of ['c', 'a', 'b']) q.add(k);
    expect(q.length).toBe(3);
    expect([take(q), take(q), take(q)]).toEqual(['c', 'a', 'b']);
    expect(q.length).toBe(0);
  });

  it('queues an item at most once while it is waiting (dirty set)', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(take(q)).toBe('a');
    expect(take(q)).toBe('b');
    expect(getNow(q.get()).value).toBe(NOTHING);
  });

  it('re-queues an item added during processing only when it is done', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    expect(take(q)).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.length).toBe(0);
    expect(getNow(q.get()).value).toBe(NOTHING);
    q.add('b');
    expect(take(q)).toBe('b');
    q.done('a');
    expect(q.length).toBe(1);
    expect(take(q)).toBe('a');
    q.done('a');
    expect(q.length).toBe(0);
  });

  it('does not re-queue a finished item that was not added again', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    take(q);
    q.done('a');
    expect(q.length).toBe(0);
    expect(q.sizes()).toMatchObject({ dirty: 0, processing: 0 });
  });

  it('ignores done for an item that is not being processed', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    q.done('a');
    q.done('zzz');
    expect(q.length).toBe(1);
    expect(take(q)).toBe('a');
    expect(getNow(q.get()).value).toBe(NOTHING);
  });

  it('get() waits for the next add and takes nothing if unsubscribed first', () => {
    const q = createWorkQueue<string>();
    const got: string[] = [];
    let completed = false;
    q.get().subscribe({ next: (k) => got.push(k), complete: () => (completed = true) });
    const abandoned = q.get().subscribe(() => got.push('abandoned'));
    abandoned.unsubscribe();
    expect(q.sizes().waitingGets).toBe(1);
    q.add('a');
    q.add('b');
    expect(got).toEqual(['a']);
    expect(completed).toBe(true);
    expect(q.length).toBe(1);
    expect(q.sizes().waitingGets).toBe(0);
  });

  it('serves waiting getters in subscription order', () => {
    const q = createWorkQueue<string>();
    const got: string[] = [];
    q.get().subscribe((k) => got.push(`1:${k}`));
    q.get().subscribe((k) => got.push(`2:${k}`));
    q.add('x');
    q.add('y');
    expect(got).toEqual(['1:x', '2:y']);
  });

  it('compares items with SameValueZero', () => {
    const q = createWorkQueue<number>();
    q.add(Number.NaN);
    q.add(Number.NaN);
    q.add(0);
    q.add(-0);
    expect(q.length).toBe(2);
  });
});

describe('WorkQueue shutdown', () => {
  it('completes pending gets, ignores adds, and drains queued items', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    q.add('b');
    take(q);
    let pendingCompleted = false;
    expect(q.shuttingDown).toBe(false);
    q.shutDown();
    expect(q.shuttingDown).toBe(true);
    q.add('c');
    expect(q.length).toBe(1);
    expect(take(q)).toBe('b');
    q.get().subscribe({ complete: () => (pendingCompleted = true) });
    expect(pendingCompleted).toBe(true);
    expect(getNow(q.get())).toEqual({ value: NOTHING, completed: true });
  });

  it('completes a get that was already waiting', () => {
    const q = createWorkQueue<string>();
    const seen: string[] = [];
    q.get().subscribe({ next: (k) => seen.push(k), complete: () => seen.push('|') });
    q.shutDown();
    expect(seen).toEqual(['|']);
  });

  it('still re-queues, at done, an item added before shutdown while in flight', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    take(q);
    q.add('a');
    q.shutDown();
    q.done('a');
    expect(take(q)).toBe('a');
  });

  it('shutDownWithDrain completes when in-flight items are done, not before', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    q.add('b');
    q.add('c');
    take(q);
    take(q);
    const events: string[] = [];
    q.shutDownWithDrain().subscribe({ next: () => events.push('drained'), complete: () => events.push('|') });
    q.add('d');
    q.done('a');
    expect(events).toEqual([]);
    q.done('b');
    expect(events).toEqual(['drained', '|']);
    expect(take(q)).toBe('c');
    expect(q.length).toBe(0);
  });

  it('shutDownWithDrain completes at once when nothing is in flight', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    let done = false;
    q.shutDownWithDrain().subscribe({ complete: () => (done = true) });
    expect(done).toBe(true);
  });

  it('a plain shutDown stops a drain wait', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    take(q);
    let done = false;
    q.shutDownWithDrain().subscribe({ complete: () => (done = true) });
    expect(done).toBe(false);
    q.shutDown();
    expect(done).toBe(true);
  });
});

describe('WorkQueue.process', () => {
  it('runs each item once, calls done, and completes after shutdown', () => {
    const q = createWorkQueue<string>();
    const events: Array<WorkEvent<string, string>> = [];
    let completed = false;
    q.process((k) => of(k.toUpperCase())).subscribe({ next: (e) => events.push(e), complete: () => (completed = true) });
    q.add('a');
    q.add('b');
    expect(events).toEqual([
      { type: 'value', item: 'a', value: 'A' },
      { type: 'done', item: 'a' },
      { type: 'value', item: 'b', value: 'B' },
      { type: 'done', item: 'b' },
    ]);
    expect(q.sizes()).toMatchObject({ processing: 0, dirty: 0, queued: 0 });
    expect(completed).toBe(false);
    q.shutDown();
    expect(completed).toBe(true);
  });

  it('reports worker errors (thrown or emitted) as data and keeps going', () => {
    const q = createWorkQueue<string>();
    const boom = new Error('boom');
    const events: Array<WorkEvent<string, never>> = [];
    q.process((k) => {
      if (k === 'throw') throw boom;
      return k === 'emit' ? throwError(() => boom) : EMPTY;
    }).subscribe((e) => events.push(e));
    q.add('throw');
    q.add('emit');
    q.add('ok');
    expect(events).toEqual([
      { type: 'error', item: 'throw', error: { reason: 'WorkerFailed', cause: boom } },
      { type: 'error', item: 'emit', error: { reason: 'WorkerFailed', cause: boom } },
      { type: 'done', item: 'ok' },
    ]);
    expect(q.sizes().processing).toBe(0);
  });

  it('never runs an item concurrently with itself, even with free workers', () => {
    const q = createWorkQueue<string>();
    const gates = new Map<string, Subject<void>>();
    const started: string[] = [];
    q.process((k) => {
      started.push(k);
      const gate = new Subject<void>();
      gates.set(k, gate);
      return gate;
    }, 3).subscribe();
    q.add('a');
    q.add('a');
    expect(started).toEqual(['a']);
    q.add('b');
    expect(started).toEqual(['a', 'b']);
    gates.get('a')?.complete();
    expect(started).toEqual(['a', 'b', 'a']);
  });

  it('takes an item only when a worker slot is free', () => {
    const q = createWorkQueue<string>();
    const gates: Array<Subject<void>> = [];
    q.process(() => {
      const gate = new Subject<void>();
      gates.push(gate);
      return gate;
    }, 2).subscribe();
    for (const k of ['a', 'b', 'c', 'd']) q.add(k);
    expect(gates).toHaveLength(2);
    expect(q.length).toBe(2);
    gates[0]?.complete();
    expect(gates).toHaveLength(3);
    expect(q.length).toBe(1);
  });

  it('handles many synchronous items without deep recursion', () => {
    const q = createWorkQueue<number>();
    for (let i = 0; i < 50_000; i += 1) q.add(i);
    let count = 0;
    q.process(() => EMPTY, 4).subscribe(() => (count += 1));
    expect(count).toBe(50_000);
    q.add(-1);
    expect(count).toBe(50_001);
  });

  it('on unsubscribe, cancels in-flight work and re-queues those items', () => {
    const q = createWorkQueue<string>();
    const subscription = q.process(() => NEVER, 2).subscribe();
    q.add('a');
    q.add('b');
    q.add('c');
    expect(q.sizes()).toMatchObject({ processing: 2, queued: 1 });
    subscription.unsubscribe();
    expect(q.sizes()).toMatchObject({ processing: 0, queued: 3, waitingGets: 0 });
    expect([take(q), take(q), take(q)]).toEqual(['c', 'a', 'b']);
  });

  it("lets the worker's own finalize run before the item can start again", () => {
    const q = createWorkQueue<string>();
    const log: string[] = [];
    const gates: Array<Subject<void>> = [];
    q.process((k) => {
      log.push(`start:${k}`);
      const gate = new Subject<void>();
      gates.push(gate);
      return gate.pipe(finalize(() => log.push(`cleanup:${k}`)));
    }).subscribe((e) => log.push(`${e.type}:${e.item}`));
    q.add('a');
    q.add('a');
    gates[0]?.complete();
    expect(log).toEqual(['start:a', 'cleanup:a', 'done:a', 'start:a']);
  });

  it('emits done/error while the item is still held, so a re-add there queues it again', () => {
    const q = createWorkQueue<string>();
    const starts: string[] = [];
    let failures = 0;
    q.process((k) => {
      starts.push(k);
      return starts.length < 3 ? throwError(() => new Error('retry me')) : EMPTY;
    }).subscribe((e) => {
      if (e.type === 'error') {
        failures += 1;
        q.add(e.item);
      }
    });
    q.add('a');
    expect(starts).toEqual(['a', 'a', 'a']);
    expect(failures).toBe(2);
    expect(q.sizes()).toMatchObject({ processing: 0, dirty: 0, queued: 0 });
  });

  it('unsubscribing from inside a done event does not re-queue the finished item', () => {
    const q = createWorkQueue<string>();
    const subscription = q
      .process(() => EMPTY)
      .subscribe((e) => {
        if (e.type === 'done') subscription.unsubscribe();
      });
    q.add('a');
    q.add('b');
    expect(q.sizes()).toMatchObject({ processing: 0, queued: 1, dirty: 1, waitingGets: 0 });
    expect(take(q)).toBe('b');
  });

  it('rejects a bad concurrency with a typed error', () => {
    const q = createWorkQueue<string>();
    expect(() => q.process(() => EMPTY, 0)).toThrow(WorkQueueError);
    expect(caught(() => q.process(() => EMPTY, 1.5))).toMatchObject({ reason: 'InvalidArgument' });
  });

  it('after shutdown keeps processing what was queued, then completes', () => {
    const q = createWorkQueue<string>();
    q.add('a');
    q.add('b');
    q.shutDown();
    const seen: string[] = [];
    q.process((k) => of(k), 2).subscribe({ next: (e) => seen.push(`${e.type}:${e.item}`), complete: () => seen.push('|') });
    expect(seen).toEqual(['value:a', 'done:a', 'value:b', 'done:b', '|']);
  });
});

describe('WorkQueue metrics', () => {
  it('counts adds and depth like client-go and emits events', () => {
    const q = createWorkQueue<string>({ name: 'q1' });
    const events: Array<WorkQueueMetricEvent<string>> = [];
    q.metrics$.subscribe((e) => events.push(e));
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.metrics()).toMatchObject({ name: 'q1', depth: 2, addsTotal: 2 });
    take(q);
    q.add('a');
    expect(q.metrics()).toMatchObject({ depth: 2, addsTotal: 3 });
    q.done('a');
    expect(q.metrics()).toMatchObject({ depth: 2 });
    expect(events.map((e) => `${e.type}:${e.item}`)).toEqual(['add:a', 'add:b', 'get:a', 'add:a', 'done:a']);
    expect(events[2]).toMatchObject({ type: 'get', depth: 1, name: 'q1' });
  });

  it('releases per-item state after done', () => {
    const q = createWorkQueue<string>();
    q.process(() => EMPTY).subscribe();
    for (let i = 0; i < 1000; i += 1) q.add(`item-${i}`);
    expect(q.sizes()).toEqual({ queued: 0, dirty: 0, processing: 0, delayed: 0, waitingGets: 1, metricsEntries: 0 });
    expect(q.metrics()).toMatchObject({ addsTotal: 1000, depth: 0 });
    expect(q.metrics().workDurationSeconds.count).toBe(1000);
  });
});
