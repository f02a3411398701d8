import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { InformerError, keyOf, type InformerEvent, type Store } from '../../src/index.ts';
import { deltaFifo, informerFromSource, isTombstone, processDeltas, type SourceEvent } from '../../src/pipeline.ts';

/**
 * The whole informer (informerFromSource: resync → deltaFifo → reduceDeltas →
 * Store) against a small reference model of client-go's DeltaFIFO + Indexer +
 * sharedIndexInformer.HandleDeltas, written from
 * /work/shared/reference/client-go-semantics.md, plus docs/invalid-objects.md
 * for what client-go has no counterpart for (validation, throwing indexers).
 *
 * Documented differences, kept out of the schedules: a schedule starts with a
 * list (client-go's hasSynced turns true at a watch event before any list,
 * ours waits for the first list), and index functions are pure. Modelled
 * difference (`Reference.staleTombstones`): behind processDeltas, a delete
 * replaces a queued tombstone only until the next list (deltaFifo forgets
 * older tombstones, so that what it keeps stays bounded); and, behind a slow
 * consumer (`handedOrder`), a relist tombstones the known keys in the order
 * deltaFifo's own knownObjects keeps them (client-go's: map order, random).
 */

import { Widgets, decode, indexers, scheduleArb, sourceEvents, type Obj, type Op, type Version } from './modelSchedules.ts';

// ── the reference model ──────────────────────────────────────────────────────
type Tomb = { readonly dfsu: true; readonly key: string; readonly obj: Obj };
type RefDelta = { readonly type: 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync'; readonly obj: Obj | Tomb };
type Seen = string;
const unwrap = (x: Obj | Tomb): Obj => ('dfsu' in x ? (x as Tomb).obj : x);

/** client-go's DeltaFIFO (items + queue, knownObjects = the indexer) and HandleDeltas, drained after every step. */
class Reference {
  readonly indexer = new Map<string, Obj>();
  readonly events = new Map<string, Seen[]>();
  private readonly items = new Map<string, RefDelta[]>();
  private readonly queue: string[] = [];
  private populated = false;
  private initialPopulationCount = 0;
  /** Keys whose queued tombstone is older than the latest list: a delete no longer replaces it. */
  private readonly staleTombstones = new Set<string>();
  /**
   * With `handedOrder`: the keys deltaFifo's own knownObjects holds behind processDeltas (what it handed on, in the
   * order a Map keeps them: set by an entry ending in another delta, deleted by one ending in Deleted), and this
   * event's entries. A relist tombstones known keys in that order, as deltaFifo does; client-go's is map order
   * (random), so the order only has to be one client-go could take, and ours is the one that decides which key the
   * consumer meets first (a later delete then replaces a still-queued tombstone or finds none).
   */
  private readonly handed: Map<string, true> | undefined;
  private readonly touched = new Map<string, RefDelta['type']>();

  constructor(options: { readonly handedOrder?: boolean } = {}) {
    this.handed = options.handedOrder ? new Map() : undefined;
  }

  /** The end of one source event: its entries handed on (see `handed`). */
  endEvent(): void {
    if (!this.handed) return;
    for (const [key, type] of this.touched) {
      if (type === 'Deleted') this.handed.delete(key);
      else this.handed.set(key, true);
    }
    this.touched.clear();
  }

  private hasSynced(): boolean {
    return this.populated && this.initialPopulationCount === 0;
  }

  private enqueue(key: string, delta: RefDelta): void {
    if (delta.type !== 'Deleted') this.staleTombstones.delete(key);
    let deltas = this.items.get(key);
    if (!deltas) {
      this.items.set(key, (deltas = []));
      this.queue.push(key);
    }
    deltas.push(delta);
    // An entry's place in the batch is its key's first delta (a Map keeps it), its effect its last.
    if (this.handed) this.touched.set(key, delta.type);
    // dedupDeltas: only the last two, both Deleted; keep the older unless it is a DFSU.
    const n = deltas.length;
    if (n >= 2 && deltas[n - 1]!.type === 'Deleted' && deltas[n - 2]!.type === 'Deleted') {
      const older = deltas[n - 2]!;
      deltas.splice(n - 2, 2, 'dfsu' in older.obj ? deltas[n - 1]! : older);
    }
  }

  add(obj: Obj): void {
    this.populated = true;
    this.enqueue(keyOf(obj), { type: 'Added', obj });
  }

  update(obj: Obj): void {
    this.populated = true;
    this.enqueue(keyOf(obj), { type: 'Updated', obj });
  }

  /** Delete(obj); `obj` undefined for a DELETED whose object failed validation (the rule: the known object stands for it). */
  delete(key: string, obj: Obj | undefined): void {
    this.populated = true;
    const known = this.indexer.get(key);
    const queued = this.items.get(key);
    if (known === undefined && queued === undefined) return;
    if (this.staleTombstones.has(key)) return;
    // deletedKey: the newest queued object, else the known one, stands for it.
    const newest = queued?.[queued.length - 1]?.obj;
    this.enqueue(key, { type: 'Deleted', obj: obj ?? (newest === undefined ? known! : unwrap(newest)) });
  }

  replace(list: readonly Obj[], rejectedKeys: readonly string[]): void {
    for (const [key, deltas] of this.items) {
      const last = deltas[deltas.length - 1]!;
      if (last.type === 'Deleted' && 'dfsu' in last.obj) this.staleTombstones.add(key);
    }
    const keys = new Set<string>(rejectedKeys);
    const listed = new Set<string>();
    for (const obj of list) {
      keys.add(keyOf(obj));
      listed.add(keyOf(obj));
      this.enqueue(keyOf(obj), { type: 'Replaced', obj });
    }
    let queuedDeletions = 0;
    // Queued keys the list lacks: a tombstone with the newest queued object.
    for (const [key, deltas] of [...this.items]) {
      if (keys.has(key)) continue;
      const newest = deltas[deltas.length - 1]!.obj;
      queuedDeletions++;
      this.enqueue(key, { type: 'Deleted', obj: { dfsu: true, key, obj: unwrap(newest) } });
    }
    const known = this.handed
      ? [...[...this.handed.keys()].filter((k) => this.indexer.has(k)), ...[...this.indexer.keys()].filter((k) => !this.handed!.has(k))]
      : [...this.indexer.keys()];
    for (const key of known) {
      const obj = this.indexer.get(key)!;
      if (keys.has(key) || this.items.has(key)) continue;
      queuedDeletions++;
      this.enqueue(key, { type: 'Deleted', obj: { dfsu: true, key, obj } });
    }
    if (!this.populated) {
      this.populated = true;
      // client-go counts the listed keys (a set), not the items.
      this.initialPopulationCount = listed.size + queuedDeletions;
    }
  }

  resync(): void {
    for (const [key, obj] of this.indexer) if (!this.items.has(key)) this.enqueue(key, { type: 'Sync', obj });
  }

  /** Pops every key (client-go's Pop + HandleDeltas), storing into the indexer. */
  drain(): void {
    while (this.popOne());
  }

  /** Pops one key, if any is queued, and handles its deltas. */
  popOne(): boolean {
    const key = this.queue.shift();
    if (key === undefined) return false;
    const deltas = this.items.get(key)!;
    this.items.delete(key);
    this.staleTombstones.delete(key);
    const isInInitialList = !this.hasSynced();
    if (this.initialPopulationCount > 0) this.initialPopulationCount--;
    for (const d of deltas) this.handle(key, d, isInInitialList);
    return true;
  }

  handle(key: string, d: RefDelta, isInInitialList: boolean): void {
    const log = this.events.get(key) ?? [];
    this.events.set(key, log);
    if (d.type === 'Deleted') {
      const old = this.indexer.get(key);
      if (old === undefined) return; // the rule: nothing cached, nothing to tell
      this.indexer.delete(key);
      const dfsu = 'dfsu' in d.obj;
      log.push(`deleted ${rv(dfsu ? old : (d.obj as Obj))}${dfsu ? ' dfsu' : ''} ${isInInitialList}`);
      return;
    }
    const obj = d.obj as Obj;
    // The rule for a throwing indexer: not stored, no event, the old version stays.
    if (obj.spec?.boom) return;
    const old = this.indexer.get(key);
    this.indexer.set(key, obj);
    if (old === undefined) log.push(`added ${rv(obj)} ${isInInitialList}`);
    else log.push(`updated ${rv(old)}→${rv(obj)}${d.type === 'Sync' || rv(old) === rv(obj) ? ' sync' : ''} ${isInInitialList}`);
  }
}

const rv = (o: Obj) => o.metadata.resourceVersion ?? '?';

/** Hands one source event to the reference model (bookmarks, watch starts and errors change nothing there). */
function feed(ref: Reference, e: SourceEvent<Obj>): void {
  switch (e.type) {
    case 'replace':
      return ref.replace(e.items, e.rejectedKeys ?? []);
    case 'added':
      return ref.add(e.object);
    case 'modified':
      return ref.update(e.object);
    case 'deleted':
      return ref.delete(keyOf(e.object), e.object);
    case 'deletedKey':
      return ref.delete(e.key, undefined);
    case 'resync':
      return ref.resync();
    default:
      return;
  }
}

function runModel(events: readonly SourceEvent<Obj>[]): Reference {
  const ref = new Reference();
  for (const e of events) {
    feed(ref, e);
    ref.drain();
  }
  return ref;
}

function runInformer(events: readonly SourceEvent<Obj>[]) {
  const source = new Subject<SourceEvent<Obj>>();
  const informer = informerFromSource(Widgets, source, { indexers });
  const log = new Map<string, Seen[]>();
  const errors: InformerError[] = [];
  const ended: string[] = [];
  let store: Store<Obj> | undefined;
  const note = (event: InformerEvent<Obj>) => {
    const key = keyOf(event.object);
    const seen = log.get(key) ?? [];
    log.set(key, seen);
    if (event.type === 'added') seen.push(`added ${rv(event.object)} ${event.isInInitialList}`);
    else if (event.type === 'updated')
      seen.push(`updated ${rv(event.oldObject)}→${rv(event.object)}${event.resync ? ' sync' : ''} ${event.isInInitialList}`);
    else seen.push(`deleted ${rv(event.object)}${event.finalStateUnknown ? ' dfsu' : ''} ${event.isInInitialList}`);
  };
  const watch = (name: string) => ({ error: () => ended.push(`${name} errored`), complete: () => ended.push(`${name} completed`) });
  informer.events$.subscribe({ next: note, ...watch('events$') });
  informer.errors$.subscribe({ next: (e) => errors.push(e), ...watch('errors$') });
  informer.store$.subscribe({ next: (s) => (store = s), ...watch('store$') });
  for (const e of events) source.next(e);
  return { log, errors, ended, store: store! };
}

describe('the informer against a reference model of client-go (DeltaFIFO + Indexer + HandleDeltas)', () => {
  it('property: same final cache and the same events per key, over lists, watch events, relists, resyncs, invalid objects and throwing indexers', () => {
    fc.assert(
      fc.property(scheduleArb, (schedule) => {
        const events = sourceEvents(schedule);
        const ref = runModel(events);
        const ours = runInformer(events);
        expect(ours.ended).toEqual([]);
        // Same cache.
        expect(new Map([...ours.store.entries()].map(([k, o]) => [k, rv(o)]))).toEqual(
          new Map([...ref.indexer].map(([k, o]) => [k, rv(o)])),
        );
        // Same events, key by key (across keys the order within one list may differ).
        const nonEmpty = (m: Map<string, Seen[]>) => new Map([...m].filter(([, v]) => v.length > 0));
        expect(nonEmpty(ours.log)).toEqual(nonEmpty(ref.events));
        // The index holds exactly what is cached.
        for (const team of ['red', 'blue']) {
          expect(ours.store.indexKeys('team', team)).toEqual(
            [...ref.indexer]
              .filter(([, o]) => o.spec?.team === team)
              .map(([k]) => k)
              .sort(),
          );
        }
        // Every fault is reported with its key, and faults of user code never end anything.
        for (const error of ours.errors) if (error.reason !== 'NetworkError') expect(error.key).toMatch(/^ns\//);
      }),
      { numRuns: 300 },
    );
  });

  it("property: deltaFifo() → processDeltas with a slow consumer queues as client-go's DeltaFIFO does (same cache, same events per key)", () => {
    type Tick = { readonly op: 'finish' };
    const withFinishes = fc.tuple(scheduleArb, fc.array(fc.nat(3), { minLength: 45, maxLength: 45 }));
    fc.assert(
      fc.property(withFinishes, ([schedule, finishes]) => {
        // Between source steps, the consumer finishes 0–3 of the entries it is given. It stores what it is
        // given (no throwing indexer: deltaFifo's own knownObjects is what it handed on, as client-go's is the indexer).
        const unbroken = schedule.map((step): Op => {
          if (step.op === 'list') return { op: 'list', items: step.items.map((v) => ({ ...v, boom: false })) };
          if ('item' in step) return { ...step, item: { ...step.item, boom: false } };
          return step;
        });
        const events = sourceEvents(unbroken);
        const steps: (SourceEvent<Obj> | Tick)[] = [];
        events.forEach((e, i) => {
          steps.push(e);
          for (let k = 0; k < (finishes[i % finishes.length] ?? 0); k++) steps.push({ op: 'finish' });
        });

        // The model: a DeltaFIFO whose consumer pops one key when it is free.
        const ref = new Reference({ handedOrder: true });
        let refBusy = false;
        const refPop = () => {
          if (!refBusy) refBusy = ref.popOne();
        };
        for (const step of steps) {
          if ('op' in step) {
            refBusy = false;
            refPop();
            continue;
          }
          feed(ref, step);
          ref.endEvent();
          refPop();
        }

        // Ours: the same consumer logic, behind deltaFifo() → processDeltas, finishing on the same ticks.
        const mine = new Reference();
        const source = new Subject<SourceEvent<Obj>>();
        let current: Subject<void> | undefined;
        const ended: string[] = [];
        source
          .pipe(
            deltaFifo<Obj>(),
            processDeltas<Obj, void>((entry) => {
              for (const d of entry.deltas) {
                const obj = isTombstone(d.object) ? ({ dfsu: true, key: d.object.key, obj: d.object.object } as const) : d.object;
                mine.handle(entry.key, { type: d.type, obj }, entry.isInInitialList);
              }
              return (current = new Subject<void>());
            }),
          )
          .subscribe({ error: () => ended.push('errored'), complete: () => ended.push('completed') });
        for (const step of steps) {
          if ('op' in step) {
            const finishing = current;
            current = undefined;
            finishing?.complete();
          } else source.next(step);
        }

        // Then the consumer catches up (which key a relist's tombstones reach first follows map order,
        // random in Go: compare once everything is handled).
        for (let i = 0; i < 20; i++) {
          refBusy = false;
          refPop();
          const finishing = current;
          current = undefined;
          finishing?.complete();
        }

        expect(ended).toEqual([]);
        expect(new Map([...mine.indexer].map(([k, o]) => [k, rv(o)]))).toEqual(new Map([...ref.indexer].map(([k, o]) => [k, rv(o)])));
        // isInInitialList is left out: client-go decides it at Pop, deltaFifo when the list is handed on.
        const strip = (m: Map<string, Seen[]>) =>
          new Map([...m].filter(([, v]) => v.length > 0).map(([k, v]) => [k, v.map((x) => x.replace(/ (true|false)$/, ''))]));
        expect(strip(mine.events)).toEqual(strip(ref.events));
      }),
      {
        numRuns: 300,
        // CI's seed -1457962882 (shrunk): a relist tombstones a and d, ours hands d first (its knownObjects' order), and a
        // DELETED of a, invalid, then replaces a's still-queued tombstone: the model popped a first, by its own order.
        examples: [
          [
            [
              [
                { op: 'list', items: [{ name: 'a', valid: true, boom: true, team: 'red' }] },
                { op: 'list', items: [] },
                {
                  op: 'list',
                  items: [
                    { name: 'd', valid: true, boom: true, team: 'red' },
                    { name: 'a', valid: true, boom: true, team: 'red' },
                  ],
                },
                { op: 'added', item: { name: 'a', valid: false, boom: true, team: 'red' } },
                { op: 'list', items: [{ name: 'c', valid: false, boom: true, team: 'red' }] },
                { op: 'deleted', item: { name: 'a', valid: false, boom: true, team: 'red' } },
              ] as Op[],
              [0, 0, 1, 2, 2, ...Array.from({ length: 40 }, () => 0)],
            ],
          ],
        ],
      },
    );
  });
});
