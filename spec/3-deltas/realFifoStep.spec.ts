/**
 * realFifo's rules (src/3-deltas/realFifoStep.ts), row by row: a state, a source event and what the
 * consumer holds, the outputs in order and the next state. The rules are listed in realFifo's JSDoc;
 * the shell (re-entrancy, its own knownObjects) is tested by marbles/3-deltas/realFifo.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { InformerError, keyOf, type KubeObject } from '../../src/index.ts';
import type { DeltaBatch, FifoOutput, KnownObjects, SourceEvent } from '../../src/pipeline.ts';
import type { FillReplace, MissedDeletion } from '../../src/3-deltas/deltas.ts';
import { handOn, initialRealFifo, realFifoStep, type RealFifoState } from '../../src/3-deltas/realFifoStep.ts';

type Obj = KubeObject;
const o = (name: string, rv: string, uid?: string): Obj => ({
  metadata: uid === undefined ? { name, namespace: 'ns', resourceVersion: rv } : { name, namespace: 'ns', resourceVersion: rv, uid },
});
const a1 = o('a', '1'),
  a2 = o('a', '2'),
  b1 = o('b', '1'),
  b2 = o('b', '2'),
  c1 = o('c', '1'),
  au1 = o('a', '1', 'uid-1'),
  au5 = o('a', '5', 'uid-2');

const replace = (rv: string, ...items: Obj[]): SourceEvent<Obj> => ({ type: 'replace', items, resourceVersion: rv });
const fill = (rv: string, ...items: Obj[]): SourceEvent<Obj> => {
  const event: FillReplace<Obj> = { type: 'replace', items, resourceVersion: rv, fill: true };
  return event;
};
const missed = (object: Obj, rv: string): SourceEvent<Obj> => {
  const event: MissedDeletion<Obj> = { type: 'deleted', object, resourceVersion: rv, finalStateUnknown: true };
  return event;
};
const known = (...objects: Obj[]): KnownObjects<Obj> => new Map(objects.map((object) => [keyOf(object), object]));
const tomb = (object: Obj) => ({ finalStateUnknown: true as const, key: keyOf(object), object });

/** A batch written as its deltas, `'Type key'` each, `+` joining one entry's; `*` after the key marks isInInitialList. */
function show(output: FifoOutput<Obj>): string {
  if (output.type !== 'deltas') return output.type;
  const items = output.items.map((item) =>
    item.deltas
      .map((d) => `${d.type} ${item.key}${item.isInInitialList ? '*' : ''}${'finalStateUnknown' in d.object ? ' (tombstone)' : ''}`)
      .join('+'),
  );
  return `${output.cause}@${output.resourceVersion ?? '-'}: ${items.join(', ')}`;
}

const synced: RealFifoState = { synced: true };

interface Row {
  readonly rule: string;
  readonly from: RealFifoState;
  readonly event: SourceEvent<Obj>;
  readonly known?: KnownObjects<Obj>;
  /** The outputs, as {@link show} writes them. */
  readonly outputs: readonly string[];
  readonly then: RealFifoState;
}

const ROWS: readonly Row[] = [
  {
    rule: 'added → Added, a one-key batch of its own, at its resourceVersion',
    from: synced,
    event: { type: 'added', object: a1, resourceVersion: '1' },
    outputs: ['event@1: Added ns/a'],
    then: synced,
  },
  {
    rule: 'modified → Updated',
    from: synced,
    event: { type: 'modified', object: a2, resourceVersion: '2' },
    known: known(a1),
    outputs: ['event@2: Updated ns/a'],
    then: synced,
  },
  {
    rule: 'deleted → Deleted',
    from: synced,
    event: { type: 'deleted', object: a2, resourceVersion: '3' },
    known: known(a1),
    outputs: ['event@3: Deleted ns/a'],
    then: synced,
  },
  {
    rule: 'a MissedDeletion (deleted, finalStateUnknown: a list noticed it) → Deleted carrying a tombstone of its object',
    from: synced,
    event: missed(a2, '3'),
    known: known(a2),
    outputs: ['event@3: Deleted ns/a (tombstone)'],
    then: synced,
  },
  {
    rule: 'deleted of a key the consumer does not hold: handed on all the same (two Deleted in a row stay two)',
    from: synced,
    event: { type: 'deleted', object: a2, resourceVersion: '4' },
    outputs: ['event@4: Deleted ns/a'],
    then: synced,
  },
  {
    rule: 'before the initial list ends, a watch event carries isInInitialList',
    from: initialRealFifo,
    event: { type: 'added', object: a1, resourceVersion: '1' },
    outputs: ['event@1: Added ns/a*'],
    then: initialRealFifo,
  },
  {
    rule: 'deletedKey → Deleted carrying the known object',
    from: synced,
    event: { type: 'deletedKey', key: 'ns/a', resourceVersion: '5' },
    known: known(a2),
    outputs: ['event@5: Deleted ns/a'],
    then: synced,
  },
  {
    rule: 'deletedKey of a key nothing is known for: nothing',
    from: synced,
    event: { type: 'deletedKey', key: 'ns/a', resourceVersion: '5' },
    known: known(b1),
    outputs: [],
    then: synced,
  },
  {
    rule: 'the first replace, nothing known: Replaced per listed object in list order, isInInitialList; synced',
    from: initialRealFifo,
    event: replace('1', b1, a1),
    outputs: ['replace@1: Replaced ns/b*, Replaced ns/a*'],
    then: synced,
  },
  {
    rule: 'the first replace, even an empty one, ends the initial list: an empty batch',
    from: initialRealFifo,
    event: replace('1'),
    outputs: ['replace@1: '],
    then: synced,
  },
  {
    rule: 'a later empty replace with nothing known: nothing',
    from: synced,
    event: replace('7'),
    outputs: [],
    then: synced,
  },
  {
    rule: 'replace: the tombstones of the known keys it lacks first, then Replaced in list order',
    from: synced,
    event: replace('2', c1, b2),
    known: known(a1, b1),
    outputs: ['replace@2: Deleted ns/a (tombstone), Replaced ns/c, Replaced ns/b'],
    then: synced,
  },
  {
    rule: 'replace: rejectedKeys count as listed (no tombstone for what they name)',
    from: synced,
    event: { type: 'replace', items: [b2], resourceVersion: '2', rejectedKeys: ['ns/a'] },
    known: known(a1, b1),
    outputs: ['replace@2: Replaced ns/b'],
    then: synced,
  },
  {
    rule: "replace: a listed object under another uid is one entry, the old object's tombstone then Replaced, at its place",
    from: synced,
    event: replace('5', b1, au5),
    known: known(au1, b1),
    outputs: ['replace@5: Replaced ns/b, Deleted ns/a (tombstone)+Replaced ns/a'],
    then: synced,
  },
  {
    rule: 'replace: the same uid, or no uid on either side: a plain Replaced',
    from: synced,
    event: replace('5', o('a', '5', 'uid-1'), b2),
    known: known(au1, b1),
    outputs: ['replace@5: Replaced ns/a, Replaced ns/b'],
    then: synced,
  },
  {
    rule: 'a fill replace: no Replaced for an object held unchanged; changed, new and missing ones as in a plain one',
    from: synced,
    event: fill('3', a1, b2, c1),
    known: known(a1, b1, o('d', '1')),
    outputs: ['replace@3: Deleted ns/d (tombstone), Replaced ns/b, Replaced ns/c'],
    then: synced,
  },
  {
    rule: 'a fill replace that finds everything unchanged: nothing (once synced)',
    from: synced,
    event: fill('3', a1),
    known: known(a1),
    outputs: [],
    then: synced,
  },
  {
    rule: 'a batch never holds a key twice: a list naming a key twice is split before the repeat',
    from: initialRealFifo,
    event: replace('2', a1, b1, a2, c1),
    outputs: ['replace@2: Replaced ns/a*, Replaced ns/b*', 'replace@2: Replaced ns/a*, Replaced ns/c*'],
    then: synced,
  },
  {
    rule: 'resync → Sync for every known object, one batch without a resourceVersion',
    from: synced,
    event: { type: 'resync' },
    known: known(a1, b1),
    outputs: ['resync@-: Sync ns/a, Sync ns/b'],
    then: synced,
  },
  {
    rule: 'resync with nothing known: nothing',
    from: synced,
    event: { type: 'resync' },
    outputs: [],
    then: synced,
  },
  {
    rule: 'bookmark passes through',
    from: synced,
    event: { type: 'bookmark', resourceVersion: '9' },
    outputs: ['bookmark'],
    then: synced,
  },
  {
    rule: 'watch passes through, before the initial list too',
    from: initialRealFifo,
    event: { type: 'watch', resourceVersion: '9' },
    outputs: ['watch'],
    then: initialRealFifo,
  },
  {
    rule: 'error passes through',
    from: synced,
    event: { type: 'error', error: new InformerError('NetworkError', 'reset', { phase: 'watch' }) },
    outputs: ['error'],
    then: synced,
  },
];

describe('realFifoStep: the rules, row by row', () => {
  for (const row of ROWS) {
    it(row.rule, () => {
      const step = realFifoStep(row.from, { event: row.event, known: row.known ?? known() }, keyOf);
      expect(step.outputs.map(show)).toEqual(row.outputs);
      expect(step.state).toEqual(row.then);
    });
  }

  it('passes bookmarks, watch starts and errors on as the very objects it was given', () => {
    const event: SourceEvent<Obj> = { type: 'bookmark', resourceVersion: '9' };
    expect(realFifoStep(synced, { event, known: known() }, keyOf).outputs[0]).toBe(event);
  });

  it('hands on the objects themselves: the known one for deletedKey and in tombstones, the listed one in Replaced', () => {
    const [batch] = realFifoStep(synced, { event: replace('2', b2), known: known(a1, b1) }, keyOf).outputs as DeltaBatch<Obj>[];
    expect(batch!.items.map((item) => item.deltas)).toEqual([[{ type: 'Deleted', object: tomb(a1) }], [{ type: 'Replaced', object: b2 }]]);
    const [deleted] = realFifoStep(synced, { event: { type: 'deletedKey', key: 'ns/a', resourceVersion: '3' }, known: known(a2) }, keyOf)
      .outputs as DeltaBatch<Obj>[];
    expect(deleted!.items[0]!.deltas[0]!.object).toBe(a2);
  });

  it('uses the key function it is given', () => {
    const step = realFifoStep(
      synced,
      { event: { type: 'added', object: a1, resourceVersion: '1' }, known: known() },
      (x: Obj) => `k:${x.metadata.name}`,
    );
    expect(step.outputs.map(show)).toEqual(['event@1: Added k:a']);
  });
});

describe('handOn: the shell keeps its own knownObjects as a consumer would', () => {
  const rows: readonly { rule: string; before: readonly Obj[]; event: SourceEvent<Obj>; after: readonly Obj[] }[] = [
    {
      rule: 'an Added or Updated holds its object',
      before: [a1],
      event: { type: 'modified', object: a2, resourceVersion: '2' },
      after: [a2],
    },
    { rule: 'a Deleted forgets the key', before: [a1, b1], event: { type: 'deleted', object: a1, resourceVersion: '2' }, after: [b1] },
    { rule: "a recreated key's entry holds the new object (its last delta)", before: [au1], event: replace('5', au5), after: [au5] },
    { rule: 'a tombstone forgets the key', before: [a1, b1], event: replace('5', b1), after: [b1] },
  ];
  for (const row of rows) {
    it(row.rule, () => {
      const own = new Map(row.before.map((object) => [keyOf(object), object]));
      const step = realFifoStep(synced, { event: row.event, known: own }, keyOf);
      for (const output of step.outputs) if (output.type === 'deltas') handOn(own, output);
      expect([...own.values()]).toEqual(row.after);
    });
  }
});
