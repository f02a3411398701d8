/**
 * deltaFifo builds a list's batch without its queue when nothing is known, queued or being handed on (the first list,
 * as a rule; see `listDirect`). That batch must be the one the queue makes: every listed key once, in first-arrival
 * order, a key listed twice coalesced into one entry of two Replaced deltas, whatever the order of the keys (sorted, as
 * an API server lists them, or not), and a keyOf that throws leaving the queue as it would (what came before it goes
 * out with the next step). The reference below is the queue itself (`DeltaQueue`), fed as the general path feeds it.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Subject, type Observable, type Observer } from 'rxjs';
import { DeltaQueue } from '../../src/3-deltas/deltaQueue.ts';
import { deltaFifo, type Deltas, type FifoOutput, type SourceEvent } from '../../src/pipeline.ts';
import type { KubeObject } from '../../src/index.ts';

type Obj = KubeObject;

const NAMES = ['a', 'b', 'c', 'd', 'e', 'ab', 'b/c'];
const itemArb = fc.record({ name: fc.constantFrom(...NAMES), namespace: fc.constantFrom('', 'x', 'y', 'x-y'), rv: fc.nat(99) });

const caseArb = fc.record({
  items: fc.array(itemArb, { maxLength: 24 }),
  /** Listed in key order (an API server's), duplicates adjacent. */
  sorted: fc.boolean(),
  /** An empty list first: the list into an empty cache is a relist (isInInitialList false). */
  emptyListFirst: fc.boolean(),
  /** keyOf throws for the item at this index (once), when there is one. */
  throwAt: fc.option(fc.nat(30), { nil: undefined }),
});

/**
 * The operator over a source that hands each event straight to it (no rxjs subscriber between them, which would
 * report a throw later, elsewhere): `next` throws what the operator's step throws.
 */
function feed(keyOf: (o: Obj) => string, out: FifoOutput<Obj>[]): (event: SourceEvent<Obj>) => void {
  let inner: Observer<SourceEvent<Obj>> | undefined;
  const source = { subscribe: (observer: Observer<SourceEvent<Obj>>) => ((inner = observer), { unsubscribe: () => {} }) };
  deltaFifo<Obj>({ keyOf })(source as unknown as Observable<SourceEvent<Obj>>).subscribe((o) => out.push(o));
  return (event) => inner!.next(event);
}

const keyOfObj = (o: Obj) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name!);

/** What the queue hands on for the same steps: each item queued (until keyOf throws), then the next step drains it. */
function reference(objects: readonly Obj[], throwAt: number | undefined, isInInitialList: boolean, extra: Obj): Deltas<Obj>[][] {
  const queue = new DeltaQueue<Obj>();
  const drain = () => {
    const out: Deltas<Obj>[] = [];
    for (let next = queue.pop(); next; next = queue.pop()) out.push(next);
    return out;
  };
  const upTo = throwAt !== undefined && throwAt < objects.length ? throwAt : objects.length;
  for (let i = 0; i < upTo; i++) queue.add(keyOfObj(objects[i]!), { type: 'Replaced', object: objects[i]! }, isInInitialList);
  if (upTo < objects.length) {
    // The list's step never came (keyOf threw); the watch event after it drains what was queued, and itself.
    queue.add(keyOfObj(extra), { type: 'Added', object: extra }, isInInitialList);
    return [drain()];
  }
  // A list handing on nothing is a batch only when it is the first.
  const batch = drain();
  return batch.length === 0 && !isInInitialList ? [] : [batch];
}

describe('deltaFifo: a list into an empty queue and cache', () => {
  it('property: hands on the batch its queue would, keys sorted or not, listed twice or not, keyOf throwing or not', () => {
    fc.assert(
      fc.property(caseArb, ({ items, sorted, emptyListFirst, throwAt }) => {
        let objects: Obj[] = items.map(({ name, namespace, rv }) => ({
          metadata: namespace === '' ? { name, resourceVersion: String(rv) } : { name, namespace, resourceVersion: String(rv) },
        }));
        if (sorted) objects = [...objects].sort((p, q) => (keyOfObj(p) < keyOfObj(q) ? -1 : keyOfObj(p) > keyOfObj(q) ? 1 : 0));
        let calls = 0;
        let thrown = false;
        const keyOf = (o: Obj) => {
          if (throwAt !== undefined && !thrown && calls++ === throwAt) {
            thrown = true;
            throw new Error('keyOf');
          }
          return keyOfObj(o);
        };
        const out: FifoOutput<Obj>[] = [];
        const next = feed(keyOf, out);
        if (emptyListFirst) next({ type: 'replace', items: [], resourceVersion: '1' });
        out.length = 0;
        const extra: Obj = { metadata: { name: 'zz', namespace: 'x', resourceVersion: '3' } };
        if (throwAt !== undefined && throwAt < objects.length) {
          expect(() => next({ type: 'replace', items: objects, resourceVersion: '2' })).toThrow('keyOf');
          expect(out).toEqual([]);
          next({ type: 'added', object: extra, resourceVersion: '3' });
        } else next({ type: 'replace', items: objects, resourceVersion: '2' });
        const threw = thrown;
        expect(out.map((o) => (o.type === 'deltas' ? o.items : []))).toEqual(
          reference(objects, threw ? throwAt : undefined, !emptyListFirst, extra),
        );
        const steps = threw ? [['event', '3']] : objects.length === 0 && emptyListFirst ? [] : [['replace', '2']];
        expect(out.map((o) => (o.type === 'deltas' ? [o.cause, o.resourceVersion] : o.type))).toEqual(steps);
      }),
      { numRuns: 2000 },
    );
  });

  it('examples: sorted and distinct; a key listed twice, adjacent or apart; then a relist against what it handed on', () => {
    const o = (name: string, rv: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
    const run = (...lists: Obj[][]) => {
      const source = new Subject<SourceEvent<Obj>>();
      const out: FifoOutput<Obj>[] = [];
      source.pipe(deltaFifo()).subscribe((x) => out.push(x));
      lists.forEach((items, i) => source.next({ type: 'replace', items, resourceVersion: String(i + 1) }));
      return out.map((x) =>
        x.type === 'deltas' ? x.items.map((e) => `${e.key}:${e.deltas.map((d) => d.type[0]).join('')}:${e.isInInitialList}`) : [],
      );
    };
    expect(run([o('a', '1'), o('b', '2'), o('c', '3')])).toEqual([['ns/a:R:true', 'ns/b:R:true', 'ns/c:R:true']]);
    expect(run([o('a', '1'), o('a', '2'), o('b', '3')])).toEqual([['ns/a:RR:true', 'ns/b:R:true']]);
    expect(run([o('b', '1'), o('a', '2'), o('c', '3'), o('a', '4')])).toEqual([['ns/b:R:true', 'ns/a:RR:true', 'ns/c:R:true']]);
    // What the first list handed on is known: the relist tombstones what it lacks.
    expect(run([o('a', '1'), o('b', '2')], [o('b', '3')])).toEqual([
      ['ns/a:R:true', 'ns/b:R:true'],
      ['ns/b:R:false', 'ns/a:D:false'],
    ]);
  });
});
