import fc from 'fast-check';
import { defer, EMPTY, finalize, timer, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createDelayingQueue, createWorkQueue, LOW_PRIORITY } from '../../src/workqueue/index.ts';
import { getNow, NOTHING } from './helpers.ts';

const items = ['a', 'b', 'c', 'd', 'e', 'f'] as const;
type Item = (typeof items)[number];
const priorities = [LOW_PRIORITY, -1, 0, 0, 5] as const;

type Op =
  | { readonly op: 'add'; readonly item: Item; readonly priority: number }
  | { readonly op: 'get' }
  | { readonly op: 'done'; readonly pick: number }
  | { readonly op: 'shutDown' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom(...items), fc.constantFrom(...priorities))
      .map(([item, priority]) => ({ op: 'add', item, priority }) as const),
  },
  { weight: 4, arbitrary: fc.constant({ op: 'get' } as const) },
  { weight: 3, arbitrary: fc.nat(10).map((pick) => ({ op: 'done', pick }) as const) },
  { weight: 1, arbitrary: fc.constant({ op: 'shutDown' } as const) },
);

interface Entry {
  readonly item: Item;
  priority: number;
  seq: number;
}

/**
 * The rules written out naively (linear scans): client-go's dirty/processing sets, plus
 * "highest priority first; within a priority, the order in which items reached it".
 */
class Model {
  ready: Entry[] = [];
  dirty = new Map<Item, number>();
  processing = new Map<Item, number>();
  shuttingDown = false;
  private seq = 0;

  /** Returns the entry that started waiting, if any. */
  add(item: Item, priority: number): Entry | undefined {
    if (this.shuttingDown) return undefined;
    const current = this.dirty.get(item);
    if (current !== undefined) {
      if (priority > current) {
        this.dirty.set(item, priority);
        const entry = this.ready.find((e) => e.item === item);
        if (entry) {
          entry.priority = priority;
          entry.seq = this.seq++;
        }
      }
      return undefined;
    }
    this.dirty.set(item, priority);
    return this.processing.has(item) ? undefined : this.push(item, priority);
  }

  /** Takes the next item by the rules, or (`taken`) the item the queue handed out. */
  get(taken?: Item): Entry | undefined {
    let best: Entry | undefined;
    for (const e of this.ready) if (!best || e.priority > best.priority || (e.priority === best.priority && e.seq < best.seq)) best = e;
    if (taken !== undefined) best = this.ready.find((e) => e.item === taken);
    if (!best) return undefined;
    this.ready.splice(this.ready.indexOf(best), 1);
    this.dirty.delete(best.item);
    this.processing.set(best.item, best.priority);
    return best;
  }

  done(item: Item): Entry | undefined {
    this.processing.delete(item);
    const priority = this.dirty.get(item);
    return priority === undefined ? undefined : this.push(item, priority);
  }

  /**
   * What may be taken before an item that starts waiting now at `priority`, without any new add:
   * the ready items ahead of it, and the items in flight already added again at a higher priority
   * (they are queued at their `done`, ahead of it).
   */
  ahead(priority: number): number {
    let n = this.ready.filter((e) => e.priority >= priority).length;
    for (const [item] of this.processing) if ((this.dirty.get(item) ?? -Infinity) > priority) n += 1;
    return n;
  }

  private push(item: Item, priority: number): Entry {
    const entry = { item, priority, seq: this.seq++ };
    this.ready.push(entry);
    return entry;
  }
}

const depthByPriority = (dirty: Map<Item, number>) => {
  const counts = new Map<number, number>();
  for (const p of dirty.values()) counts.set(p, (counts.get(p) ?? 0) + 1);
  return [...counts].map(([priority, depth]) => ({ priority, depth })).sort((x, y) => y.priority - x.priority);
};

describe('priority WorkQueue properties', () => {
  it('matches the naive model step by step: order, dedup (the higher priority wins), in-flight re-adds, depth by priority', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 100 }), (ops) => {
        const q = createWorkQueue<Item>();
        const model = new Model();
        for (const step of ops) {
          if (step.op === 'add') {
            q.add(step.item, step.priority);
            model.add(step.item, step.priority);
          } else if (step.op === 'get') {
            const { value, completed } = getNow(q.get());
            const expected = model.get();
            expect(value === NOTHING ? undefined : value).toBe(expected?.item);
            expect(completed).toBe(expected !== undefined || model.shuttingDown);
          } else if (step.op === 'done') {
            const held = [...model.processing.keys()];
            const item = held[step.pick % Math.max(1, held.length)];
            if (item === undefined) continue;
            q.done(item);
            model.done(item);
          } else {
            q.shutDown();
            model.shuttingDown = true;
          }
          expect(q.length).toBe(model.ready.length);
          expect(q.sizes()).toMatchObject({ dirty: model.dirty.size, processing: model.processing.size });
          const metrics = q.metrics();
          expect(metrics.depth).toBe(model.dirty.size);
          expect(metrics.depthByPriority).toEqual(depthByPriority(model.dirty));
          for (const item of items) expect(q.priorityOf(item)).toBe(model.dirty.get(item) ?? model.processing.get(item));
        }
      }),
      { numRuns: 400 },
    );
  });

  it('never starves: an item waits at most for the items ahead of it when it was queued plus the adds at a higher priority while it waits', () => {
    // The bound, for an item x queued (ready) at priority p: the number of other items taken
    // before x is at most A + H, where A = items ready ahead of x when it was queued (priority > p,
    // or = p and queued earlier) + items in flight already added again at a priority > p, and
    // H = adds at a priority > p while x waits. Adds at p or lower, and re-adds of items in flight
    // at p or lower, never get ahead of x; raising x only shortens its wait.
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 120 }), (ops) => {
        const q = createWorkQueue<Item>();
        const model = new Model();
        const waiting = new Map<Item, { priority: number; bound: number; passed: number }>();
        const started = (entry: Entry | undefined): void => {
          if (entry) waiting.set(entry.item, { priority: entry.priority, bound: model.ahead(entry.priority) - 1, passed: 0 });
        };
        for (const step of ops) {
          if (step.op === 'add') {
            if (!model.shuttingDown) for (const w of waiting.values()) if (step.priority > w.priority) w.bound += 1;
            q.add(step.item, step.priority);
            started(model.add(step.item, step.priority));
          } else if (step.op === 'get') {
            // The model follows the queue's choice here: this test checks the bound, not the order.
            const { value } = getNow(q.get());
            if (value === NOTHING) {
              expect(model.ready).toHaveLength(0);
              continue;
            }
            const entry = model.get(value);
            expect(entry).toBeDefined();
            if (entry === undefined) continue;
            for (const [item, w] of waiting) if (item !== entry.item) w.passed += 1;
            const mine = waiting.get(entry.item);
            expect(mine).toBeDefined();
            if (mine) expect(mine.passed).toBeLessThanOrEqual(mine.bound);
            waiting.delete(entry.item);
          } else if (step.op === 'done') {
            const held = [...model.processing.keys()];
            const item = held[step.pick % Math.max(1, held.length)];
            if (item === undefined) continue;
            q.done(item);
            started(model.done(item));
          } else {
            q.shutDown();
            model.shuttingDown = true;
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('the bound is exact: an item waits for the items ahead of it plus every higher add while it waits, no more, no fewer', () => {
    const q = createWorkQueue<string>();
    q.add('a', 0);
    q.add('b', 0);
    q.add('low', LOW_PRIORITY); // A = 2: a and b are ahead of it
    q.add('high-1', 5); // H = 2: two adds above its priority while it waits
    const order = [getNow(q.get()).value];
    q.add('high-2', 1);
    q.add('later', LOW_PRIORITY); // queued after it at its priority: not ahead of it
    for (let i = 0; i < 5; i++) order.push(getNow(q.get()).value);
    expect(order).toEqual(['high-1', 'high-2', 'a', 'b', 'low', 'later']);
    expect(order.indexOf('low')).toBe(2 + 2);
  });

  it('loses no add under workers and random priorities: every add is followed by a run of that item', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(60), fc.constantFrom(...items), fc.constantFrom(...priorities)), { maxLength: 40 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.nat(12), { minLength: 1, maxLength: 10 }),
        (adds, concurrency, durations) => {
          const scheduler = new VirtualTimeScheduler();
          const q = createWorkQueue<Item>({ scheduler });
          let seq = 0;
          const lastAdd = new Map<Item, number>();
          const lastStart = new Map<Item, number>();
          const active = new Set<Item>();
          let runs = 0;
          q.process((item) => {
            expect(active.has(item)).toBe(false);
            active.add(item);
            lastStart.set(item, seq++);
            const duration = durations[runs++ % durations.length] ?? 0;
            return (duration === 0 ? defer(() => EMPTY) : timer(duration, scheduler)).pipe(finalize(() => active.delete(item)));
          }, concurrency).subscribe();
          for (const [at, item, priority] of adds) {
            scheduler.schedule(() => {
              lastAdd.set(item, seq++);
              q.add(item, priority);
            }, at);
          }
          scheduler.schedule(() => q.shutDownWithDrain().subscribe(), 61);
          scheduler.flush();
          for (const [item, addedAt] of lastAdd) expect(lastStart.get(item) ?? -1).toBeGreaterThan(addedAt);
          expect(q.sizes()).toEqual({ queued: 0, dirty: 0, processing: 0, delayed: 0, waitingGets: 0, metricsEntries: 0 });
          expect(q.metrics().depthByPriority).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a delayed item is added at the highest priority it was delayed with, once its earliest time comes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(20), fc.constantFrom(...items), fc.integer({ min: 1, max: 15 }), fc.constantFrom(...priorities)), {
          maxLength: 25,
        }),
        (calls) => {
          const scheduler = new VirtualTimeScheduler();
          const q = createDelayingQueue<Item>({ scheduler });
          const added: string[] = [];
          q.metrics$.subscribe((e) => {
            if (e.type === 'add') added.push(`${scheduler.now()}:${e.item}@${e.priority}`);
          });
          // Calls on even frames, odd delays: no call shares a frame with a deadline. Nothing is taken.
          for (const [t, item, delay, priority] of calls) scheduler.schedule(() => q.addAfter(item, 2 * delay - 1, priority), 2 * t);
          scheduler.flush();
          // Reference: per item, the first pending window decides; later calls in the window lower the
          // time or raise the priority. The queue is never drained, so an item is added only once.
          const expected = new Map<Item, { at: number; priority: number }>();
          const pending = new Map<Item, { at: number; priority: number }>();
          const ordered = calls.map(([t, item, delay, priority], i) => ({ at: 2 * t, item, readyAt: 2 * t + 2 * delay - 1, priority, i }));
          ordered.sort((x, y) => x.at - y.at || x.i - y.i);
          const fire = (now: number) => {
            for (const [item, p] of [...pending]) {
              if (p.at > now) continue;
              pending.delete(item);
              if (!expected.has(item)) expected.set(item, p);
            }
          };
          for (const call of ordered) {
            fire(call.at);
            const p = pending.get(call.item);
            pending.set(
              call.item,
              p
                ? { at: Math.min(p.at, call.readyAt), priority: Math.max(p.priority, call.priority) }
                : { at: call.readyAt, priority: call.priority },
            );
          }
          fire(Infinity);
          const want = [...expected].map(([item, p]) => `${p.at}:${item}@${p.priority}`);
          const byTime = (list: string[]) =>
            [...list].sort((x, y) => Number(x.split(':')[0]) - Number(y.split(':')[0]) || x.localeCompare(y));
          expect(byTime(added)).toEqual(byTime(want));
        },
      ),
      { numRuns: 300 },
    );
  });
});
