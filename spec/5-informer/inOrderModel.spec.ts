import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { keyOf, type InformerEvent } from '../../src/index.ts';
import { informerFromSource, realFifo, type SourceEvent } from '../../src/pipeline.ts';

/**
 * `informer(…, { delivery: 'in-order' })` (informerFromSource: resync → realFifo → reduceDeltas →
 * Store) against a reference model of client-go's RealFIFO (tools/cache/the_real_fifo.go, non-atomic
 * mode as the shared informers use it: Add/Update/Delete append one delta each, Replace appends the
 * tombstones of known keys the list lacks and then Replaced for every listed object, Resync a Sync
 * per known key not queued, Pop hands out one delta at a time) + Indexer + processDeltas. The schedules
 * and the reference for invalid objects and throwing indexers are those of informerModel.spec.ts
 * (the DeltaFIFO model), shared through modelSchedules.ts.
 *
 * Unlike the DeltaFIFO comparison, which can only compare events key by key, this one compares the
 * whole sequence of events in order: that is what the mode promises. Within one relist the tombstones
 * are compared as a set (client-go takes them in the indexer's map order, random in Go), but they must
 * all come before the relist's other events.
 *
 * Documented differences, as for the DeltaFIFO model: a schedule starts with a list; a delete of a
 * key nothing is cached for tells nothing (client-go's RealFIFO would call OnDelete with it); a
 * DELETED whose object failed validation is a delete of the cached object (nothing, if none).
 */

import { Widgets, decode, indexers, scheduleArb, sourceEvents, type Obj, type Op, type Version } from './modelSchedules.ts';

// ── the reference model: RealFIFO + Indexer + processDeltas ──────────────────
type Tomb = { readonly dfsu: true; readonly key: string; readonly obj: Obj };
type RefDelta = { readonly type: 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync'; readonly key: string; readonly obj: Obj | Tomb };
const rv = (o: Obj) => o.metadata.resourceVersion ?? '?';

class RealReference {
  readonly indexer = new Map<string, Obj>();
  /** Every event, in order: `key event…`. */
  readonly events: string[] = [];
  private items: RefDelta[] = [];
  private populated = false;
  private initialPopulationCount = 0;

  add(obj: Obj): void {
    this.populated = true;
    this.items.push({ type: 'Added', key: keyOf(obj), obj });
  }

  update(obj: Obj): void {
    this.populated = true;
    this.items.push({ type: 'Updated', key: keyOf(obj), obj });
  }

  delete(key: string, obj: Obj | undefined): void {
    this.populated = true;
    // Our rule for a DELETED whose object failed validation: the cached object stands for it.
    const object = obj ?? this.indexer.get(key);
    if (object !== undefined) this.items.push({ type: 'Deleted', key, obj: object });
  }

  /** reconcileReplacement: tombstones for queued, then known keys the list lacks; then Replaced, in list order. */
  replace(list: readonly Obj[], rejectedKeys: readonly string[]): void {
    const newKeys = new Set<string>(rejectedKeys);
    for (const obj of list) newKeys.add(keyOf(obj));
    const lastQueued = new Map<string, RefDelta>();
    for (const d of this.items) lastQueued.set(d.key, d);
    for (const [key, d] of lastQueued) {
      if (newKeys.has(key) || d.type === 'Deleted') continue;
      this.items.push({ type: 'Deleted', key, obj: { dfsu: true, key, obj: d.obj as Obj } });
    }
    for (const [key, obj] of this.indexer) {
      if (newKeys.has(key) || lastQueued.has(key)) continue;
      this.items.push({ type: 'Deleted', key, obj: { dfsu: true, key, obj } });
    }
    for (const obj of list) this.items.push({ type: 'Replaced', key: keyOf(obj), obj });
    if (!this.populated) {
      this.populated = true;
      this.initialPopulationCount = this.items.length;
    }
  }

  resync(): void {
    const queued = new Set(this.items.map((d) => d.key));
    for (const [key, obj] of this.indexer) if (!queued.has(key)) this.items.push({ type: 'Sync', key, obj });
  }

  /** Pop until empty, one delta at a time (isInInitialList decided at each Pop). */
  drain(): void {
    for (let d = this.items.shift(); d !== undefined; d = this.items.shift()) {
      const isInInitialList = !(this.populated && this.initialPopulationCount === 0);
      this.handle(d, isInInitialList);
      if (this.initialPopulationCount > 0) this.initialPopulationCount--;
    }
  }

  private handle(d: RefDelta, isInInitialList: boolean): void {
    const key = d.key;
    if (d.type === 'Deleted') {
      const old = this.indexer.get(key);
      if (old === undefined) return; // the rule: nothing cached, nothing to tell
      this.indexer.delete(key);
      const dfsu = 'dfsu' in d.obj;
      this.events.push(`${key} deleted ${rv(dfsu ? old : (d.obj as Obj))}${dfsu ? ' dfsu' : ''} ${isInInitialList}`);
      return;
    }
    const obj = d.obj as Obj;
    if (obj.spec?.boom) return; // the rule for a throwing indexer: not stored, no event
    const old = this.indexer.get(key);
    this.indexer.set(key, obj);
    if (old === undefined) this.events.push(`${key} added ${rv(obj)} ${isInInitialList}`);
    else
      this.events.push(`${key} updated ${rv(old)}→${rv(obj)}${d.type === 'Sync' || rv(old) === rv(obj) ? ' sync' : ''} ${isInInitialList}`);
  }
}

function feed(ref: RealReference, e: SourceEvent<Obj>): void {
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

const describeEvent = (event: InformerEvent<Obj>): string => {
  const key = keyOf(event.object);
  if (event.type === 'added') return `${key} added ${rv(event.object)} ${event.isInInitialList}`;
  if (event.type === 'updated')
    return `${key} updated ${rv(event.oldObject)}→${rv(event.object)}${event.resync ? ' sync' : ''} ${event.isInInitialList}`;
  return `${key} deleted ${rv(event.object)}${event.finalStateUnknown ? ' dfsu' : ''} ${event.isInInitialList}`;
};

/**
 * A step's events with its tombstones as a set: they must lead, in any order among themselves. A
 * resync's events are a set too (map order, in client-go as here).
 */
function normalise(step: readonly string[], cause: SourceEvent<Obj>['type']): string[] {
  if (cause === 'resync') return [...step].sort();
  const tombstones = step.filter((e) => e.includes(' dfsu '));
  const rest = step.filter((e) => !e.includes(' dfsu '));
  expect(step.slice(0, tombstones.length)).toEqual(tombstones);
  return [...tombstones.sort(), ...rest];
}

describe("delivery: 'in-order' against a reference model of client-go's RealFIFO", () => {
  it('property: the same events in the same order, step by step, and the same cache and index', () => {
    fc.assert(
      fc.property(scheduleArb, (schedule) => {
        const events = sourceEvents(schedule);
        const ref = new RealReference();
        const source = new Subject<SourceEvent<Obj>>();
        const informer = informerFromSource(Widgets, source, { indexers, delivery: 'in-order' });
        let seen: string[] = [];
        const ended: string[] = [];
        let store: ReturnType<typeof Object> | undefined;
        informer.events$.subscribe({
          next: (e) => seen.push(describeEvent(e)),
          error: () => ended.push('errored'),
          complete: () => ended.push('completed'),
        });
        informer.store$.subscribe((s) => (store = s));
        for (const e of events) {
          const before = ref.events.length;
          feed(ref, e);
          ref.drain();
          source.next(e);
          expect(normalise(seen, e.type)).toEqual(normalise(ref.events.slice(before), e.type));
          seen = [];
        }
        expect(ended).toEqual([]);
        const cache = store as { entries(): Iterable<[string, Obj]>; indexKeys(name: string, value: string): string[] };
        expect(new Map([...cache.entries()].map(([k, o]) => [k, rv(o)]))).toEqual(new Map([...ref.indexer].map(([k, o]) => [k, rv(o)])));
        for (const team of ['red', 'blue']) {
          expect(cache.indexKeys('team', team)).toEqual(
            [...ref.indexer]
              .filter(([, o]) => o.spec?.team === team)
              .map(([k]) => k)
              .sort(),
          );
        }
      }),
      { numRuns: 300 },
    );
  });

  it('property: a re-entrant source (events emitted while a batch is handed on) still comes out in server order, nothing merged', () => {
    fc.assert(
      fc.property(scheduleArb, fc.nat(40), (schedule, at) => {
        // The events after the trigger are emitted from inside the consumer of the trigger's first event.
        const events = sourceEvents(schedule);
        const ref = new RealReference();
        for (const e of events) {
          feed(ref, e);
          ref.drain();
        }
        const source = new Subject<SourceEvent<Obj>>();
        const informer = informerFromSource(Widgets, source, { indexers, delivery: 'in-order' });
        const seen: string[] = [];
        const cut = Math.min(at, events.length - 1);
        const rest = events.slice(cut + 1);
        let armed = false;
        let injected = false;
        informer.events$.subscribe((e) => {
          seen.push(describeEvent(e));
          if (!armed || injected) return;
          injected = true;
          for (const later of rest) source.next(later);
        });
        for (const e of events.slice(0, cut)) source.next(e);
        armed = true;
        source.next(events[cut]!);
        armed = false;
        // The trigger told nothing (a bookmark, a fault): the rest goes in as usual.
        if (!injected) for (const later of rest) source.next(later);
        // Tombstones and resyncs in map order: compared as sets; everything else in order.
        const unordered = (e: string) => e.includes(' dfsu ') || e.includes(' sync ');
        const strip = (list: readonly string[]) => list.filter((e) => !unordered(e)).join('\n');
        expect(strip(seen)).toEqual(strip(ref.events));
        expect(seen.filter(unordered).sort()).toEqual(ref.events.filter(unordered).sort());
      }),
      { numRuns: 200 },
    );
  });

  it('realFifo alone (its own knownObjects) hands on one delta per event, in order', () => {
    const source = new Subject<SourceEvent<Obj>>();
    const out: string[] = [];
    source.pipe(realFifo<Obj>()).subscribe((o) => {
      if (o.type === 'deltas') out.push(`${o.cause}:${o.items.map((i) => `${i.deltas.map((d) => d.type).join('+')} ${i.key}`).join(',')}`);
    });
    const w = (name: string, r: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: r } });
    source.next({ type: 'replace', items: [w('a', '1'), w('b', '1')], resourceVersion: '1' });
    source.next({ type: 'modified', object: w('a', '2'), resourceVersion: '2' });
    source.next({ type: 'deleted', object: w('a', '3'), resourceVersion: '3' });
    source.next({ type: 'deleted', object: w('a', '3'), resourceVersion: '3' });
    source.next({ type: 'replace', items: [w('c', '4'), w('c', '5')], resourceVersion: '5' });
    expect(out).toEqual([
      'replace:Replaced ns/a,Replaced ns/b',
      'event:Updated ns/a',
      'event:Deleted ns/a',
      'event:Deleted ns/a',
      'replace:Deleted ns/b,Replaced ns/c',
      'replace:Replaced ns/c',
    ]);
  });
});
