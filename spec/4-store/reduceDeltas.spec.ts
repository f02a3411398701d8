import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Subject, scan, tap, type OperatorFunction } from 'rxjs';
import { InformerError, Store, keyOf, type InformerEvent, type KubeObject } from '../../src/index.ts';
import { type InformerState } from '../../src/pipeline.ts';
import { deltaFifo, initialState, reduceDeltas, type FifoOutput, type SourceEvent } from '../../src/pipeline.ts';
import { versionTag } from '../../src/4-store/store.ts';

type Obj = KubeObject;
const NAMES = ['a', 'b', 'c', 'd', 'e'];
const obj = (name: string, rv: number): Obj => ({
  metadata: { name, namespace: name === 'e' ? undefined : 'ns', resourceVersion: String(rv) },
});
const keyFor = (name: string) => (name === 'e' ? 'e' : `ns/${name}`);
const rvOf = (o: Obj) => o.metadata.resourceVersion;

type Command =
  | { readonly t: 'add' | 'mod' | 'del'; readonly name: string }
  | { readonly t: 'replace'; readonly listed: readonly { readonly name: string; readonly fresh: boolean }[] }
  | { readonly t: 'resync' | 'bookmark' | 'error' };

const nameArb = fc.constantFrom(...NAMES);
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constantFrom('add' as const, 'mod' as const, 'del' as const), name: nameArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('replace' as const),
      listed: fc.uniqueArray(fc.record({ name: nameArb, fresh: fc.boolean() }), { selector: (x) => x.name, maxLength: NAMES.length }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constantFrom('resync' as const, 'bookmark' as const, 'error' as const) }) },
);

/** Turns commands into source events, keeping the server's view (what it last said about each key). */
function toSource(commands: readonly Command[]): { events: SourceEvent<Obj>[]; server: Map<string, Obj>[] } {
  let rv = 0;
  const server = new Map<string, Obj>();
  const events: SourceEvent<Obj>[] = [];
  const views: Map<string, Obj>[] = [];
  for (const c of commands) {
    switch (c.t) {
      case 'add':
      case 'mod': {
        const o = obj(c.name, ++rv);
        server.set(keyOf(o), o);
        events.push({ type: c.t === 'add' ? 'added' : 'modified', object: o, resourceVersion: String(rv) });
        break;
      }
      case 'del': {
        const o = obj(c.name, ++rv);
        server.delete(keyOf(o));
        events.push({ type: 'deleted', object: o, resourceVersion: String(rv) });
        break;
      }
      case 'replace': {
        ++rv;
        const items = c.listed.map(({ name, fresh }) => (!fresh && server.get(keyFor(name))) || obj(name, rv));
        server.clear();
        for (const o of items) server.set(keyOf(o), o);
        events.push({ type: 'replace', items, resourceVersion: String(rv) });
        break;
      }
      case 'resync':
        events.push({ type: 'resync' });
        break;
      case 'bookmark':
        events.push({ type: 'bookmark', resourceVersion: String(++rv) });
        break;
      case 'error':
        events.push({ type: 'error', error: new InformerError('ServerError', 'x') });
        break;
    }
    views.push(new Map(server));
  }
  return { events, server: views };
}

/** The informer's pipeline after the source: deltaFifo (own knownObjects, or the store as the informer wires it) + reduceDeltas. */
function pipeline(storeAsKnown: boolean): OperatorFunction<SourceEvent<Obj>, InformerState<Obj>> {
  return (source) => {
    const initial = initialState(Store.empty<Obj>());
    let current = initial;
    return source.pipe(
      deltaFifo<Obj>(storeAsKnown ? { knownObjects: () => current.store } : {}),
      scan(reduceDeltas<Obj>, initial),
      tap((state) => (current = state)),
    );
  };
}

describe('reduceDeltas over deltaFifo', () => {
  for (const storeAsKnown of [false, true]) {
    it(`property (${storeAsKnown ? 'store as knownObjects, as the informer wires it' : 'deltaFifo’s own knownObjects'}): the cache is what the server last said; events are consistent`, () => {
      fc.assert(
        fc.property(fc.array(commandArb, { maxLength: 30 }), (commands) => {
          const { events, server } = toSource(commands);
          const source = new Subject<SourceEvent<Obj>>();
          let emitted: InformerState<Obj>[] = [];
          source.pipe(pipeline(storeAsKnown)).subscribe((state) => emitted.push(state));

          let current = initialState(Store.empty<Obj>());
          /** What a subscriber built from the events alone. */
          const seen = new Map<string, Obj>();
          let listed = false;
          events.forEach((event, i) => {
            emitted = [];
            source.next(event);
            expect(emitted.length).toBeLessThanOrEqual(1);
            for (const state of emitted) {
              // Before and during the first list, events are "in the initial list" (client-go: !hasSynced); after, never.
              for (const e of state.events) check(e, seen, !listed);
              current = state;
            }
            if (event.type === 'replace') listed = true;
            // the cache is exactly what the server last said, and so is what the events told a subscriber
            expect(new Map(current.store.entries())).toEqual(server[i]);
            expect(seen).toEqual(server[i]);
            expect(current.synced).toBe(listed);
          });
        }),
        { numRuns: 300 },
      );
    });
  }

  function check(e: InformerEvent<Obj>, seen: Map<string, Obj>, inInitialList: boolean): void {
    const key = keyOf(e.object);
    switch (e.type) {
      case 'added':
        expect(seen.has(key), `added ${key} twice without a delete`).toBe(false);
        seen.set(key, e.object);
        break;
      case 'updated':
        expect(seen.has(key), `updated ${key} before added`).toBe(true);
        expect(e.oldObject).toBe(seen.get(key));
        expect(e.resync).toBe(rvOf(e.oldObject) === rvOf(e.object));
        seen.set(key, e.object);
        break;
      case 'deleted':
        expect(seen.has(key), `deleted unknown ${key}`).toBe(true);
        if (e.finalStateUnknown) expect(e.object).toBe(seen.get(key));
        seen.delete(key);
        break;
    }
    expect(e.isInInitialList).toBe(inInitialList);
  }

  it('maps deltas to events as HandleDeltas does', () => {
    const a1 = obj('a', 1),
      a2 = obj('a', 2);
    let state = initialState(Store.empty<Obj>());
    const step = (output: FifoOutput<Obj>) => (state = reduceDeltas(state, output));
    step({
      type: 'deltas',
      cause: 'replace',
      resourceVersion: '1',
      items: [{ key: 'ns/a', deltas: [{ type: 'Replaced', object: a1 }], isInInitialList: true }],
    });
    expect(state.events).toEqual([{ type: 'added', object: a1, isInInitialList: true }]);
    expect(state).toMatchObject({ synced: true, resourceVersion: '1', step: 'replace' });
    // Replaced with the same rv: a resync update
    step({
      type: 'deltas',
      cause: 'replace',
      resourceVersion: '2',
      items: [{ key: 'ns/a', deltas: [{ type: 'Replaced', object: a1 }], isInInitialList: false }],
    });
    expect(state.events).toEqual([{ type: 'updated', oldObject: a1, object: a1, isInInitialList: false, resync: true }]);
    // several deltas for one key: events in order, store ends at the newest
    step({
      type: 'deltas',
      cause: 'event',
      resourceVersion: '3',
      items: [
        {
          key: 'ns/a',
          deltas: [
            { type: 'Updated', object: a2 },
            { type: 'Deleted', object: a2 },
            { type: 'Added', object: a1 },
          ],
          isInInitialList: false,
        },
      ],
    });
    expect(state.events.map((e) => e.type)).toEqual(['updated', 'deleted', 'added']);
    expect(state.store.get('ns/a')).toBe(a1);
    // a tombstone delete carries the cached state, flagged
    step({
      type: 'deltas',
      cause: 'replace',
      resourceVersion: '4',
      items: [
        {
          key: 'ns/a',
          deltas: [{ type: 'Deleted', object: { finalStateUnknown: true, key: 'ns/a', object: a2 } }],
          isInInitialList: false,
        },
      ],
    });
    expect(state.events).toEqual([{ type: 'deleted', object: a1, finalStateUnknown: true, isInInitialList: false }]);
    expect(state.store.size).toBe(0);
    // bookmarks move the rv, errors are reported, neither touches the cache
    const before = state.store;
    step({ type: 'bookmark', resourceVersion: '9' });
    expect(state).toMatchObject({ resourceVersion: '9', events: [], errors: [] });
    const error = new InformerError('ServerError', 'x');
    step({ type: 'error', error });
    expect(state).toMatchObject({ resourceVersion: '9', events: [], errors: [error] });
    expect(state.store).toBe(before);
    // a resync batch (no resourceVersion of its own: the server said nothing new) keeps the one the informer knows
    const a3 = obj('a', 3);
    step({
      type: 'deltas',
      cause: 'event',
      resourceVersion: '10',
      items: [{ key: 'ns/a', deltas: [{ type: 'Added', object: a3 }], isInInitialList: false }],
    });
    step({ type: 'deltas', cause: 'resync', items: [{ key: 'ns/a', deltas: [{ type: 'Sync', object: a3 }], isInInitialList: false }] });
    expect(state).toMatchObject({ resourceVersion: '10', step: 'resync' });
    expect(state.events).toEqual([{ type: 'updated', oldObject: a3, object: a3, isInInitialList: false, resync: true }]);
  });
});

describe('a watch update tells resync from the tag the store kept beside the cached object', () => {
  /** An object whose metadata.resourceVersion counts its reads (`reads.n`). */
  const counted = (name: string, rv: string, reads: { n: number }): Obj =>
    ({
      metadata: {
        name,
        namespace: 'ns',
        get resourceVersion() {
          reads.n++;
          return rv;
        },
      },
    }) as Obj;
  const event = (object: Obj, type: 'Added' | 'Updated' | 'Sync' = 'Updated'): FifoOutput<Obj> => ({
    type: 'deltas',
    cause: 'event',
    resourceVersion: object.metadata.resourceVersion!,
    items: [{ key: 'ns/a', deltas: [{ type, object }], isInInitialList: false }],
  });
  /** Two distinct strings whose 32-bit hashes (the tags) are equal, found by a birthday search (deterministic). */
  function collidingVersions(): [string, string] {
    const seen = new Map<number, string>();
    for (let i = 0; ; i++) {
      const rv = String(1_000_000 + i);
      const tag = versionTag({ metadata: { resourceVersion: rv } })!;
      const other = seen.get(tag);
      if (other !== undefined) return [other, rv];
      seen.set(tag, rv);
    }
  }

  it('an update to another resourceVersion reads nothing of the cached object (cold memory in a big cache)', () => {
    const reads = { n: 0 };
    const cached = counted('a', '10', reads);
    let state = reduceDeltas(initialState(Store.empty<Obj>()), event(cached, 'Added'));
    reads.n = 0;
    state = reduceDeltas(state, event(obj('a', 11)));
    expect(reads.n).toBe(0);
    expect(state.events).toEqual([{ type: 'updated', oldObject: cached, object: obj('a', 11), isInInitialList: false, resync: false }]);
  });

  it('so does one after a relist (a batch write) and after a write of one key', () => {
    const reads = { n: 0 };
    const cached = counted('a', '10', reads);
    let state = reduceDeltas(initialState(Store.empty<Obj>()), {
      type: 'deltas',
      cause: 'replace',
      resourceVersion: '10',
      items: [
        { key: 'ns/a', deltas: [{ type: 'Replaced', object: cached }], isInInitialList: true },
        { key: 'ns/b', deltas: [{ type: 'Replaced', object: obj('b', 9) }], isInInitialList: true },
      ],
    });
    reads.n = 0;
    state = reduceDeltas(state, event(obj('a', 11)));
    expect(reads.n).toBe(0); // (before any expect on the events: comparing them reads the getter)
    expect(state.events).toMatchObject([{ type: 'updated', oldObject: cached, resync: false }]);
    const written = counted('a', '12', reads);
    state = { ...state, store: state.store.write('ns/a', state.store.get('ns/a'), written) };
    reads.n = 0;
    state = reduceDeltas(state, event(obj('a', 13)));
    expect(reads.n).toBe(0);
    expect(state.events).toMatchObject([{ type: 'updated', oldObject: written, resync: false }]);
  });

  it('the same resourceVersion again is a resync; a Sync always is; versions whose tags collide are compared in full', () => {
    const a10 = obj('a', 10);
    let state = reduceDeltas(initialState(Store.empty<Obj>()), event(a10, 'Added'));
    const again = obj('a', 10);
    state = reduceDeltas(state, event(again));
    expect(state.events).toEqual([{ type: 'updated', oldObject: a10, object: again, isInInitialList: false, resync: true }]);
    const a11 = obj('a', 11);
    state = reduceDeltas(state, event(a11, 'Sync'));
    expect(state.events).toMatchObject([{ type: 'updated', oldObject: again, object: a11, resync: true }]);
    const [first, second] = collidingVersions();
    expect(first).not.toBe(second);
    const v1: Obj = { metadata: { name: 'a', namespace: 'ns', resourceVersion: first } };
    const v2: Obj = { metadata: { name: 'a', namespace: 'ns', resourceVersion: second } };
    state = reduceDeltas(state, event(v1));
    state = reduceDeltas(state, event(v2));
    expect(state.events).toEqual([{ type: 'updated', oldObject: v1, object: v2, isInInitialList: false, resync: false }]);
    // An object without a resourceVersion never matches (client-go's isSync), tag or none.
    const bare: Obj = { metadata: { name: 'a', namespace: 'ns' } };
    state = reduceDeltas(state, event(bare));
    state = reduceDeltas(state, event({ metadata: { name: 'a', namespace: 'ns' } }));
    expect(state.events).toMatchObject([{ type: 'updated', oldObject: bare, resync: false }]);
  });
});

describe('a relist that moves one object and tombstones another (audit42)', () => {
  type Labelled = KubeObject & { readonly metadata: { readonly labels?: Record<string, string> } };
  const at = (name: string, rv: string, app: string): Labelled => ({
    metadata: { name, namespace: 'ns', resourceVersion: rv, labels: { app } },
  });
  const replace = (resourceVersion: string, items: Extract<FifoOutput<Labelled>, { type: 'deltas' }>['items']): FifoOutput<Labelled> =>
    ({ type: 'deltas', cause: 'replace', resourceVersion, items }) as FifoOutput<Labelled>;

  it('leaves no empty index value, in one snapshot, and the snapshot before it as it was', () => {
    let state = initialState(Store.empty<Labelled>({ app: (o) => (o.metadata.labels?.['app'] ? [o.metadata.labels['app']] : []) }));
    state = reduceDeltas(
      state,
      replace('1', [
        { key: 'ns/a', deltas: [{ type: 'Replaced', object: at('a', '1', 'web') }], isInInitialList: true },
        { key: 'ns/b', deltas: [{ type: 'Replaced', object: at('b', '1', 'db') }], isInInitialList: true },
      ]),
    );
    const before = state.store;
    state = reduceDeltas(
      state,
      replace('5', [
        {
          key: 'ns/b',
          deltas: [{ type: 'Deleted', object: { finalStateUnknown: true, key: 'ns/b', object: at('b', '1', 'db') } }],
          isInInitialList: false,
        },
        { key: 'ns/a', deltas: [{ type: 'Replaced', object: at('a', '4', 'api') }], isInInitialList: false },
      ]),
    );
    expect(state.store.indexValues('app')).toEqual(['api']);
    expect(state.store.indexKeys('app', 'api')).toEqual(['ns/a']);
    expect(state.store.byIndex('app', 'db')).toEqual([]);
    expect(before.indexValues('app')).toEqual(['db', 'web']);
    expect(state.events.map((e) => e.type)).toEqual(['deleted', 'updated']);
  });

  it("the cache's objects are shared, not copied: the very objects given, in every snapshot and event (docs/api.md: never mutate one)", () => {
    const a = at('a', '1', 'web');
    const state = reduceDeltas(
      initialState(Store.empty<Labelled>()),
      replace('1', [{ key: 'ns/a', deltas: [{ type: 'Replaced', object: a }], isInInitialList: true }]),
    );
    const next = reduceDeltas(state, replace('2', [{ key: 'ns/a', deltas: [{ type: 'Sync', object: a }], isInInitialList: false }]));
    expect(state.store.get('ns/a')).toBe(a);
    expect(next.store.list()[0]).toBe(a);
    expect((state.events[0] as InformerEvent<Labelled> & { type: 'added' }).object).toBe(a);
  });
});
