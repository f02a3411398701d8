/**
 * The sharded informer's cache rules (src/5-informer/shardCache.ts), row by row: a state, an input,
 * the effects in order and what the state becomes. The rules' table is in the module's JSDoc.
 */
import { describe, expect, it } from 'vitest';
import {
  initialShardCache,
  isFilling,
  shardCacheStep,
  type ShardCacheEffect,
  type ShardCacheInput,
  type ShardCacheState,
} from '../../src/5-informer/shardCache.ts';

const set = (...shards: number[]): ReadonlySet<number> => new Set(shards);

/** A state: the machine's initial one with the handle's `assigned$`, then these fields (owned/cached derived unless given). */
function state(fields: Partial<ShardCacheState> = {}): ShardCacheState {
  const base = { ...initialShardCache(true), ...fields };
  const wanted = fields.wanted ?? new Set([...base.held, ...base.assigned]);
  const owned = fields.owned ?? new Set([...base.held].filter((shard) => base.covered.has(shard)));
  return { ...base, wanted, owned, cached: fields.cached ?? base.covered };
}

const ready = { ready: true, known: true } as const;

interface Row {
  readonly rule: string;
  readonly from: ShardCacheState;
  readonly input: ShardCacheInput;
  readonly effects: readonly ShardCacheEffect[];
  /** Fields of the next state. */
  readonly then?: Partial<ShardCacheState>;
}

const ROWS: readonly Row[] = [
  {
    rule: 'without assigned$, the first list starts once ready',
    from: initialShardCache(false),
    input: { type: 'ready' },
    effects: [{ type: 'list' }],
    then: { running: true, listing: set() },
  },
  {
    rule: 'with assigned$, no list before the assignment is known',
    from: state(),
    input: { type: 'ready' },
    effects: [],
    then: { ready: true, running: false },
  },
  {
    rule: 'the assignment known: the first list, for the shards assigned',
    from: state({ ready: true }),
    input: { type: 'assigned', shards: set(0) },
    effects: [{ type: 'list' }],
    then: { known: true, wanted: set(0), listing: set(0), running: true },
  },
  {
    rule: 'a shard held makes the assignment known too',
    from: state({ ready: true }),
    input: { type: 'held', shards: set(1) },
    effects: [{ type: 'list' }],
    then: { known: true, wanted: set(1), listing: set(1) },
  },
  {
    rule: 'not ready (the handle replays its values first): nothing starts',
    from: state(),
    input: { type: 'assigned', shards: set(0) },
    effects: [],
    then: { known: true, wanted: set(0), running: false, listing: undefined },
  },
  {
    rule: "the list's objects cached: its shards are covered, cached published; owned only where held",
    from: state({ ...ready, assigned: set(0, 1), held: set(1), running: true, listing: set(0, 1) }),
    input: { type: 'listed' },
    effects: [
      { type: 'cached', shards: set(0, 1) },
      { type: 'owned', shards: set(1) },
    ],
    then: { covered: set(0, 1), listing: undefined },
  },
  {
    rule: "a relist of the reflector's own (no list pending): nothing changes",
    from: state({ ...ready, held: set(0), covered: set(0), running: true }),
    input: { type: 'listed' },
    effects: [],
    then: { covered: set(0), listing: undefined },
  },
  {
    rule: 'an assigned shard whose Lease is taken: owned at once, no list',
    from: state({ ...ready, assigned: set(0), covered: set(0), running: true }),
    input: { type: 'held', shards: set(0) },
    effects: [{ type: 'owned', shards: set(0) }],
    then: { owned: set(0) },
  },
  {
    rule: 'a shard joins while running: one list again, for every shard kept',
    from: state({ ...ready, held: set(0), covered: set(0), running: true }),
    input: { type: 'assigned', shards: set(1) },
    effects: [{ type: 'list' }],
    then: { wanted: set(0, 1), listing: set(0, 1), covered: set(0) },
  },
  {
    rule: 'a shard that leaves while its list runs: out of that list, and evicted',
    from: state({ ...ready, held: set(0), assigned: set(1), covered: set(0), running: true, listing: set(0, 1) }),
    input: { type: 'assigned', shards: set() },
    effects: [{ type: 'evict', shards: set(1) }],
    then: { wanted: set(0), listing: set(0), covered: set(0) },
  },
  {
    rule: 'a shard handed over: not owned, not cached (published first), then evicted',
    from: state({ ...ready, held: set(0, 1), covered: set(0, 1), running: true }),
    input: { type: 'held', shards: set(0) },
    effects: [
      { type: 'cached', shards: set(0) },
      { type: 'owned', shards: set(0) },
      { type: 'evict', shards: set(1) },
    ],
    then: { covered: set(0), wanted: set(0) },
  },
  {
    rule: 'a Lease lost while the shard is still assigned: not owned, still cached',
    from: state({ ...ready, held: set(0), assigned: set(0), covered: set(0), running: true }),
    input: { type: 'held', shards: set() },
    effects: [{ type: 'owned', shards: set() }],
    then: { covered: set(0), cached: set(0), wanted: set(0) },
  },
  {
    rule: 'the same shards again: nothing',
    from: state({ ...ready, held: set(0), covered: set(0), running: true }),
    input: { type: 'held', shards: set(0) },
    effects: [],
  },
  {
    rule: 'stop: everything forgotten, owned and cached published empty',
    from: state({ ...ready, held: set(0, 2), covered: set(0, 1, 2), running: true }),
    input: { type: 'stop' },
    effects: [
      { type: 'cached', shards: set() },
      { type: 'owned', shards: set() },
    ],
    then: { running: false, wanted: set(), covered: set(), listing: undefined },
  },
];

describe('shardCacheStep: the rules, row by row', () => {
  for (const row of ROWS) {
    it(row.rule, () => {
      const { state: next, effects } = shardCacheStep(row.from, row.input);
      expect(effects).toEqual(row.effects);
      if (row.then) expect(next).toMatchObject(row.then);
      // owned and cached always say what held and covered make them.
      expect(next.cached).toEqual(next.covered);
      expect(next.owned).toEqual(new Set([...next.held].filter((shard) => next.covered.has(shard))));
    });
  }

  it('a list is a fill list from its start until its objects are cached', () => {
    const started = shardCacheStep(state({ ready: true }), { type: 'assigned', shards: set(0) }).state;
    expect(isFilling(started)).toBe(true);
    expect(isFilling(shardCacheStep(started, { type: 'listed' }).state)).toBe(false);
  });

  it('the step is pure: the state it was given is unchanged', () => {
    const from = state({ ...ready, held: set(0, 1), covered: set(0, 1), running: true });
    const copy = structuredClone(from);
    shardCacheStep(from, { type: 'held', shards: set(0) });
    expect(from).toEqual(copy);
  });
});
