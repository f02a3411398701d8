import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { type InformerEvent } from '../../src/index.ts';
import { EventQueue } from '../../src/pipeline.ts';
import type { KeyedBacklog } from '../../src/util/keyedBacklog.ts';

type Obj = { metadata: { name: string; namespace?: string; uid: string; resourceVersion: string } };

/**
 * Random informer event streams that are consistent per key (add, updates, delete, re-add…), with resync ticks: the
 * cached object again, or a relist's unchanged copy of it (same resourceVersion, another object, which the cache then
 * holds). Every real change bumps the resourceVersion, so an update is a resync exactly when its two versions agree.
 */
const streams = fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.nat(11)), { maxLength: 120 }).map((steps) => {
  const live = new Map<string, Obj>();
  const events: InformerEvent<Obj>[] = [];
  let rv = 0;
  let uid = 0;
  for (const [name, roll] of steps) {
    const current = live.get(name);
    if (current && roll >= 10) {
      const object = roll === 10 ? current : { metadata: { ...current.metadata } };
      live.set(name, object);
      events.push({ type: 'updated', oldObject: current, object, isInInitialList: false, resync: true });
      continue;
    }
    const next: Obj = { metadata: { name, uid: current && roll < 8 ? current.metadata.uid : `u${++uid}`, resourceVersion: String(++rv) } };
    if (!current) {
      live.set(name, next);
      events.push({ type: 'added', object: next, isInInitialList: false });
    } else if (roll < 6) {
      live.set(name, next);
      events.push({ type: 'updated', oldObject: current, object: next, isInInitialList: false, resync: false });
    } else {
      live.delete(name);
      events.push({ type: 'deleted', object: current, finalStateUnknown: false, isInInitialList: false });
    }
  }
  return { events, final: live };
});

function apply(model: Map<string, Obj>, event: InformerEvent<Obj>) {
  if (event.type === 'deleted') model.delete(event.object.metadata.name);
  else model.set(event.object.metadata.name, event.object);
}

describe('EventQueue', () => {
  it('merges per key: a consumer that drains at any moment ends at the informer state, with a backlog of at most two per key', () => {
    fc.assert(
      fc.property(streams, fc.array(fc.nat(120)), ({ events, final }, drainPoints) => {
        const queue = new EventQueue<Obj>();
        const seen = new Map<string, Obj>();
        const lastType = new Map<string, string>();
        const drain = () => {
          for (let e = queue.shift(); e; e = queue.shift()) {
            const name = e.object.metadata.name;
            const before = lastType.get(name);
            // Consistency: no update or delete of something the consumer does not have, no second add.
            if (e.type === 'added') expect(seen.has(name)).toBe(false);
            else expect(seen.has(name)).toBe(true);
            if (e.type === 'updated') expect(e.oldObject).toBe(seen.get(name));
            // A change merged with a resync tick is still a change (skipResync() and diff() would drop it otherwise).
            if (e.type === 'updated') expect(e.resync).toBe(e.object.metadata.resourceVersion === e.oldObject.metadata.resourceVersion);
            lastType.set(name, e.type ?? before);
            apply(seen, e);
          }
        };
        const stops = new Set(drainPoints);
        events.forEach((event, i) => {
          queue.push(event);
          expect(queue.size).toBeLessThanOrEqual(2 * queue.keys);
          if (stops.has(i)) drain();
        });
        drain();
        expect(seen).toEqual(final);
        // The very objects the cache holds (a relist's copy included), not deep-equal stale ones.
        for (const [name, object] of final) expect(seen.get(name)).toBe(object);
      }),
    );
  });

  it('an added of the initial list stays of it when a resync merges into it, not when a change does', () => {
    const v1: Obj = { metadata: { name: 'x', uid: '1', resourceVersion: '1' } };
    const relisted: Obj = { metadata: { name: 'x', uid: '1', resourceVersion: '1' } }; // a relist's copy, unchanged
    const v2: Obj = { metadata: { name: 'x', uid: '1', resourceVersion: '2' } };
    const initial: InformerEvent<Obj> = { type: 'added', object: v1, isInInitialList: true };
    const q = new EventQueue<Obj>();
    q.push(initial);
    q.push({ type: 'updated', oldObject: v1, object: v1, isInInitialList: false, resync: true }); // a resync tick
    expect(q.shift()).toBe(initial);
    q.push(initial);
    q.push({ type: 'updated', oldObject: v1, object: relisted, isInInitialList: false, resync: true });
    // the cache's object (what the next event's oldObject will be), still of the initial list
    const merged = q.shift();
    expect(merged).toEqual({ type: 'added', object: relisted, isInInitialList: true });
    expect(merged?.object).toBe(relisted); // the copy itself: toEqual alone passes with the stale v1
    q.push(initial);
    q.push({ type: 'updated', oldObject: v1, object: v2, isInInitialList: false, resync: false });
    expect(q.shift()).toEqual({ type: 'added', object: v2, isInInitialList: false });
  });

  it('keeps a delete followed by a recreate as two events', () => {
    const q = new EventQueue<Obj>();
    const v1: Obj = { metadata: { name: 'x', uid: '1', resourceVersion: '1' } };
    const v2: Obj = { metadata: { name: 'x', uid: '2', resourceVersion: '2' } };
    q.push({ type: 'deleted', object: v1, finalStateUnknown: false, isInInitialList: false });
    q.push({ type: 'added', object: v2, isInInitialList: false });
    expect([q.shift()?.type, q.shift()?.type, q.shift()]).toEqual(['deleted', 'added', undefined]);
  });

  it('a stalled handler and names created and deleted without end: the keys whose events cancelled out take no room past 1,024', () => {
    const q = new EventQueue<Obj>();
    const obj = (name: string, rv: number): Obj => ({ metadata: { name, namespace: 'ns', uid: name, resourceVersion: String(rv) } });
    q.push({ type: 'added', object: obj('head', 1), isInInitialList: false }); // the handler is stuck before it
    for (let i = 0; i < 20_000; i++) {
      const o = obj(`job-${i}`, i + 2);
      q.push({ type: 'added', object: o, isInInitialList: false });
      q.push({ type: 'deleted', object: o, finalStateUnknown: false, isInInitialList: false });
    }
    expect([q.size, q.keys]).toEqual([1, 1]);
    const backlog = (q as unknown as { items: KeyedBacklog<unknown> }).items; // private: what it holds
    expect(backlog.held).toBeLessThanOrEqual(2 * 1 + 1024);
    expect(q.shift()?.object.metadata.name).toBe('head');
  });

  it('an added of the initial list and an updated after it: one added, not of the initial list (client-go delivers both)', () => {
    const q = new EventQueue<Obj>();
    const v1: Obj = { metadata: { name: 'x', uid: '1', resourceVersion: '1' } };
    const v2: Obj = { metadata: { name: 'x', uid: '1', resourceVersion: '2' } };
    q.push({ type: 'added', object: v1, isInInitialList: true });
    q.push({ type: 'updated', oldObject: v1, object: v2, isInInitialList: false, resync: false });
    expect([q.shift(), q.shift()]).toEqual([{ type: 'added', object: v2, isInInitialList: false }, undefined]);
  });
});
