import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Store, UnknownIndexError } from '../../src/index.ts';

type Obj = { metadata: { name: string; namespace?: string; labels?: Record<string, string> } };
const obj = (name: string, namespace?: string, team?: string): Obj => ({
  metadata: { name, ...(namespace ? { namespace } : {}), ...(team ? { labels: { team } } : {}) },
});
const key = (o: Obj) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);

describe('Store layout (namespace → name)', () => {
  it('mixes cluster-scoped and namespaced keys; the namespace index is the layout', () => {
    const s = Store.empty<Obj>().update([
      ['n1', obj('n1')],
      ['a/x', obj('x', 'a')],
      ['b/x', obj('x', 'b')],
      ['a/y', obj('y', 'a')],
    ]);
    expect(s.size).toBe(4);
    expect(s.get('n1')?.metadata.name).toBe('n1');
    expect(s.get('a/x')).not.toBe(s.get('b/x'));
    expect(s.indexValues('namespace')).toEqual(['', 'a', 'b']);
    expect(s.indexKeys('namespace', 'a')).toEqual(['a/x', 'a/y']);
    expect(s.byIndex('namespace', '').length).toBe(1);
    expect(s.keys().sort()).toEqual(['a/x', 'a/y', 'b/x', 'n1']);
    const t = s.update([
      ['a/x', undefined],
      ['a/y', undefined],
    ]);
    expect(t.indexValues('namespace')).toEqual(['', 'b']);
    expect(t.size).toBe(2);
    expect(s.size).toBe(4);
    expect(() => s.byIndex('team', 'x')).toThrow(UnknownIndexError);
  });

  it('a custom index named "namespace" replaces the built-in one', () => {
    const s = Store.empty<Obj>({ namespace: (o) => (o.metadata.labels?.team ? [o.metadata.labels.team] : []) }).update([
      ['a/x', obj('x', 'a', 'red')],
      ['b/y', obj('y', 'b', 'red')],
    ]);
    expect(s.indexKeys('namespace', 'red')).toEqual(['a/x', 'b/y']);
    expect(s.indexValues('namespace')).toEqual(['red']);
  });

  it('equals a plain model after any sequence of writes, with cluster-scoped and namespaced keys', () => {
    const write = fc.tuple(
      fc.constantFrom('', 'a', 'b', 'c'),
      fc.constantFrom('x', 'y', 'z', 'a-long-name-over-sixteen-chars'),
      fc.boolean(),
    );
    fc.assert(
      fc.property(fc.array(fc.array(write, { minLength: 1, maxLength: 5 }), { maxLength: 30 }), (batches) => {
        let store = Store.empty<Obj>();
        const model = new Map<string, Obj>();
        for (const batch of batches) {
          const writes: [string, Obj | undefined][] = batch.map(([ns, name, del]) => {
            const o = obj(name, ns || undefined);
            return [key(o), del ? undefined : o];
          });
          store = store.update(writes);
          for (const [k, o] of writes) o ? model.set(k, o) : model.delete(k);
        }
        expect(store.size).toBe(model.size);
        expect(store.keys().sort()).toEqual([...model.keys()].sort());
        for (const [k, o] of model) expect(store.get(k)).toBe(o);
        const namespaces = [...new Set([...model.values()].map((o) => o.metadata.namespace ?? ''))].sort();
        expect(store.indexValues('namespace')).toEqual(namespaces);
        for (const ns of namespaces) {
          expect(store.indexKeys('namespace', ns)).toEqual(
            [...model.entries()]
              .filter(([, o]) => (o.metadata.namespace ?? '') === ns)
              .map(([k]) => k)
              .sort(),
          );
        }
      }),
    );
  });
});
