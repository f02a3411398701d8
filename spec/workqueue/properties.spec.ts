import fc from 'fast-check';
import { defer, EMPTY, finalize, timer, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { bucketRateLimiter, createDelayingQueue, createWorkQueue, itemExponentialFailureRateLimiter } from '../../src/workqueue/index.ts';
import { getNow, NOTHING } from './helpers.ts';

const items = ['a', 'b', 'c', 'd', 'e'] as const;
type Item = (typeof items)[number];

type Op =
  | { readonly op: 'add'; readonly item: Item }
  | { readonly op: 'get' }
  | { readonly op: 'done'; readonly pick: number }
  | { readonly op: 'shutDown' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...items).map((item) => ({ op: 'add', item }) as const) },
  { weight: 4, arbitrary: fc.constant({ op: 'get' } as const) },
  { weight: 4, arbitrary: fc.nat(10).map((pick) => ({ op: 'done', pick }) as const) },
  { weight: 1, arbitrary: fc.constant({ op: 'shutDown' } as const) },
);

/** A direct transcription of client-go's Add/Get/Done/ShutDown, to compare against. */
class Model {
  queue: Item[] = [];
  dirty = new Set<Item>();
  processing = new Set<Item>();
  shuttingDown = false;

  add(item: Item): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.queue.push(item);
  }

  get(): Item | undefined {
    const item = this.queue.shift();
    if (item === undefined) return undefined;
    this.dirty.delete(item);
    this.processing.add(item);
    return item;
  }

  done(item: Item): void {
    this.processing.delete(item);
    if (this.dirty.has(item)) this.queue.push(item);
  }
}

describe('WorkQueue properties', () => {
  it('matches the client-go model step by step, never holding duplicates or handing out a held item', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80 }), (ops) => {
        const q = createWorkQueue<Item>();
        const model = new Model();
        const held = new Set<Item>();
        for (const step of ops) {
          if (step.op === 'add') {
            q.add(step.item);
            model.add(step.item);
          } else if (step.op === 'get') {
            const { value, completed } = getNow(q.get());
            const expected = model.get();
            expect(value === NOTHING ? undefined : value).toBe(expected);
            expect(completed).toBe(expected !== undefined || model.shuttingDown);
            if (value !== NOTHING) {
              expect(held.has(value)).toBe(false);
              held.add(value);
            }
          } else if (step.op === 'done') {
            const list = [...held];
            const item = list[step.pick % Math.max(1, list.length)];
            if (item === undefined) continue;
            held.delete(item);
            q.done(item);
            model.done(item);
          } else {
            q.shutDown();
            model.shuttingDown = true;
          }
          expect(q.length).toBe(model.queue.length);
          expect(new Set(model.queue).size).toBe(model.queue.length);
          expect(q.sizes()).toMatchObject({ dirty: model.dirty.size, processing: held.size });
          expect(q.metrics().depth).toBe(model.dirty.size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('loses no add: every add is followed by a run of that item that starts later', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(60), fc.constantFrom(...items)), { maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.nat(12), { minLength: 1, maxLength: 10 }),
        (adds, concurrency, durations) => {
          const scheduler = new VirtualTimeScheduler();
          const q = createWorkQueue<Item>({ scheduler });
          let seq = 0;
          const lastAdd = new Map<Item, number>();
          const lastStart = new Map<Item, number>();
          const active = new Set<Item>();
          let maxActive = 0;
          let runs = 0;
          let completed = false;
          q.process((item) => {
            expect(active.has(item)).toBe(false);
            active.add(item);
            maxActive = Math.max(maxActive, active.size);
            lastStart.set(item, seq++);
            const duration = durations[runs++ % durations.length] ?? 0;
            return (duration === 0 ? defer(() => EMPTY) : timer(duration, scheduler)).pipe(finalize(() => active.delete(item)));
          }, concurrency).subscribe({ complete: () => (completed = true) });
          for (const [at, item] of adds) {
            scheduler.schedule(() => {
              // Record first: a synchronous worker may run inside add().
              lastAdd.set(item, seq++);
              q.add(item);
            }, at);
          }
          scheduler.schedule(() => q.shutDownWithDrain().subscribe(), 61);
          scheduler.flush();
          expect(maxActive).toBeLessThanOrEqual(concurrency);
          for (const [item, addedAt] of lastAdd) {
            expect(lastStart.get(item) ?? -1).toBeGreaterThan(addedAt);
          }
          expect(completed).toBe(true);
          expect(q.sizes()).toEqual({
            queued: 0,
            dirty: 0,
            processing: 0,
            delayed: 0,
            waitingGets: 0,
            metricsEntries: 0,
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('DelayingWorkQueue properties', () => {
  it('releases each item at the earliest of its pending deadlines', () => {
    // Calls happen on even frames and delays are odd, so no deadline ties with a call.
    const callArb = fc.tuple(fc.nat(30), fc.constantFrom(...items), fc.nat(20));
    fc.assert(
      fc.property(fc.array(callArb, { maxLength: 30 }), (raw) => {
        const calls = raw.map(([t, item, d]) => ({ at: 2 * t, item, delay: 2 * d - 1 }));
        const scheduler = new VirtualTimeScheduler();
        const q = createDelayingQueue<Item>({ scheduler });
        const seen: string[] = [];
        q.process((item) => {
          seen.push(`${scheduler.now()}:${item}`);
          return EMPTY;
        }).subscribe();
        for (const call of calls) scheduler.schedule(() => q.addAfter(call.item, call.delay), call.at);
        scheduler.flush();

        // Reference: sweep calls in time order keeping the earliest pending deadline per item.
        const ordered = calls.map((call, index) => ({ ...call, index })).sort((x, y) => x.at - y.at || x.index - y.index);
        const pending = new Map<Item, number>();
        const expected: string[] = [];
        const fireUpTo = (now: number): void => {
          for (const [item, readyAt] of [...pending].sort((x, y) => x[1] - y[1])) {
            if (readyAt > now) break;
            pending.delete(item);
            expected.push(`${readyAt}:${item}`);
          }
        };
        for (const call of ordered) {
          fireUpTo(call.at);
          if (call.delay <= 0) {
            expected.push(`${call.at}:${call.item}`);
          } else {
            const readyAt = call.at + call.delay;
            pending.set(call.item, Math.min(pending.get(call.item) ?? Infinity, readyAt));
          }
        }
        fireUpTo(Infinity);
        const byTime = (list: string[]): string[] =>
          [...list].sort((x, y) => Number(x.split(':')[0]) - Number(y.split(':')[0]) || x.localeCompare(y));
        expect(byTime(seen)).toEqual(byTime(expected));
        expect(q.sizes().delayed).toBe(0);
        expect(scheduler.actions).toHaveLength(0);
      }),
      { numRuns: 300 },
    );
  });
});

describe('rate limiter properties', () => {
  it('exponential: the n-th delay is min(base * 2^n, max)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 10_000_000 }), fc.nat(80), (base, max, n) => {
        const limiter = itemExponentialFailureRateLimiter<string>(base, max);
        let last = 0;
        for (let i = 0; i <= n; i += 1) last = limiter.when('k');
        expect(last).toBe(Math.min(base * 2 ** n, max));
        expect(limiter.numRequeues('k')).toBe(n + 1);
      }),
    );
  });

  it('bucket: ready times never exceed burst + qps * window, and are non-decreasing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.nat(300), { minLength: 1, maxLength: 120 }),
        (qps, burst, gaps) => {
          const scheduler = new VirtualTimeScheduler();
          const limiter = bucketRateLimiter<string>({ qps, burst, scheduler });
          const ready: number[] = [];
          for (const gap of gaps) {
            scheduler.frame += gap;
            ready.push(scheduler.frame + limiter.when('k'));
          }
          for (let i = 1; i < ready.length; i += 1) {
            expect(ready[i]).toBeGreaterThanOrEqual((ready[i - 1] ?? 0) - 1e-6);
          }
          for (let i = 0; i < ready.length; i += 1) {
            for (let j = i; j < ready.length; j += 1) {
              const window = (ready[j] ?? 0) - (ready[i] ?? 0);
              expect(j - i + 1).toBeLessThanOrEqual(burst + (qps * window) / 1000 + 1e-6);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
