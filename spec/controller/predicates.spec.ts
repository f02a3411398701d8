import { describe, expect, it } from 'vitest';
import { from, toArray, lastValueFrom } from 'rxjs';
import { type InformerEvent, type KubeObject } from '../../src/index.ts';
import {
  and,
  annotationsChanged,
  generationChanged,
  labelsChanged,
  not,
  or,
  resourceVersionChanged,
  where,
} from '../../src/controller/index.ts';

const o = (
  uid: string,
  generation: number,
  rv: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): KubeObject => ({
  metadata: { name: 'x', namespace: 'ns', uid, generation, resourceVersion: rv, labels, annotations },
});
const upd = (a: KubeObject, b: KubeObject, resync = false): InformerEvent<KubeObject> => ({
  type: 'updated',
  oldObject: a,
  object: b,
  isInInitialList: false,
  resync,
});

describe('predicates', () => {
  const base = o('u1', 1, '1', { app: 'a' }, { note: 'n' });
  it('generationChanged passes spec changes, adds and deletes; drops status-only updates and resyncs', () => {
    const p = generationChanged();
    expect(p(upd(base, o('u1', 2, '2')))).toBe(true);
    expect(p(upd(base, o('u1', 1, '2', { app: 'a' })))).toBe(false);
    expect(p(upd(base, base, true))).toBe(false);
    expect(p({ type: 'added', object: base, isInInitialList: true })).toBe(true);
    expect(p({ type: 'deleted', object: base, finalStateUnknown: false, isInInitialList: false })).toBe(true);
  });

  it('lets a delete-and-recreate under the same name through (uid changed) whatever else is equal', () => {
    const recreated = o('u2', 1, '9', { app: 'a' }, { note: 'n' });
    for (const p of [generationChanged(), labelsChanged(), annotationsChanged()]) expect(p(upd(base, recreated))).toBe(true);
  });

  it('labels, annotations, resourceVersion and the combinators', () => {
    const relabelled = o('u1', 1, '2', { app: 'b' }, { note: 'n' });
    const reannotated = o('u1', 1, '3', { app: 'a' }, { note: 'm' });
    expect(labelsChanged()(upd(base, relabelled))).toBe(true);
    expect(labelsChanged()(upd(base, reannotated))).toBe(false);
    expect(annotationsChanged()(upd(base, reannotated))).toBe(true);
    expect(resourceVersionChanged()(upd(base, base, true))).toBe(false);
    expect(resourceVersionChanged()(upd(base, reannotated))).toBe(true);
    expect(or(labelsChanged(), annotationsChanged())(upd(base, reannotated))).toBe(true);
    expect(and(labelsChanged(), annotationsChanged())(upd(base, reannotated))).toBe(false);
    expect(not(labelsChanged())(upd(base, reannotated))).toBe(true);
  });

  it('null labels or annotations (as a server may send an empty map) equal an empty or missing map', () => {
    const nulls: KubeObject = {
      metadata: { name: 'x', namespace: 'ns', uid: 'u1', generation: 1, resourceVersion: '2', labels: null, annotations: null },
    };
    const empty = o('u1', 1, '3');
    expect(labelsChanged()(upd(nulls, empty))).toBe(false);
    expect(annotationsChanged()(upd(empty, nulls))).toBe(false);
    expect(labelsChanged()(upd(nulls, base))).toBe(true);
  });

  it('where() filters a stream', async () => {
    const events = [upd(base, o('u1', 2, '2')), upd(base, o('u1', 1, '3'))];
    const kept = await lastValueFrom(from(events).pipe(where(generationChanged()), toArray()));
    expect(kept).toEqual([events[0]]);
  });
});
