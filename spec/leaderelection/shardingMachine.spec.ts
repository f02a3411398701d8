/**
 * The rules of `sharding()`'s pure machine (src/leaderelection/shardingMachine.ts, listed in its header), one row each:
 * a history of inputs (each at a time on our clock, with the shards that have work in flight), then what the last
 * step must have decided. The shell, the elections and the timing bounds are covered by the marble specs and the
 * sharding property test.
 */
import { describe, expect, it } from 'vitest';
import { assignShards } from '../../src/leaderelection/hash.ts';
import type { LeaseSnapshot } from '../../src/leaderelection/record.ts';
import {
  initialSharding,
  MAX_IDENTITY_LENGTH,
  MAX_MEMBER_DELETES,
  MAX_MEMBERS,
  MEMBER_DELETE_RETRY_MS,
  stepSharding,
  type ShardingConfig,
  type ShardingEffect,
  type ShardingInput,
  type ShardingState,
} from '../../src/leaderelection/shardingMachine.ts';

const config: ShardingConfig = { name: 'g', identity: 'me', shards: 4, retryPeriodMs: 2_000 };

/** A member Lease as listed: `version` stands for both its resourceVersion and its renewal (a new one changes the record). */
const member = (holder: string, version: number, lease = holder): LeaseSnapshot => ({
  name: `g-member-${lease}`,
  resourceVersion: String(version),
  record: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: `t${version}`, leaseTransitions: 0 },
});
const listed = (...leases: LeaseSnapshot[]): ShardingInput => ({ type: 'listed', leases });
const renewing = (lead: boolean): ShardingInput => ({ type: 'renewing', lead });
const leading = (shard: number, lead: boolean): ShardingInput => ({ type: 'leading', shard, lead });
const recheck: ShardingInput = { type: 'recheck' };
const drained: ShardingInput = { type: 'drained' };

type At = readonly [input: ShardingInput, now: number, busy?: readonly number[]];

function run(history: readonly At[]): { state: ShardingState; effects: readonly ShardingEffect[] } {
  let state = initialSharding(config);
  let effects: readonly ShardingEffect[] = [];
  for (const [input, now, busy = []] of history) ({ state, effects } = stepSharding(config, state, input, now, new Set(busy)));
  return { state, effects };
}

const of = <T extends ShardingEffect['type']>(effects: readonly ShardingEffect[], type: T) =>
  effects.filter((e): e is Extract<ShardingEffect, { type: T }> => e.type === type);
/** The shards `me` should hold among these members. */
const mineAmong = (...members: string[]) =>
  assignShards(config.shards, [...members].sort(), config.name).flatMap((owner, shard) => (owner === 'me' ? [shard] : []));
/** A shard `me` holds alone but not once `other` is a member. */
const handedTo = (other: string) => mineAmong('me').find((shard) => !mineAmong('me', other).includes(shard))!;

interface Row {
  readonly rule: string;
  readonly history: readonly At[];
  readonly then: (last: { state: ShardingState; effects: readonly ShardingEffect[] }) => void;
}

/** Renewing our own member Lease from 0, and `o` listed at 0 (version 1). */
const withO: readonly At[] = [
  [renewing(true), 0],
  [listed(member('o', 1)), 0],
];

const rows: readonly Row[] = [
  {
    rule: 'before the first listing the view is us alone: we campaign for every shard, and nothing is assigned',
    history: [[drained, 0]],
    then: ({ state, effects }) => {
      expect(of(effects, 'status')).toEqual([
        { type: 'status', status: expect.objectContaining({ listed: false, members: ['me'], assigned: new Set(), held: new Set() }) },
      ]);
      expect(of(effects, 'want')).toEqual([0, 1, 2, 3].map((shard) => ({ type: 'want', shard, want: true })));
      expect(state.listed).toBe(false);
    },
  },
  {
    rule: 'a listing makes the view: us and every member Lease listed; we want the shards assigned to us',
    history: [[listed(member('o', 1), { ...member('x', 2), name: 'g-shard-0' }), 0]],
    then: ({ state, effects }) => {
      expect(state.members).toEqual(['me', 'o']);
      expect(of(effects, 'want')).toEqual(mineAmong('me', 'o').map((shard) => ({ type: 'want', shard, want: true })));
      expect(of(effects, 'status')[0]?.status).toMatchObject({ listed: true, assigned: new Set(mineAmong('me', 'o')) });
    },
  },
  {
    rule: 'a member lives a lease duration from the listing that first showed its record, by our clock (the same record keeps its time)',
    history: [...withO, [listed(member('o', 1)), 10_000], [recheck, 14_999]],
    then: ({ state }) => expect(state.members).toEqual(['me', 'o']),
  },
  {
    rule: 'a member whose record did not change for a lease duration lapses',
    history: [...withO, [listed(member('o', 1)), 10_000], [recheck, 15_000]],
    then: ({ state }) => expect(state.members).toEqual(['me']),
  },
  {
    rule: 'a changed record is seen from the listing that shows it',
    history: [...withO, [listed(member('o', 2)), 10_000], [recheck, 24_999]],
    then: ({ state }) => expect(state.members).toEqual(['me', 'o']),
  },
  {
    rule: 'a released record (holder "") is nobody',
    history: [[listed(member('', 1, 'o')), 0]],
    then: ({ state }) => expect(state.members).toEqual(['me']),
  },
  {
    rule: 'a lapse sooner than the next listing arms the recheck timer at it',
    history: [...withO, [listed(member('o', 1)), 14_000]],
    then: ({ effects }) => expect(of(effects, 'recheck')).toEqual([{ type: 'recheck', inMs: 1_000 }]),
  },
  {
    rule: 'a lapse a retry period or more away arms none (the next listing comes first)',
    history: [...withO, [listed(member('o', 1)), 13_000]],
    then: ({ effects }) => expect(of(effects, 'recheck')).toEqual([{ type: 'recheck', inMs: undefined }]),
  },
  {
    rule: 'frozen (our own member Lease not renewed): nobody is dropped, a new member joins, no timer, no release',
    history: [...withO, [renewing(false), 5_000], [listed(member('o', 1), member('p', 3)), 20_000]],
    then: ({ state, effects }) => {
      expect(state.members).toEqual(['me', 'o', 'p']);
      expect(of(effects, 'recheck')).toEqual([{ type: 'recheck', inMs: undefined }]);
      expect(of(effects, 'releaseMember')).toEqual([]);
    },
  },
  {
    // The property test's example (seed 298308264): a replica cut off before a Lease-write outage meets a member that joined
    // meanwhile. Capped rendezvous places the shards again under the lower cap, so the join moves ours: [2] → [1].
    rule: 'frozen: a member that joins can bring us a shard we did not have (nobody dropped: the assignment of the members seen)',
    history: [
      [renewing(true), 0],
      [listed(member('a', 1), member('p', 1)), 0],
      [renewing(false), 5_000],
      [listed(member('a', 1), member('p', 1), member('q', 3)), 20_000],
    ],
    then: ({ state, effects }) => {
      expect(mineAmong('me', 'a', 'p')).toEqual([2]);
      expect(state.members).toEqual(['a', 'me', 'p', 'q']);
      expect(of(effects, 'want')).toEqual([
        { type: 'want', shard: 1, want: true },
        { type: 'want', shard: 2, want: false },
      ]);
      expect(of(effects, 'status').map((e) => [...e.status.assigned])).toEqual([[1]]);
    },
  },
  {
    rule: 'renewed again: every member still in the view gets a lease duration from then',
    history: [...withO, [renewing(false), 5_000], [listed(member('o', 1)), 20_000], [renewing(true), 30_000], [recheck, 44_999]],
    then: ({ state }) => expect(state.members).toEqual(['me', 'o']),
  },
  {
    rule: 'renewed again: a member dropped before the freeze stays dropped',
    history: [...withO, [recheck, 15_000], [renewing(false), 16_000], [listed(member('o', 1)), 20_000], [renewing(true), 30_000]],
    then: ({ state }) => expect(state.members).toEqual(['me']),
  },
  {
    rule: "a lapsed member's Lease is released, quoting the resourceVersion seen unchanged",
    history: [...withO, [recheck, 15_000]],
    then: ({ effects }) =>
      expect(of(effects, 'releaseMember')).toEqual([
        {
          type: 'releaseMember',
          lease: 'g-member-o',
          resourceVersion: '1',
          record: expect.objectContaining({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 }),
        },
      ]),
  },
  {
    rule: 'it is released once per resourceVersion',
    history: [...withO, [recheck, 15_000], [listed(member('o', 1)), 16_000]],
    then: ({ effects }) => expect(of(effects, 'releaseMember')).toEqual([]),
  },
  {
    rule: 'after a failure other than a Conflict the release is tried again at the next recount',
    history: [
      ...withO,
      [recheck, 15_000],
      [{ type: 'memberReleaseFailed', lease: 'g-member-o', resourceVersion: '1', conflict: false }, 15_100],
      [listed(member('o', 1)), 16_000],
    ],
    then: ({ effects }) => expect(of(effects, 'releaseMember')).toHaveLength(1),
  },
  {
    rule: 'after a Conflict it is not (someone wrote the Lease since)',
    history: [
      ...withO,
      [recheck, 15_000],
      [{ type: 'memberReleaseFailed', lease: 'g-member-o', resourceVersion: '1', conflict: true }, 15_100],
      [listed(member('o', 1)), 16_000],
    ],
    then: ({ effects }) => expect(of(effects, 'releaseMember')).toEqual([]),
  },
  {
    rule: 'our own member Lease is never released, however old its record',
    history: [
      [renewing(true), 0],
      [listed(member('me', 1)), 0],
      [recheck, 30_000],
    ],
    then: ({ effects, state }) => {
      expect(of(effects, 'releaseMember')).toEqual([]);
      expect(state.members).toEqual(['me']);
    },
  },
  {
    rule: 'the written release is the record seen from then on (nobody)',
    history: [
      ...withO,
      [recheck, 15_000],
      [{ type: 'memberReleased', lease: 'g-member-o', resourceVersion: '1', written: member('', 7, 'o') }, 15_100],
    ],
    then: ({ state }) =>
      expect(state.seen.get('g-member-o')).toEqual({ record: member('', 7, 'o').record, resourceVersion: '7', at: 15_100, asOf: 15_100 }),
  },
  {
    rule: "a listing sent before our release of a lapsed member's Lease was written does not bring the member back",
    history: [
      ...withO,
      [recheck, 15_000],
      [{ type: 'memberReleased', lease: 'g-member-o', resourceVersion: '1', written: member('', 7, 'o') }, 15_100],
      [{ type: 'listed', leases: [member('o', 1)], startedAt: 14_000 }, 16_000],
    ],
    then: ({ state }) => {
      expect(state.seen.get('g-member-o')).toEqual({ record: member('', 7, 'o').record, resourceVersion: '7', at: 15_100, asOf: 15_100 });
      expect(state.members).toEqual(['me']);
    },
  },
  {
    rule: 'of two listings answered out of order, the one sent later wins',
    history: [
      ...withO,
      [{ type: 'listed', leases: [member('o', 3)], startedAt: 4_000 }, 6_000],
      [{ type: 'listed', leases: [member('o', 2)], startedAt: 2_000 }, 6_500],
    ],
    then: ({ state }) => expect(state.seen.get('g-member-o')).toMatchObject({ resourceVersion: '3', at: 6_000, asOf: 4_000 }),
  },
  {
    rule: 'listings that overlap are read in turn: one sent after the one that showed a record, answered after it, replaces it',
    history: [
      ...withO,
      [{ type: 'listed', leases: [member('o', 2)], startedAt: 2_000 }, 5_000],
      [{ type: 'listed', leases: [member('o', 3)], startedAt: 4_000 }, 7_000],
    ],
    then: ({ state }) => expect(state.seen.get('g-member-o')).toMatchObject({ resourceVersion: '3', at: 7_000, asOf: 4_000 }),
  },
  {
    rule: 'a listing sent after it is read as it is (the member came back: a new record)',
    history: [
      ...withO,
      [recheck, 15_000],
      [{ type: 'memberReleased', lease: 'g-member-o', resourceVersion: '1', written: member('', 7, 'o') }, 15_100],
      [{ type: 'listed', leases: [member('o', 8)], startedAt: 15_200 }, 16_000],
    ],
    then: ({ state }) => expect(state.members).toEqual(['me', 'o']),
  },
  {
    rule: 'a shard whose Lease we take while it is ours is held, and acquired once',
    history: [
      [listed(), 0],
      [leading(mineAmong('me')[0]!, true), 100],
    ],
    then: ({ state, effects }) => {
      expect(of(effects, 'acquired')).toEqual([{ type: 'acquired', shard: mineAmong('me')[0] }]);
      expect(state.held).toEqual(new Set([mineAmong('me')[0]]));
    },
  },
  {
    rule: 'a shard no longer ours is not held at once, but its Lease is kept while its work is in flight',
    history: [
      [listed(), 0],
      [leading(handedTo('o'), true), 100],
      [listed(member('o', 1)), 2_000, [handedTo('o')]],
    ],
    then: ({ state, effects }) => {
      expect(state.held.has(handedTo('o'))).toBe(false);
      expect(of(effects, 'want').filter((e) => e.shard === handedTo('o'))).toEqual([]);
    },
  },
  {
    rule: 'and handed over once that work has drained',
    history: [
      [listed(), 0],
      [leading(handedTo('o'), true), 100],
      [listed(member('o', 1)), 2_000, [handedTo('o')]],
      [drained, 3_000],
    ],
    then: ({ effects }) => expect(of(effects, 'want')).toEqual([{ type: 'want', shard: handedTo('o'), want: false }]),
  },
  {
    rule: 'a shard whose Lease we lose is lost (its work cancelled) before anything else',
    history: [
      [listed(), 0],
      [leading(0, true), 100],
      [leading(0, false), 10_000],
    ],
    then: ({ effects }) => expect(effects[0]).toEqual({ type: 'lost', shard: 0 }),
  },
  {
    rule: 'the status is reported only when it changes',
    history: [
      [listed(member('o', 1)), 0],
      [listed(member('o', 2)), 2_000],
    ],
    then: ({ effects }) => expect(of(effects, 'status')).toEqual([]),
  },
  {
    rule: 'a member Lease whose identity is longer than 253 characters is not a member, and is reported once while listed',
    history: [
      [listed(member('o', 1), member('x'.repeat(MAX_IDENTITY_LENGTH + 1), 1, 'x')), 0],
      [listed(member('o', 2), member('x'.repeat(MAX_IDENTITY_LENGTH + 1), 2, 'x')), 2_000],
    ],
    then: ({ state, effects }) => {
      expect(MAX_IDENTITY_LENGTH).toBe(253);
      expect(state.members).toEqual(['me', 'o']);
      expect(state.seen.has('g-member-x')).toBe(false);
      expect(of(effects, 'invalid')).toEqual([]);
      const first = run([[listed(member('x'.repeat(1024 * 1024), 1, 'x')), 0]]).effects;
      expect(of(first, 'invalid')).toEqual([
        { type: 'invalid', lease: 'g-member-x', message: expect.stringContaining('holderIdentity of 1048576 characters') },
      ]);
    },
  },
  {
    rule: 'an identity of 253 characters is a member',
    history: [[listed(member('y'.repeat(MAX_IDENTITY_LENGTH), 1, 'y')), 0]],
    then: ({ state, effects }) => {
      expect(state.members).toEqual(['me', 'y'.repeat(MAX_IDENTITY_LENGTH)]);
      expect(of(effects, 'invalid')).toEqual([]);
    },
  },
  {
    rule: 'at most 1 024 members count: the first by identity, us among them; reported once as the view grows past it',
    history: [
      [listed(...Array.from({ length: MAX_MEMBERS + 50 }, (_, i) => member(`m${String(i).padStart(4, '0')}`, 1))), 0],
      [listed(...Array.from({ length: MAX_MEMBERS + 60 }, (_, i) => member(`m${String(i).padStart(4, '0')}`, 1))), 2_000],
    ],
    then: ({ state, effects }) => {
      expect(MAX_MEMBERS).toBe(1_024);
      expect(state.members).toHaveLength(MAX_MEMBERS);
      expect(state.members).toContain('me');
      expect(state.members.at(-2)).toBe('m1022');
      expect(state.crowded).toBe(true);
      expect(of(effects, 'invalid')).toEqual([]);
      const first = run([[listed(...Array.from({ length: MAX_MEMBERS + 50 }, (_, i) => member(`m${i}`, 1))), 0]]).effects;
      expect(of(first, 'invalid')).toEqual([
        { type: 'invalid', lease: 'g-member-*', message: expect.stringContaining('1075 live members') },
      ]);
    },
  },
  {
    rule: 'the assignment is computed again only when the members change (the same list keeps the same owners)',
    history: [...withO, [listed(member('o', 2)), 2_000]],
    then: ({ state }) => {
      const before = run(withO).state;
      expect(stepSharding(config, before, listed(member('o', 2)), 2_000, new Set()).state.owners).toBe(before.owners);
      expect(state.owners).toEqual(assignShards(config.shards, ['me', 'o'], config.name));
    },
  },
  {
    rule: 'a member Lease no longer listed counts until it lapses, then is forgotten: a deleted Lease is not released',
    history: [...withO, [listed(), 10_000], [recheck, 14_999]],
    then: ({ state }) => {
      expect(state.members).toEqual(['me', 'o']);
      const later = run([...withO, [listed(), 10_000], [listed(), 16_000]]);
      expect(later.state.members).toEqual(['me']);
      expect(later.state.seen.size).toBe(0);
      expect(of(later.effects, 'releaseMember')).toEqual([]);
    },
  },
];

describe('sharding machine: one rule a row', () => {
  for (const row of rows) it(row.rule, () => row.then(run(row.history)));

  it('is pure: a step changes nothing of the state it is given', () => {
    const before = run([...withO]).state;
    const copy = { ...before, seen: new Map(before.seen), leading: [...before.leading], wanted: [...before.wanted] };
    stepSharding(config, before, recheck, 15_000, new Set());
    expect(before).toEqual(copy);
  });
});

/** The rule of stale member Leases (deleted when the clients can): `sharding()` sets `staleMemberMs` to 10 lease durations, at least 5 min. */
describe('sharding machine: stale member Leases, one rule a row', () => {
  const STALE = 300_000;
  const deleting: ShardingConfig = { ...config, staleMemberMs: STALE };
  const runDeleting = (history: readonly At[]) => {
    let state = initialSharding(deleting);
    let effects: readonly ShardingEffect[] = [];
    for (const [input, now, busy = []] of history) ({ state, effects } = stepSharding(deleting, state, input, now, new Set(busy)));
    return { state, effects };
  };
  /** `o`'s member Lease, released (holder "") at version 5. */
  const gone = member('', 5, 'o');
  const base: readonly At[] = [
    [renewing(true), 0],
    [listed(gone), 0],
  ];
  const deletes = (effects: readonly ShardingEffect[]) => of(effects, 'deleteMember');
  const deleteRows: readonly Row[] = [
    {
      rule: 'a released member Lease unchanged for staleMemberMs since first seen is deleted, quoting its resourceVersion',
      history: [...base, [listed(gone), STALE]],
      then: ({ state, effects }) => {
        expect(deletes(effects)).toEqual([{ type: 'deleteMember', lease: 'g-member-o', resourceVersion: '5' }]);
        expect(state.deleting).toEqual(new Map([['g-member-o@5', 'sent']]));
      },
    },
    {
      rule: 'not before',
      history: [...base, [listed(gone), STALE - 1]],
      then: ({ effects }) => expect(deletes(effects)).toEqual([]),
    },
    {
      rule: 'a record that changed in between (renewed, re-taken and released again) is counted from its new sight',
      history: [
        ...base,
        [listed(member('o', 6)), 100_000],
        [listed(member('', 7, 'o')), 200_000],
        [listed(member('', 7, 'o')), STALE + 199_999],
      ],
      then: ({ effects }) => expect(deletes(effects)).toEqual([]),
    },
    {
      rule: 'a live member Lease is never deleted, however old',
      history: [
        [renewing(true), 0],
        [listed(member('o', 1)), 0],
        [listed(member('o', 1)), STALE * 3],
      ],
      then: ({ effects }) => expect(deletes(effects)).toEqual([]),
    },
    {
      rule: 'our own member Lease is never deleted, even released',
      history: [...base, [listed(gone, member('', 3, 'me')), 0], [listed(gone, member('', 3, 'me')), STALE]],
      then: ({ effects }) => expect(deletes(effects).map((e) => e.lease)).toEqual(['g-member-o']),
    },
    {
      rule: 'only the replica whose identity sorts first among the live members deletes',
      history: [
        [renewing(true), 0],
        [listed(gone, member('a', 1)), 0],
        [listed(gone, member('a', 2)), STALE],
      ],
      then: ({ effects }) => expect(deletes(effects)).toEqual([]),
    },
    {
      rule: 'frozen (our own member Lease not renewed): nothing is deleted',
      history: [...base, [renewing(false), 1_000], [listed(gone), STALE]],
      then: ({ effects }) => expect(deletes(effects)).toEqual([]),
    },
    {
      rule: 'without staleMemberMs (clients that cannot delete) nothing is deleted',
      history: [...base, [listed(gone), STALE * 3]],
      then: () => expect(deletes(run([...base, [listed(gone), STALE * 3]]).effects)).toEqual([]),
    },
    {
      rule: 'a deletion in flight is not sent again at the next listing',
      history: [...base, [listed(gone), STALE], [listed(gone), STALE + 2_000]],
      then: ({ effects }) => expect(deletes(effects)).toEqual([]),
    },
    {
      rule: 'a deleted Lease is forgotten at once (the seen map holds only what a rule needs)',
      history: [...base, [listed(gone), STALE], [{ type: 'memberDeleted', lease: 'g-member-o', resourceVersion: '5' }, STALE + 10]],
      then: ({ state }) => {
        expect(state.seen.size).toBe(0);
        expect(state.deleting.size).toBe(0);
      },
    },
    {
      rule: 'a lost race (409: renewed or taken meanwhile; 404: gone) is not tried again for that resourceVersion',
      history: [
        ...base,
        [listed(gone), STALE],
        [{ type: 'memberDeleteFailed', lease: 'g-member-o', resourceVersion: '5', lostRace: true }, STALE + 10],
        [listed(gone), STALE + 2_000],
      ],
      then: ({ state, effects }) => {
        expect(deletes(effects)).toEqual([]);
        expect(state.deleting).toEqual(new Map([['g-member-o@5', 'lost']]));
      },
    },
    {
      rule: 'another failure stops every deletion for MEMBER_DELETE_RETRY_MS, then it is tried again',
      history: [
        ...base,
        [listed(gone), STALE],
        [{ type: 'memberDeleteFailed', lease: 'g-member-o', resourceVersion: '5', lostRace: false }, STALE + 10],
        [listed(gone), STALE + 10 + MEMBER_DELETE_RETRY_MS - 1],
      ],
      then: ({ effects }) => {
        expect(deletes(effects)).toEqual([]);
        const later = runDeleting([
          ...base,
          [listed(gone), STALE],
          [{ type: 'memberDeleteFailed', lease: 'g-member-o', resourceVersion: '5', lostRace: false }, STALE + 10],
          [listed(gone), STALE + 10 + MEMBER_DELETE_RETRY_MS],
        ]);
        expect(deletes(later.effects)).toEqual([{ type: 'deleteMember', lease: 'g-member-o', resourceVersion: '5' }]);
      },
    },
    {
      rule: 'a Forbidden (no `delete` on leases in the Role) stops the deletions for good: none is sent a day later',
      history: [
        ...base,
        [listed(gone), STALE],
        [{ type: 'memberDeleteFailed', lease: 'g-member-o', resourceVersion: '5', lostRace: false, forbidden: true }, STALE + 10],
        [listed(gone), STALE + 86_400_000],
      ],
      then: ({ state, effects }) => {
        expect(deletes(effects)).toEqual([]);
        expect(state.deletePausedUntil).toBe(Number.POSITIVE_INFINITY);
      },
    },
    {
      rule: 'a Lease no longer listed leaves the deletions (the map holds only what the last listing had)',
      history: [
        ...base,
        [listed(gone), STALE],
        [{ type: 'memberDeleteFailed', lease: 'g-member-o', resourceVersion: '5', lostRace: true }, STALE + 10],
        [listed(), STALE + 2_000],
      ],
      then: ({ state }) => {
        expect(state.seen.size).toBe(0);
        expect(state.deleting.size).toBe(0);
      },
    },
    {
      rule: `at most ${MAX_MEMBER_DELETES} deletions in flight; the rest at later listings as they finish`,
      history: (() => {
        const many = Array.from({ length: MAX_MEMBER_DELETES + 8 }, (_, i) => member('', 10 + i, `old${i}`));
        return [
          [renewing(true), 0],
          [listed(...many), 0],
          [listed(...many), STALE],
        ] as const;
      })(),
      then: ({ effects }) => {
        expect(deletes(effects)).toHaveLength(MAX_MEMBER_DELETES);
      },
    },
  ];
  for (const row of deleteRows) it(row.rule, () => row.then(runDeleting(row.history)));
});
