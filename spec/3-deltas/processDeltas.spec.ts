import { afterEach, describe, expect, it } from 'vitest';
import { Observable, Subject, config, of, take, type ObservableInput } from 'rxjs';
import { type KubeObject } from '../../src/index.ts';
import { DeltaQueue, processDeltas, type Deltas, type FifoOutput } from '../../src/pipeline.ts';

type Obj = KubeObject;
const o = (name: string, rv = '1'): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });

function bigBatch(n: number): FifoOutput<Obj> {
  return {
    type: 'deltas',
    cause: 'replace',
    resourceVersion: '1',
    items: Array.from({ length: n }, (_, i) => ({
      key: `ns/k${i}`,
      deltas: [{ type: 'Replaced' as const, object: o(`k${i}`) }],
      isInInitialList: true,
    })),
  };
}

const previous = config.onUnhandledError;
afterEach(() => {
  config.onUnhandledError = previous;
});

/** Runs a synchronous handler over one batch of n keys; counts what was handled and what rxjs had to report as unhandled. */
async function runSync(n: number, handler: (entry: Deltas<Obj>) => ObservableInput<string>) {
  const unhandled: unknown[] = [];
  config.onUnhandledError = (error) => unhandled.push(error);
  const handled: string[] = [];
  let completed = false;
  let failed: unknown;
  of(bigBatch(n))
    .pipe(processDeltas(handler))
    .subscribe({ next: (v) => handled.push(v), error: (e: unknown) => (failed = e), complete: () => (completed = true) });
  await new Promise((resolve) => setTimeout(resolve, 50)); // rxjs reports unhandled errors on a timer
  return { handled, completed, failed, unhandled };
}

describe('processDeltas with a synchronous handler', () => {
  it('handles every key of a small batch, in order, and completes', async () => {
    const { handled, completed, unhandled } = await runSync(50, (entry) => [entry.key]);
    expect(handled).toEqual(Array.from({ length: 50 }, (_, i) => `ns/k${i}`));
    expect(completed).toBe(true);
    expect(unhandled).toEqual([]);
  });

  it('BUG: handles every key of a large batch (a big initial list) without overflowing the stack', async () => {
    // processDeltas.ts pump(): a handler that completes synchronously calls pump() again from its complete
    // callback, so the recursion depth grows with the backlog; past a few thousand keys the stack overflows,
    // rxjs reports the RangeError as unhandled (or it is lost) and those keys’ deltas are silently dropped.
    const n = 20_000;
    const { handled, completed, failed, unhandled } = await runSync(n, (entry) => of(entry.key));
    expect(handled.length).toBe(n);
    expect(unhandled).toEqual([]);
    expect(failed).toBeUndefined();
    expect(completed).toBe(true);
  });

  it('a handler value that feeds the source again (re-entrantly) queues the new key: handlers never nest', () => {
    const source = new Subject<FifoOutput<Obj>>();
    const calls: string[] = [];
    let depth = 0;
    const one = (name: string): FifoOutput<Obj> => ({
      type: 'deltas',
      cause: 'event',
      items: [{ key: `ns/${name}`, deltas: [{ type: 'Added', object: o(name) }], isInInitialList: false }],
    });
    source
      .pipe(
        processDeltas<Obj, string>(
          (entry) =>
            new Observable<string>((subscriber) => {
              depth++;
              calls.push(`${entry.key} at depth ${depth}`);
              subscriber.next(entry.key);
              depth--;
              subscriber.complete();
            }),
        ),
      )
      .subscribe((key) => {
        if (key === 'ns/a') source.next(one('b'));
      });
    source.next(one('a'));
    expect(calls).toEqual(['ns/a at depth 1', 'ns/b at depth 1']);
  });
});

describe('DeltaQueue', () => {
  it('queues each key once, in first-arrival order, accumulating its deltas', () => {
    const q = new DeltaQueue<Obj>();
    q.add('a', { type: 'Added', object: o('a', '1') }, false);
    q.add('b', { type: 'Added', object: o('b', '2') }, false);
    q.add('a', { type: 'Updated', object: o('a', '3') }, false);
    expect(q.size).toBe(2);
    expect([...q.keys()]).toEqual(['a', 'b']);
    expect(q.peek('a')?.map((d) => d.type)).toEqual(['Added', 'Updated']);
    expect(q.pop()).toEqual({
      key: 'a',
      deltas: [
        { type: 'Added', object: o('a', '1') },
        { type: 'Updated', object: o('a', '3') },
      ],
      isInInitialList: false,
    });
    expect(q.has('a')).toBe(false);
    q.add('a', { type: 'Deleted', object: o('a', '4') }, false);
    expect([...q.keys()]).toEqual(['b', 'a']);
    expect(q.pop()?.key).toBe('b');
    expect(q.pop()?.key).toBe('a');
    expect(q.pop()).toBeUndefined();
  });

  it('dedups consecutive deletes as client-go: the older is kept unless it is only a tombstone', () => {
    const real = o('a', '5');
    const tombstone = { finalStateUnknown: true as const, key: 'ns/a', object: o('a', '4') };
    const q = new DeltaQueue<Obj>();
    q.add('a', { type: 'Deleted', object: tombstone }, false);
    q.add('a', { type: 'Deleted', object: real }, false);
    expect(q.peek('a')).toEqual([{ type: 'Deleted', object: real }]);
    q.add('a', { type: 'Deleted', object: tombstone }, false);
    q.add('a', { type: 'Deleted', object: o('a', '6') }, false);
    expect(q.peek('a')).toEqual([{ type: 'Deleted', object: real }]);
    // not consecutive: both kept
    q.add('a', { type: 'Added', object: o('a', '7') }, false);
    q.add('a', { type: 'Deleted', object: o('a', '8') }, false);
    expect(q.peek('a')?.map((d) => d.type)).toEqual(['Deleted', 'Added', 'Deleted']);
  });

  it('an entry is in the initial list only if all its deltas were', () => {
    const q = new DeltaQueue<Obj>();
    q.add('a', { type: 'Replaced', object: o('a') }, true);
    q.add('a', { type: 'Updated', object: o('a', '2') }, false);
    q.add('b', { type: 'Replaced', object: o('b') }, true);
    expect(q.pop()?.isInInitialList).toBe(false);
    expect(q.pop()?.isInInitialList).toBe(true);
  });

  it('addAll merges a whole entry', () => {
    const q = new DeltaQueue<Obj>();
    q.add('a', { type: 'Added', object: o('a', '1') }, false);
    q.addAll({
      key: 'a',
      deltas: [
        { type: 'Updated', object: o('a', '2') },
        { type: 'Deleted', object: o('a', '3') },
      ],
      isInInitialList: false,
    });
    expect(q.peek('a')?.map((d) => d.type)).toEqual(['Added', 'Updated', 'Deleted']);
  });
});

describe('processDeltas: a subscriber that leaves from inside the stream', () => {
  it('take(1) over a five-key relist with a synchronous handler: one handler call, not five', () => {
    const calls: string[] = [];
    const got: string[] = [];
    of(bigBatch(5))
      .pipe(
        processDeltas((entry: Deltas<Obj>) => {
          calls.push(entry.key);
          return of(entry.key);
        }),
        take(1),
      )
      .subscribe((key) => got.push(key));
    expect(got).toEqual(['ns/k0']);
    expect(calls).toEqual(['ns/k0']);
  });

  it('take(1) with a handler that emits and keeps working: that handler is unsubscribed, no other starts', () => {
    const source = new Subject<FifoOutput<Obj>>();
    const calls: string[] = [];
    let running = 0;
    const got: string[] = [];
    source
      .pipe(
        processDeltas(
          (entry: Deltas<Obj>) =>
            new Observable<string>((subscriber) => {
              calls.push(entry.key);
              running++;
              subscriber.next(entry.key);
              return () => running--;
            }),
        ),
        take(1),
      )
      .subscribe((key) => got.push(key));
    source.next(bigBatch(3));
    expect(got).toEqual(['ns/k0']);
    expect(calls).toEqual(['ns/k0']);
    expect(running).toBe(0);
    expect(source.observed).toBe(false);
  });
});
