import { Observable, defer, from } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Holds } from '../../src/workqueue/holds.ts';
import { createWorkQueue, type Hold } from '../../src/workqueue/index.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Lets every promise already settled run its reactions (a macrotask later: no clock involved). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

/** A worker that takes 100 ms of (fake) time, counting how many of its runs overlap. */
function counting() {
  const seen = { starts: 0, running: 0, maxRunning: 0 };
  const body = async () => {
    seen.starts += 1;
    seen.running += 1;
    seen.maxRunning = Math.max(seen.maxRunning, seen.running);
    await sleep(100);
    seen.running -= 1;
  };
  return { seen, body };
}

describe('queue.process: a run cut by an unsubscribe keeps its item in flight until its promises settle (fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a promise worker: unsubscribed at 10 and processed again, the item waits for the first run (at 100), never twice at once', async () => {
    vi.useFakeTimers();
    const q = createWorkQueue<string>();
    const { seen, body } = counting();
    q.add('a');
    const first = q.process(() => body()).subscribe();
    await vi.advanceTimersByTimeAsync(10);
    first.unsubscribe(); // the key is queued again, but its promise runs on
    const second = q.process(() => body()).subscribe();
    await vi.advanceTimersByTimeAsync(10);
    expect(seen).toEqual({ starts: 1, running: 1, maxRunning: 1 });
    expect(q.sizes()).toMatchObject({ processing: 1, dirty: 1 });
    await vi.advanceTimersByTimeAsync(90); // 110: the first settled, the second run started
    expect(seen).toEqual({ starts: 2, running: 1, maxRunning: 1 });
    await vi.advanceTimersByTimeAsync(100);
    expect(seen).toEqual({ starts: 2, running: 0, maxRunning: 1 });
    expect(q.sizes()).toMatchObject({ processing: 0, dirty: 0 });
    second.unsubscribe();
  });

  it('an Observable worker that holds the promise it starts (from(hold(call()))): the same', async () => {
    vi.useFakeTimers();
    const q = createWorkQueue<string>();
    const { seen, body } = counting();
    q.add('a');
    const worker = (_item: string, hold: Hold) => defer(() => from(hold(body())));
    const first = q.process(worker).subscribe();
    await vi.advanceTimersByTimeAsync(10);
    first.unsubscribe();
    const second = q.process(worker).subscribe();
    await vi.advanceTimersByTimeAsync(50);
    expect(seen).toEqual({ starts: 1, running: 1, maxRunning: 1 });
    await vi.advanceTimersByTimeAsync(50);
    expect(seen).toEqual({ starts: 2, running: 1, maxRunning: 1 });
    second.unsubscribe();
  });

  it('a run that completes while a promise it holds still runs: the item is done only once that settles', async () => {
    vi.useFakeTimers();
    const q = createWorkQueue<string>();
    q.add('a');
    const subscription = q.process((_item, hold) => (hold(sleep(100)), [1])).subscribe();
    expect(q.sizes().processing).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(q.sizes().processing).toBe(0);
    subscription.unsubscribe();
  });

  it('an unsubscribe tears the run down before it gives its item back: a second process() starts it only after the teardown', () => {
    const q = createWorkQueue<string>();
    const log: string[] = [];
    let n = 0;
    const worker = (item: string) =>
      new Observable<never>(() => {
        const id = ++n;
        log.push(`start ${item}#${id}`);
        return () => log.push(`teardown ${item}#${id}`);
      });
    q.add('a');
    const first = q.process(worker).subscribe();
    const second = q.process(worker).subscribe(); // waits for a key
    first.unsubscribe();
    expect(log).toEqual(['start a#1', 'teardown a#1', 'start a#2']);
    second.unsubscribe();
  });
});

describe('queue.process: an async function* worker is held step by step (review audit38, fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('unsubscribed at 10 and processed again: the item waits for the step in flight, never twice at once; its finally runs', async () => {
    vi.useFakeTimers();
    const q = createWorkQueue<string>();
    const { seen, body } = counting();
    let finallies = 0;
    q.add('a');
    const worker = async function* () {
      try {
        await body();
        yield 'one';
        await body();
        yield 'two';
      } finally {
        finallies += 1;
      }
    };
    const first = q.process(worker).subscribe();
    await vi.advanceTimersByTimeAsync(10);
    first.unsubscribe(); // asked to return: its step in flight runs on until the next yield
    const second = q.process(worker).subscribe();
    await vi.advanceTimersByTimeAsync(50);
    expect(seen).toEqual({ starts: 1, running: 1, maxRunning: 1 });
    await vi.advanceTimersByTimeAsync(60); // 120: the first run's step ended at its yield, its finally ran; the second began
    expect(finallies).toBe(1);
    expect(seen).toEqual({ starts: 2, running: 1, maxRunning: 1 });
    await vi.advanceTimersByTimeAsync(300);
    expect(seen).toEqual({ starts: 3, running: 0, maxRunning: 1 });
    expect(finallies).toBe(2);
    second.unsubscribe();
  });
});

describe('Holds: an item stays in flight until every promise held settles, fulfilled or rejected (audit45)', () => {
  it('afterSettled runs only once the last of two held promises settled', async () => {
    const holds = new Holds();
    const a = deferred();
    const b = deferred();
    holds.hold(a.promise);
    holds.hold(b.promise);
    const ran: string[] = [];
    holds.afterSettled(() => ran.push('done'));
    a.resolve();
    await flush();
    expect(ran).toEqual([]); // b still runs: the item must stay in flight
    b.resolve();
    await flush();
    expect(ran).toEqual(['done']);
  });

  it('a held promise that rejects settles its hold', async () => {
    const holds = new Holds();
    const rejected = Promise.reject(new Error('boom'));
    rejected.catch(() => undefined); // the rejection is the caller's to handle; Holds only waits for it
    holds.hold(rejected);
    const ran: string[] = [];
    holds.afterSettled(() => ran.push('done'));
    await flush();
    expect(ran).toEqual(['done']);
  });

  it('queue.process: an item whose promise worker rejected is done, and is processed again when added again', async () => {
    const q = createWorkQueue<string>();
    const runs: string[] = [];
    const events: string[] = [];
    const subscription = q
      .process(async (item) => {
        runs.push(item);
        if (runs.length === 1) throw new Error('boom');
      })
      .subscribe((e) => events.push(`${e.type} ${e.item}`));
    q.add('a');
    await flush();
    expect(events).toEqual(['error a']);
    expect(q.sizes().processing).toBe(0);
    q.add('a');
    await flush();
    expect(runs).toEqual(['a', 'a']);
    subscription.unsubscribe();
  });
});
