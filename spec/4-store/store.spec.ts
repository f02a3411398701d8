import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InformerError, Store, UnknownIndexError, keyOf, type Indexers } from '../../src/index.ts';
import { putInStore, type Replaced } from '../../src/4-store/store.ts';
import { namespaceIndex } from '../../src/pipeline.ts';

type Obj = {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly labels?: Record<string, string> };
  readonly v: number;
};

const indexers: Indexers<Obj> = {
  // multi-valued: one `k=v` per label
  labels: (o) => Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`),
  // multi-valued with duplicates (two labels with the same value)
  values: (o) => Object.values(o.metadata.labels ?? {}),
};
const allIndexers: Indexers<Obj> = { namespace: namespaceIndex, ...indexers };
const NAMES = ['a', 'b', 'c', 'd'];
const NAMESPACES = ['', 'ns1', 'ns2'];
const KEYS = NAMES.flatMap((n) => NAMESPACES.map((ns) => (ns ? `${ns}/${n}` : n)));
const INDEX_VALUES = ['', 'ns1', 'ns2', 'x', 'y', 'z', 'app=x', 'app=y', 'app=z', 'tier=x', 'tier=y', 'tier=z', 'nope'];

const objArb: fc.Arbitrary<Obj> = fc
  .record({
    name: fc.constantFrom(...NAMES),
    namespace: fc.constantFrom(...NAMESPACES),
    labels: fc.option(fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('x', 'y', 'z'), { maxKeys: 2 }), { nil: undefined }),
    v: fc.nat(1000),
  })
  .map(({ name, namespace, labels, v }) => ({ metadata: { name, ...(namespace ? { namespace } : {}), ...(labels ? { labels } : {}) }, v }));

type Write = readonly [string, Obj | undefined];
const writeArb: fc.Arbitrary<Write> = fc.oneof(
  { weight: 3, arbitrary: objArb.map((o): Write => [keyOf(o), o]) },
  { weight: 1, arbitrary: fc.constantFrom(...KEYS).map((k): Write => [k, undefined]) },
);

/** The expected state of a store, recomputed from scratch. */
function model(items: ReadonlyMap<string, Obj>) {
  const indices = new Map<string, Map<string, Set<string>>>();
  for (const [name, indexFunc] of Object.entries(allIndexers)) {
    const index = new Map<string, Set<string>>();
    for (const [key, o] of items) {
      for (const value of indexFunc(o)) {
        if (!index.has(value)) index.set(value, new Set());
        index.get(value)!.add(key);
      }
    }
    indices.set(name, index);
  }
  return { items, indices };
}

const byKey = (objects: readonly Obj[]) => [...objects].sort((x, y) => keyOf(x).localeCompare(keyOf(y)));

/** {@link expectMatches} for a store without custom indexes: its contents and its namespace index. */
function expectMatchesWithout(store: Store<Obj>, items: ReadonlyMap<string, Obj>): void {
  expect(store.size).toBe(items.size);
  expect(new Map(store.entries())).toEqual(new Map(items));
  for (const key of KEYS) expect(store.get(key)).toBe(items.get(key));
  for (const namespace of NAMESPACES)
    expect(byKey(store.byIndex('namespace', namespace))).toEqual(
      byKey([...items.values()].filter((o) => (o.metadata.namespace ?? '') === namespace)),
    );
}

function expectMatches(store: Store<Obj>, items: ReadonlyMap<string, Obj>): void {
  const m = model(items);
  expect(store.size).toBe(items.size);
  expect(store.keys().sort()).toEqual([...items.keys()].sort());
  expect(byKey(store.list())).toEqual(byKey([...items.values()]));
  expect(new Map(store.entries())).toEqual(new Map(items));
  for (const key of KEYS) {
    expect(store.get(key)).toBe(items.get(key));
    expect(store.has(key)).toBe(items.has(key));
  }
  expect(store.indexNames().sort()).toEqual(Object.keys(allIndexers).sort());
  for (const [name, index] of m.indices) {
    expect(store.indexValues(name)).toEqual([...index.keys()].sort());
    for (const value of INDEX_VALUES) {
      const keys = [...(index.get(value) ?? [])].sort();
      expect(store.indexKeys(name, value)).toEqual(keys);
      expect(byKey(store.byIndex(name, value))).toEqual(byKey(keys.map((k) => items.get(k)!)));
    }
    for (const o of items.values()) {
      const related = new Set(allIndexers[name]!(o).flatMap((value) => [...(index.get(value) ?? [])]));
      expect(byKey(store.byIndexOf(name, o))).toEqual(byKey([...related].map((k) => items.get(k)!)));
    }
  }
}

describe('keys and the built-in namespace index (audit42)', () => {
  const inShop = (name: string, v = 0): Obj => ({ metadata: { name, namespace: 'shop' }, v });

  it('a namespaced object whose key does not start with its namespace is refused (IndexerError), not indexed under the key', () => {
    const errors: InformerError[] = [];
    const empty = Store.empty<Obj>();
    // 'shop1/y' and 'shopy' start with the namespace's text, not with "shop/" (a bare startsWith would file them).
    for (const key of ['uid-123', 'Pod/shop/y', 'other/y', 'shop1/y', 'shopy']) {
      expect(empty.write(key, undefined, inShop('y'), errors)).toBe(empty);
      expect(empty.prepare(key, inShop('y'))).toBeInstanceOf(InformerError);
      const batch = empty.batch(errors);
      batch.write(key, undefined, inShop('y'));
      expect(batch.done()).toBe(empty);
    }
    // Each key refused twice: by the write, then by the batch.
    expect(errors.map((e) => `${e.reason} ${e.key}`)).toEqual(
      ['uid-123', 'Pod/shop/y', 'other/y', 'shop1/y', 'shopy'].flatMap((key) => [`IndexerError ${key}`, `IndexerError ${key}`]),
    );
    expect(errors[0]!.message).toMatch(
      /index "namespace" cannot file uid-123: its object is in namespace "shop".*must start with "shop\/"/,
    );
    // A key that keeps the namespace prefix, and any key of a cluster-scoped object, are taken and indexed by the object.
    const s = empty.write('shop/uid-123', undefined, inShop('y'), errors).write('node-uid-9', undefined, { metadata: { name: 'n' }, v: 0 });
    expect(errors).toHaveLength(10);
    expect(s.indexValues('namespace')).toEqual(['', 'shop']);
    expect(s.byIndex('namespace', 'shop').map((o) => o.metadata.name)).toEqual(['y']);
    expect([s.get('shop/uid-123')?.metadata.name, s.get('node-uid-9')?.metadata.name]).toEqual(['y', 'n']);
  });

  it('with an index of its own named "namespace" a store takes any key (its function indexes the object)', () => {
    const s = Store.empty<Obj>({ namespace: namespaceIndex }).write('uid-123', undefined, inShop('y'));
    expect([s.size, s.get('uid-123')?.metadata.name, s.indexValues('namespace'), s.indexKeys('namespace', 'shop')]).toEqual([
      1,
      'y',
      ['shop'],
      ['uid-123'],
    ]);
  });

  it('an index of its own named "namespace" answers byIndex and byIndexOf (docs/api.md: it replaces the built-in one)', () => {
    const team = (o: Obj) => (o.metadata.labels?.['team'] ? [o.metadata.labels['team']] : []);
    const red = (name: string, namespace: string): Obj => ({ metadata: { name, namespace, labels: { team: 'red' } }, v: 0 });
    const s = Store.empty<Obj>({ namespace: team }).update([
      ['a/x', red('x', 'a')],
      ['b/y', red('y', 'b')],
    ]);
    expect(
      s
        .byIndex('namespace', 'red')
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['x', 'y']);
    expect(s.byIndex('namespace', 'a')).toEqual([]); // the layout's answer, not the index's
    expect(
      s
        .byIndexOf('namespace', red('z', 'c'))
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['x', 'y']);
  });

  it("an object whose namespace changes under one key is moved: one key, one object (write, batch, and the reducer's put)", () => {
    const v1: Obj = { metadata: { name: 'x', namespace: 'ns' }, v: 1 };
    const v2: Obj = { metadata: { name: 'ns/x' }, v: 2 }; // cluster-scoped now, under the same key
    const check = (s: Store<Obj>, expected: Obj | undefined) => {
      expect([s.size, s.list(), s.keys(), s.get('ns/x')]).toEqual(expected ? [1, [expected], ['ns/x'], expected] : [0, [], [], undefined]);
    };
    let s = Store.empty<Obj>().write('ns/x', undefined, v1);
    s = s.write('ns/x', s.get('ns/x'), v2);
    check(s, v2);
    expect(s.indexValues('namespace')).toEqual(['']);
    const back = s.write('ns/x', s.get('ns/x'), v1);
    check(back, v1);
    check(s.write('ns/x', s.get('ns/x'), undefined), undefined);
    const batch = Store.empty<Obj>().write('ns/x', undefined, v1).batch();
    batch.write('ns/x', v1, v2);
    check(batch.done(), v2);
    const replaced: Replaced<Obj> = { previous: undefined };
    const put = putInStore(s, 'ns/x', v1, replaced);
    check(put, v1);
    expect(replaced.previous).toBe(v2);
  });
});

describe('Store.empty refuses indexers that are not functions (audit42)', () => {
  it('names the index: a non-function made every write an IndexerError, an empty cache for ever', () => {
    expect(() => Store.empty<Obj>({ byNode: undefined } as unknown as Indexers<Obj>)).toThrow(TypeError);
    expect(() => Store.empty<Obj>({ labels: indexers.labels!, byNode: 'spec.nodeName' } as unknown as Indexers<Obj>)).toThrow(
      /Store\.empty: index "byNode" must be a function \(object\) => string\[\], got "spec\.nodeName"/,
    );
    expect(() => Store.empty<Obj>(null as unknown as Indexers<Obj>)).toThrow(/`indexers` must be an object of index functions/);
    expect(Store.empty<Obj>(indexers).indexNames()).toEqual(['namespace', 'labels', 'values']);
  });
});

describe('byIndexOf checks what the index function returns, as writes do (audit42)', () => {
  it('a string (not an array) is a TypeError, not a lookup of its characters', () => {
    const bad = { bad: (o: Obj) => (o.v === 1 ? 'ab' : ['a']) } as unknown as Indexers<Obj>;
    const store = Store.empty<Obj>(bad).write('ns/z', undefined, { metadata: { name: 'z', namespace: 'ns' }, v: 0 });
    expect(store.byIndex('bad', 'a')).toHaveLength(1);
    expect(() => store.byIndexOf('bad', { metadata: { name: 'q', namespace: 'ns' }, v: 1 })).toThrow(TypeError);
    expect(() => store.byIndexOf('bad', { metadata: { name: 'q', namespace: 'ns' }, v: 1 })).toThrow(
      /byIndexOf: index "bad" returned something other than an array of strings: "ab"/,
    );
    expect(store.byIndexOf('bad', { metadata: { name: 'q', namespace: 'ns' }, v: 2 }).map((o) => o.metadata.name)).toEqual(['z']);
  });

  it('a write whose index function returns a string (not an array) is refused with an IndexerError, not indexed by its characters', () => {
    const bad = { bad: (o: Obj) => (o.v === 1 ? 'ab' : ['a']) } as unknown as Indexers<Obj>;
    const errors: InformerError[] = [];
    const store = Store.empty<Obj>(bad).write('ns/z', undefined, { metadata: { name: 'z', namespace: 'ns' }, v: 0 });
    expect(store.write('ns/q', undefined, { metadata: { name: 'q', namespace: 'ns' }, v: 1 }, errors)).toBe(store);
    expect(errors.map((e) => [e.reason, e.key])).toEqual([['IndexerError', 'ns/q']]);
    expect(errors[0]!.message).toMatch(/returned something other than an array of strings/);
    expect([store.indexValues('bad'), store.byIndex('bad', 'b')]).toEqual([['a'], []]);
  });
});

describe('Store', () => {
  // Its own time budget: fast-check runs synchronously, ~16 s alone on the 2-core machine and 101 s measured at load 22
  // (other suites beside it); the default 30 s failed it at load 14. The runs are its coverage, so they stay.
  it(
    'property: after any batches of upserts and deletes, every read equals a model recomputed from scratch; old snapshots never change',
    { timeout: 300_000 },
    () => {
      fc.assert(
        fc.property(fc.array(fc.array(writeArb, { maxLength: 6 }), { maxLength: 15 }), (batches) => {
          let store = Store.empty<Obj>(indexers);
          let items = new Map<string, Obj>();
          const history: [Store<Obj>, Map<string, Obj>][] = [[store, items]];
          for (const batch of batches) {
            const next = new Map(items);
            for (const [key, o] of batch) {
              if (o === undefined) next.delete(key);
              else next.set(key, o);
            }
            store = store.update(batch);
            items = next;
            expectMatches(store, items);
            history.push([store, items]);
          }
          for (const [snapshot, snapshotItems] of history) expectMatches(snapshot, snapshotItems);
        }),
        { numRuns: 150 },
      );
    },
  );

  it('property: snapshots of one lineage, read in any order, each equal their model forever (mid-batch, left behind, forked, listed)', () => {
    type Step =
      | { readonly kind: 'write'; readonly write: Write }
      | { readonly kind: 'batch'; readonly writes: readonly Write[]; readonly peek: boolean }
      | { readonly kind: 'read'; readonly at: number }
      | { readonly kind: 'fork'; readonly at: number; readonly write: Write; readonly follow: boolean }
      | { readonly kind: 'list' };
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      { weight: 4, arbitrary: writeArb.map((write): Step => ({ kind: 'write', write })) },
      {
        weight: 2,
        arbitrary: fc
          .record({ writes: fc.array(writeArb, { maxLength: 5 }), peek: fc.boolean() })
          .map((b): Step => ({ kind: 'batch', ...b })),
      },
      { weight: 2, arbitrary: fc.nat().map((at): Step => ({ kind: 'read', at })) },
      {
        weight: 1,
        arbitrary: fc.record({ at: fc.nat(), write: writeArb, follow: fc.boolean() }).map((f): Step => ({ kind: 'fork', ...f })),
      },
      { weight: 1, arbitrary: fc.constant<Step>({ kind: 'list' }) },
    );
    const apply = (items: ReadonlyMap<string, Obj>, writes: readonly Write[]) => {
      const next = new Map(items);
      for (const [key, o] of writes) {
        if (o === undefined) next.delete(key);
        else next.set(key, o);
      }
      return next;
    };
    const expectReads = (store: Store<Obj>, items: ReadonlyMap<string, Obj>) => {
      expect(store.size).toBe(items.size);
      for (const key of KEYS) expect(store.get(key)).toBe(items.get(key));
    };
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 40 }), (steps) => {
        let store = Store.empty<Obj>(indexers);
        let items: ReadonlyMap<string, Obj> = new Map();
        const history: [Store<Obj>, ReadonlyMap<string, Obj>][] = [[store, items]];
        for (const step of steps) {
          if (step.kind === 'write') {
            const [key, o] = step.write;
            store = store.write(key, store.get(key), o);
            items = apply(items, [step.write]);
          } else if (step.kind === 'batch') {
            const batch = store.batch();
            const latest = new Map<string, Obj | undefined>();
            for (const [i, [key, o]] of step.writes.entries()) {
              batch.write(key, latest.has(key) ? latest.get(key) : store.get(key), o);
              latest.set(key, o);
              // A snapshot read while the batch is under way: it is the one the batch started from.
              if (step.peek && i === 0) expectReads(store, items);
            }
            store = batch.done();
            items = apply(items, step.writes);
          } else if (step.kind === 'read') {
            const [old, was] = history[step.at % history.length]!;
            expectReads(old, was);
            continue;
          } else if (step.kind === 'fork') {
            // A write from a snapshot left behind: a lineage of its own.
            const [old, was] = history[step.at % history.length]!;
            const [key, o] = step.write;
            const forked = old.write(key, old.get(key), o);
            const forkedItems = apply(was, [step.write]);
            expectReads(forked, forkedItems);
            history.push([forked, forkedItems]);
            if (step.follow) [store, items] = [forked, forkedItems];
            continue;
          } else {
            expect(byKey(store.list())).toEqual(byKey([...items.values()]));
            continue;
          }
          expectReads(store, items);
          history.push([store, items]);
        }
        for (const [snapshot, was] of history) expectMatches(snapshot, was);
      }),
      { numRuns: 200 },
    );
  });

  it(`snapshots held across thousands of writes and read only at the end each equal their model`, () => {
    const writes = 6 * 1024 + 17;
    let store = Store.empty<Obj>(indexers);
    const items = new Map<string, Obj>();
    const held: [Store<Obj>, Map<string, Obj>][] = [];
    let seed = 7;
    for (let i = 0; i < writes; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      const name = `p${seed % 300}`;
      const namespace = `ns${(seed >>> 12) % 7}`;
      const key = `${namespace}/${name}`;
      const o: Obj | undefined = (seed >>> 20) % 5 === 0 ? undefined : { metadata: { name, namespace }, v: i };
      store = store.write(key, store.get(key), o);
      if (o === undefined) items.delete(key);
      else items.set(key, o);
      if (i % 997 === 0 || i === writes - 1) held.push([store, new Map(items)]);
    }
    // Newest first, then oldest first.
    for (const [snapshot, was] of [...held].reverse()) {
      expect(snapshot.size).toBe(was.size);
      expect(new Map(snapshot.entries())).toEqual(was);
    }
    for (const [snapshot, was] of held) for (const [key, o] of was) expect(snapshot.get(key)).toBe(o);
  });

  it("reads of one key from successive snapshots, interleaved, each give that snapshot's object (a snapshot remembers its last read only for itself)", () => {
    const a1: Obj = { metadata: { name: 'a', namespace: 'ns1' }, v: 1 };
    const a2: Obj = { metadata: { name: 'a', namespace: 'ns1' }, v: 2 };
    const s0 = Store.empty<Obj>();
    expect(s0.get('ns1/a')).toBeUndefined();
    const s1 = s0.write('ns1/a', s0.get('ns1/a'), a1);
    expect(s1.get('ns1/a')).toBe(a1);
    const s2 = s1.write('ns1/a', s1.get('ns1/a'), a2);
    const s3 = s2.write('ns1/a', s2.get('ns1/a'), undefined);
    expect([s0, s1, s2, s3, s2, s1, s0].map((s) => s.get('ns1/a'))).toEqual([undefined, a1, a2, undefined, a2, a1, undefined]);
    expect(s2.get('ns1/b')).toBeUndefined();
    expect(s2.get('ns1/a')).toBe(a2);
    expect(s3.has('ns1/a')).toBe(false);
    expect(s2.has('ns1/a')).toBe(true);
  });

  it('property: put(key, object, replaced) gives what get(key) then write(key, old, object) give, and leaves the old object in replaced (with indexers and without)', () => {
    const upserts = fc.array(
      fc.oneof({ weight: 3, arbitrary: objArb.map((o) => keyOf(o)) }, { weight: 1, arbitrary: fc.constantFrom(...KEYS) }),
      {
        maxLength: 30,
      },
    );
    fc.assert(
      fc.property(fc.boolean(), upserts, fc.array(objArb, { maxLength: 30 }), (indexed, deletes, objects) => {
        let viaPut = Store.empty<Obj>(indexed ? indexers : {});
        let viaWrite = viaPut;
        const replaced: { previous: Obj | undefined } = { previous: undefined };
        const all = [...objects, ...deletes.slice(0, 5).map((key) => ({ key, object: undefined }))];
        for (const item of all) {
          if ('key' in item) {
            viaPut = viaPut.write(item.key, viaPut.get(item.key), undefined);
            viaWrite = viaWrite.write(item.key, viaWrite.get(item.key), undefined);
            continue;
          }
          const key = keyOf(item);
          const old = viaWrite.get(key);
          const before = viaPut;
          viaPut = putInStore(viaPut, key, item, replaced);
          viaWrite = viaWrite.write(key, old, item);
          expect(replaced.previous).toBe(old);
          expect(before.get(key)).toBe(old);
          if (!indexed) expectMatchesWithout(viaPut, new Map(viaWrite.entries()));
          else expectMatches(viaPut, new Map(viaWrite.entries()));
        }
        // The same object again: nothing changes.
        const last = objects.at(-1);
        if (last !== undefined && viaPut.get(keyOf(last)) === last) expect(putInStore(viaPut, keyOf(last), last, replaced)).toBe(viaPut);
      }),
      { numRuns: 200 },
    );
  });

  it("put is not Store's API (private; the reducer's fast path is putInStore, exported by no entry)", () => {
    const store = Store.empty<Obj>();
    // @ts-expect-error put is private: `replaced` is an out-parameter, no API (typecheck fails if it is public again)
    const put = store.put;
    expect(typeof put).toBe('function');
  });

  it('put of a cluster-scoped name holding "/" finds what get finds (the key read as namespace/name first)', () => {
    const inTeam: Obj = { metadata: { name: 'x', namespace: 'team' }, v: 1 };
    const odd: Obj = { metadata: { name: 'team/x' }, v: 2 };
    const replaced: { previous: Obj | undefined } = { previous: undefined };
    const store = Store.empty<Obj>().update([['team/x', inTeam]]);
    const after = putInStore(store, 'team/x', odd, replaced);
    expect(replaced.previous).toBe(store.get('team/x'));
    expect(after.get('team/x')).toBe(store.write('team/x', store.get('team/x'), odd).get('team/x'));
  });

  it('an unknown index name throws UnknownIndexError (naming the index)', () => {
    const store = Store.empty<Obj>(indexers).update([['a', { metadata: { name: 'a' }, v: 1 }]]);
    for (const read of [
      () => store.byIndex('nope', 'x'),
      () => store.indexKeys('nope', 'x'),
      () => store.indexValues('nope'),
      () => store.byIndexOf('nope', { metadata: { name: 'a' }, v: 1 }),
    ]) {
      expect(read).toThrow(UnknownIndexError);
      try {
        read();
      } catch (error) {
        expect((error as UnknownIndexError).index).toBe('nope');
        expect((error as Error).message).toContain('"labels"');
      }
    }
  });

  it('has the namespace index by default; cluster-scoped objects are under "" (client-go MetaNamespaceIndexFunc)', () => {
    const store = Store.empty<Obj>().update([
      ['ns1/a', { metadata: { name: 'a', namespace: 'ns1' }, v: 1 }],
      ['b', { metadata: { name: 'b' }, v: 2 }],
    ]);
    expect(store.indexNames()).toEqual(['namespace']);
    expect(store.indexValues('namespace')).toEqual(['', 'ns1']);
    expect(store.indexKeys('namespace', 'ns1')).toEqual(['ns1/a']);
    expect(store.indexKeys('namespace', '')).toEqual(['b']);
    expect(store.byIndex('namespace', '').map((o) => o.v)).toEqual([2]);
    expect(namespaceIndex({ metadata: {} })).toEqual(['']);
  });

  it('a cluster-scoped name holding "/" is under "", never under a namespace', () => {
    const odd: Obj = { metadata: { name: 'team/x' }, v: 1 };
    const store = Store.empty<Obj>().update([['team/x', odd]]);
    expect(store.get('team/x')).toBe(odd);
    expect(store.has('team/x')).toBe(true);
    expect(store.indexValues('namespace')).toEqual(['']);
    expect(store.byIndex('namespace', 'team')).toEqual([]);
    expect(store.indexKeys('namespace', '')).toEqual(['team/x']);
    expect(store.keys()).toEqual(['team/x']);
    expect([...store.entries()]).toEqual([['team/x', odd]]);
    const gone = store.update([['team/x', undefined]]);
    expect(gone.size).toBe(0);
    expect(gone.get('team/x')).toBeUndefined();
    expect(gone.indexValues('namespace')).toEqual([]);
  });

  it('any indexer name works, "__proto__" and "constructor" included; names it lacks are unknown', () => {
    const names: Indexers<Obj> = Object.fromEntries([
      ['__proto__', (o: Obj) => [`p${o.v}`]],
      ['constructor', (o: Obj) => [`c${o.v}`]],
      ['toString', (o: Obj) => [`t${o.v}`]],
    ]);
    const store = Store.empty<Obj>(names).update([['ns1/a', { metadata: { name: 'a', namespace: 'ns1' }, v: 1 }]]);
    expect(store.indexNames()).toEqual(['namespace', '__proto__', 'constructor', 'toString']);
    expect(store.indexKeys('__proto__', 'p1')).toEqual(['ns1/a']);
    expect(store.indexKeys('constructor', 'c1')).toEqual(['ns1/a']);
    expect(store.indexValues('toString')).toEqual(['t1']);
    expect(() => Store.empty<Obj>().byIndex('constructor', 'x')).toThrow(UnknownIndexError);
    expect(() => Store.empty<Obj>().indexKeys('__proto__', 'x')).toThrow(UnknownIndexError);
    expect(() => Store.empty<Obj>().byIndexOf('hasOwnProperty', { metadata: { name: 'a' }, v: 1 })).toThrow(UnknownIndexError);
  });

  it('an index function that throws: the write changes nothing (old object kept) and an IndexerError with the key is reported', () => {
    const owner: Indexers<Obj> = { owner: (o) => [(o as unknown as { data: { owner: string } }).data.owner] };
    const good = { metadata: { name: 'a', namespace: 'ns1', resourceVersion: '1' }, v: 1, data: { owner: 'me' } } as Obj;
    const bad = { metadata: { name: 'a', namespace: 'ns1', resourceVersion: '2' }, v: 2 } as Obj;
    const errors: InformerError[] = [];
    const s1 = Store.empty<Obj>(owner).write('ns1/a', undefined, good, errors);
    const s2 = s1.write('ns1/a', good, bad, errors);
    expect(s2).toBe(s1);
    expect(s2.get('ns1/a')).toBe(good);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ reason: 'IndexerError', key: 'ns1/a', resourceVersion: '2' });
    expect(s1.check('ns1/a', bad)).toMatchObject({ reason: 'IndexerError', key: 'ns1/a' });
    expect(s1.check('ns1/a', good)).toBeUndefined();
    // In a batch: the throwing write is skipped, the others land.
    const batch = s1.batch(errors);
    batch.write('ns1/a', good, bad);
    batch.write('ns1/b', undefined, { ...good, metadata: { name: 'b', namespace: 'ns1' } } as Obj);
    const s3 = batch.done();
    expect(s3.get('ns1/a')).toBe(good);
    expect(s3.indexKeys('owner', 'me')).toEqual(['ns1/a', 'ns1/b']);
    expect(errors).toHaveLength(2);
    // Not an array is a fault too.
    expect(Store.empty<Obj>({ x: () => 'nope' as unknown as string[] }).check('k', good)).toMatchObject({ reason: 'IndexerError' });
  });

  it('an index function that throws for an object it once took (impure): a delete still removes the key from the index', () => {
    let fail = false;
    const store = Store.empty<Obj>({
      flaky: (o) => {
        if (fail) throw new Error('flaky');
        return [`v${o.v}`];
      },
    });
    const a = { metadata: { name: 'a', namespace: 'ns1' }, v: 1 } as Obj;
    const s1 = store.write('ns1/a', undefined, a);
    fail = true;
    const s2 = s1.write('ns1/a', a, undefined);
    expect(s2.size).toBe(0);
    expect(s2.indexValues('flaky')).toEqual([]);
  });

  it('a held snapshot is unchanged by later updates (objects, keys and indexes)', () => {
    const a1: Obj = { metadata: { name: 'a', namespace: 'ns1', labels: { app: 'x' } }, v: 1 };
    const a2: Obj = { metadata: { name: 'a', namespace: 'ns2', labels: { app: 'y' } }, v: 2 };
    const s1 = Store.empty<Obj>(indexers).update([['ns1/a', a1]]);
    const s2 = s1.update([
      ['ns1/a', undefined],
      ['ns2/a', a2],
    ]);
    expect(s1.get('ns1/a')).toBe(a1);
    expect(s1.indexKeys('labels', 'app=x')).toEqual(['ns1/a']);
    expect(s1.indexValues('namespace')).toEqual(['ns1']);
    expect(s2.indexValues('labels')).toEqual(['app=y']);
    expect(s2.indexValues('namespace')).toEqual(['ns2']);
    expect(s2.get('ns1/a')).toBeUndefined();
  });

  it('BUG: a batch that writes the same key twice leaves no stale index entry (Store.update)', () => {
    // store.ts update() reads every key's old object from the snapshot before the batch, so the second write
    // of a key is reindexed from `undefined` instead of from the first write: app=x keeps pointing at ns/c.
    const labelled: Obj = { metadata: { name: 'c', namespace: 'ns2', labels: { app: 'x' } }, v: 0 };
    const plain: Obj = { metadata: { name: 'c', namespace: 'ns2' }, v: 1 };
    const store = Store.empty<Obj>(indexers).update([
      ['ns2/c', labelled],
      ['ns2/c', plain],
    ]);
    expect(store.get('ns2/c')).toBe(plain);
    expect(store.indexValues('labels')).toEqual([]);
    expect(store.byIndex('labels', 'app=x')).toEqual([]);
    // and a write then a delete of the same key in one batch leaves nothing behind
    const gone = Store.empty<Obj>(indexers).update([
      ['ns2/c', labelled],
      ['ns2/c', undefined],
    ]);
    expect(gone.size).toBe(0);
    expect(gone.indexValues('labels')).toEqual([]);
    expect(gone.indexValues('namespace')).toEqual([]);
  });

  it('deleting a key that is not there changes nothing', () => {
    const s1 = Store.empty<Obj>(indexers);
    const s2 = s1.update([['ghost', undefined]]);
    expect(s2.size).toBe(0);
    expect(s2.indexValues('labels')).toEqual([]);
  });
});
