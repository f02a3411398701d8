import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FieldSelector, fieldChanges, selectFields, type Change } from '../../src/diff.ts';
import { TOO_DEEP, jsonEqual, parseFieldPath } from '../../src/internal.ts';

describe('field patterns', () => {
  it('parse dotted paths, indexes, quoted keys and wildcards; refuse the rest', () => {
    expect(parseFieldPath('spec.containers[0].image')).toEqual(['spec', 'containers', '0', 'image']);
    expect(parseFieldPath('metadata.annotations["app.kubernetes.io/name"]')).toEqual(['metadata', 'annotations', 'app.kubernetes.io/name']);
    expect(parseFieldPath('spec.**.image')).toEqual(['spec', '**', 'image']);
    expect(parseFieldPath('spec.containers[*]')).toEqual(['spec', 'containers', '*']);
    for (const bad of ['.a', 'a.', 'a..b', 'a[', 'a[x]', 'a["b]']) expect(() => parseFieldPath(bad), bad).toThrow(SyntaxError);
  });

  const pod = {
    metadata: { name: 'p', resourceVersion: '1', labels: { app: 'web' }, managedFields: [{ manager: 'k' }] },
    spec: {
      containers: [
        { name: 'a', image: 'x:1' },
        { name: 'b', image: 'y:1' },
      ],
      nodeName: 'n1',
    },
    status: { phase: 'Running' },
  };

  it('select a path and everything under it; ** and * match any keys; ! excludes', () => {
    expect(selectFields(pod, ['spec.**'])).toEqual({ spec: pod.spec });
    expect(selectFields(pod, ['spec'])).toEqual({ spec: pod.spec });
    expect(selectFields(pod, ['**.image'])).toEqual({ spec: { containers: [{ image: 'x:1' }, { image: 'y:1' }] } });
    expect(selectFields(pod, ['spec.containers[*].name', 'metadata.labels'])).toEqual({
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'a' }, { name: 'b' }] },
    });
    expect(selectFields(pod, ['!status', '!metadata.managedFields', '!metadata.resourceVersion'])).toEqual({
      metadata: { name: 'p', labels: { app: 'web' } },
      spec: pod.spec,
    });
    expect(selectFields(pod, ['spec', '!spec.containers[1]'])).toEqual({ spec: { containers: [pod.spec.containers[0]], nodeName: 'n1' } });
    expect(selectFields(pod, ['nothing.here'])).toBeUndefined();
    expect(selectFields(pod, ['!**'])).toBeUndefined();
  });

  it('report changes on selected fields only, whole subtrees that change shape as their selected part', () => {
    const after = {
      ...pod,
      metadata: { ...pod.metadata, resourceVersion: '2' },
      spec: { ...pod.spec, containers: [{ name: 'a', image: 'x:2' }] },
      status: { phase: 'Failed' },
    };
    expect(fieldChanges(pod, after, { fields: ['spec.containers[*].image'] })).toEqual([
      { path: 'spec.containers[0].image', old: 'x:1', new: 'x:2' },
      { path: 'spec.containers[1]', old: { image: 'y:1' } },
    ]);
    expect(fieldChanges(pod, after, { fields: ['!spec', '!metadata.resourceVersion'] })).toEqual([
      { path: 'status.phase', old: 'Running', new: 'Failed' },
    ]);
    expect(fieldChanges({ spec: { a: { b: 1, c: 2 } } }, { spec: { a: 'gone' } }, { fields: ['spec.a.b'] })).toEqual([
      { path: 'spec.a', old: { b: 1 } },
    ]);
  });

  it('does not visit unselected or shared subtrees', () => {
    let reads = 0;
    const spy = new Proxy({ big: Array.from({ length: 100 }, (_, i) => i) }, { ownKeys: (t) => (reads++, Reflect.ownKeys(t)) });
    const shared = { deep: spy };
    expect(fieldChanges({ spec: { x: 1 }, status: shared }, { spec: { x: 2 }, status: shared })).toEqual([
      { path: 'spec.x', old: 1, new: 2 },
    ]);
    expect(
      fieldChanges({ spec: { x: 1 }, status: { deep: spy } }, { spec: { x: 2 }, status: { deep: { big: [] } } }, { fields: ['spec'] }),
    ).toEqual([{ path: 'spec.x', old: 1, new: 2 }]);
    expect(reads).toBe(0);
  });

  it('keeps the depth cap under a selection', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    let deeper: unknown = 2;
    for (let i = 0; i < 10_000; i++) deeper = { d: deeper };
    const changes = fieldChanges({ spec: deep }, { spec: deeper }, { fields: ['spec.**', '!status'], maxDepth: 8 });
    expect(changes).toEqual([{ path: `spec${'.d'.repeat(7)}`, old: TOO_DEEP, new: TOO_DEEP }]);
  });

  it('a key holding undefined is a key left out (JSON has no undefined), at the depth cap too', () => {
    expect([
      jsonEqual({ a: undefined, b: 1 }, { b: 1 }),
      jsonEqual({ b: 1 }, { b: 1, c: undefined }),
      jsonEqual({ a: undefined }, { b: 1 }),
    ]).toEqual([true, true, false]);
    const deep = (leaf: object) => ({ spec: { x: { y: { z: leaf } } } });
    expect(fieldChanges(deep({ n: 1, gone: undefined }), deep({ n: 1 }), { maxDepth: 2 })).toEqual([]);
    expect(fieldChanges(deep({ n: 1, gone: undefined }), deep({ n: 2 }), { maxDepth: 2 })).toEqual([
      { path: 'spec.x', old: TOO_DEEP, new: TOO_DEEP },
    ]);
  });

  it('caps nested arrays as it caps nested records: one TOO_DEEP change at the cap, not one 10,000 levels down', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    let deeper: unknown = 2;
    for (let i = 0; i < 10_000; i++) deeper = [deeper];
    expect(fieldChanges({ spec: deep }, { spec: deeper }, { maxDepth: 8 })).toEqual([
      { path: `spec${'[0]'.repeat(7)}`, old: TOO_DEEP, new: TOO_DEEP },
    ]);
  });
});

/**
 * Sets or removes each change's path in a copy of `object`. A removed array element is the array's end when the new
 * array is no longer than its index (`shape`, the new object, gives only that length), else an element that keeps its
 * place and lost its selected part (`{b:[{a:'s'},{a:0}]}` → `{b:[0,{}]}` under `b.*.a` reports `b[0]` removed): null,
 * which selects nothing. (The model cut the array there too, and random seeds failed now and then: seed 1528329302.)
 */
function apply(object: unknown, changes: readonly Change[], shape: unknown): unknown {
  const root = { value: structuredClone(object) as unknown };
  const shapeRoot = { value: shape };
  for (const change of changes) {
    const path = ['value', ...parseFieldPath(change.path)];
    let node = root as Record<string, unknown> | unknown[];
    let like: unknown = shapeRoot;
    for (const key of path.slice(0, -1)) {
      const next = (node as Record<string, unknown>)[key];
      node = next as Record<string, unknown>;
      like = like !== null && typeof like === 'object' ? (like as Record<string, unknown>)[key] : undefined;
    }
    const last = path[path.length - 1]!;
    if ('new' in change) (node as Record<string, unknown>)[last] = structuredClone(change.new);
    else if (Array.isArray(node)) {
      const length = Array.isArray(like) ? like.length : 0;
      if (Number(last) >= length) node.length = Math.min(node.length, Number(last));
      else node[Number(last)] = null;
    } else delete (node as Record<string, unknown>)[last];
  }
  return root.value;
}

describe('fieldChanges (property)', () => {
  const key = fc.constantFrom('a', 'b', 'c', 'spec', 'status', 'x.y');
  const leaf = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom('s', 't'), fc.boolean(), fc.constant(null));
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    ),
  }));
  const object = fc.dictionary(key, value, { maxKeys: 4 });
  const segment = fc.constantFrom('a', 'b', 'spec', 'status', '*', '**', '0', '1', '["x.y"]');
  const pattern = fc
    .tuple(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 3 }))
    .map(([not, segs]) => `${not ? '!' : ''}${segs.join('.').replace(/\.\[/g, '[')}`);
  /** An edit of `before`: a mix of its values and fresh ones, sharing subtrees as watch events do not (and as resyncs do). */
  const pair = fc.tuple(object, object, fc.boolean()).map(([a, b, mix]) => [a, mix ? { ...a, ...b } : b] as const);

  it('an array element that keeps its place but loses its selected part (seed 1528329302)', () => {
    const before = { b: [{ a: 's' }, { a: 0 }] };
    const after = { b: [0, {}] };
    const selector = new FieldSelector(['b.*.a']);
    const changes = fieldChanges(before, after, { fields: selector });
    expect(changes).toEqual([
      { path: 'b[0]', old: { a: 's' } },
      { path: 'b[1].a', old: 0 },
    ]);
    expect(selectFields(apply(before, changes, after), selector)).toEqual(selectFields(after, selector));
  });

  // 1,000 runs take about a second alone, several on a loaded machine: the time limit is not the oracle.
  it('the changes, applied to the old object, give the new one on the selected fields', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(pair, fc.array(pattern, { maxLength: 3 }), ([before, after], fields) => {
        const selector = new FieldSelector(fields);
        const changes = fieldChanges(before, after, { fields: selector });
        expect(selectFields(apply(before, changes, after), selector)).toEqual(selectFields(after, selector));
        // Nothing is reported that the selection leaves out, and no change is empty.
        for (const c of changes) expect('old' in c || 'new' in c).toBe(true);
        expect(fieldChanges(after, after, { fields: selector })).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });
});
