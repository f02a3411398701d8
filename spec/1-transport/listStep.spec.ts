/**
 * The list path's pure step (src/1-transport/http/listStep.ts), row by row: a state (the request held ahead, if any),
 * an input, the effects in order and the next state; then the page outcome, a row for each way a 200's body becomes a
 * page or an error. The shell (PagePrefetch, on requests) is tested by prefetch.spec.ts, over HTTP by prefetchHttp.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import type { ListPage } from '../../src/1-transport/listWatch.ts';
import {
  budgetAdmits,
  initialListPath,
  listPathStep,
  pageOutcome,
  type DecodedPage,
  type ListPathEffect,
  type ListPathInput,
  type ListPathState,
  waitsForCollection,
} from '../../src/1-transport/http/listStep.ts';

const pageA = { page: 'A' };
const pageB = { page: 'B' };
const owners = new Map<object, string>([
  [pageA, 'A'],
  [pageB, 'B'],
]);

/** A state as a row writes it: `-` (nothing held) or `slot:owner:query`, then `/slots`. */
function show(state: ListPathState): string {
  const { held } = state;
  return `${held ? `${held.slot}:${owners.get(held.owner)}:${held.query}` : '-'}/${state.slots}`;
}
const effect = (e: ListPathEffect) => `${e.type} ${e.slot}`;

const none = initialListPath;
const heldByA: ListPathState = { held: { slot: 1, owner: pageA, query: '/q?continue=a' }, slots: 1 };
const secondHeld: ListPathState = { held: { slot: 2, owner: pageB, query: '/q?continue=b' }, slots: 2 };

interface Row {
  readonly rule: string;
  readonly from: ListPathState;
  readonly input: ListPathInput;
  readonly effects: readonly string[];
  readonly then: string;
}

const ROWS: readonly Row[] = [
  {
    rule: 'a list with nothing held opens its own request (no claim)',
    from: none,
    input: { type: 'ask', query: '/q' },
    effects: [],
    then: '-/0',
  },
  {
    rule: 'a list of the request held takes it',
    from: heldByA,
    input: { type: 'ask', query: '/q?continue=a' },
    effects: ['claim 1'],
    then: '-/1',
  },
  {
    rule: 'a list of another request (a halved limit, another token) aborts the one held first, and opens its own',
    from: heldByA,
    input: { type: 'ask', query: '/q?limit=250&continue=a' },
    effects: ['abort 1'],
    then: '-/1',
  },
  {
    rule: 'a page that told its token opens the next page ahead, in a new slot',
    from: none,
    input: { type: 'ahead', owner: pageA, query: '/q?continue=a' },
    effects: ['open 1'],
    then: '1:A:/q?continue=a/1',
  },
  {
    rule: 'one slot: a request opened ahead aborts the one held before it',
    from: heldByA,
    input: { type: 'ahead', owner: pageB, query: '/q?continue=b' },
    effects: ['abort 1', 'open 2'],
    then: '2:B:/q?continue=b/2',
  },
  {
    rule: "another page's end leaves the request held",
    from: heldByA,
    input: { type: 'ended', owner: pageB, completed: false },
    effects: [],
    then: '1:A:/q?continue=a/1',
  },
  {
    rule: 'the page that opened it failed or was unsubscribed before it completed: aborted at once',
    from: heldByA,
    input: { type: 'ended', owner: pageA, completed: false },
    effects: ['abort 1'],
    then: '-/1',
  },
  {
    rule: 'the page completed: held until the end of the job (the reflector asks the next page from its completion)',
    from: heldByA,
    input: { type: 'ended', owner: pageA, completed: true },
    effects: ['afterJob 1'],
    then: '1:A:/q?continue=a/1',
  },
  {
    rule: 'still held at the end of the job: nobody asked for it, aborted',
    from: heldByA,
    input: { type: 'jobEnded', slot: 1 },
    effects: ['abort 1'],
    then: '-/1',
  },
  {
    rule: 'the end of the job of a request claimed since (another held now): nothing',
    from: secondHeld,
    input: { type: 'jobEnded', slot: 1 },
    effects: [],
    then: '2:B:/q?continue=b/2',
  },
  {
    rule: 'the end of the job of a request claimed in time: nothing',
    from: none,
    input: { type: 'jobEnded', slot: 1 },
    effects: [],
    then: '-/0',
  },
  { rule: 'a watch aborts the request held', from: heldByA, input: { type: 'abort' }, effects: ['abort 1'], then: '-/1' },
  { rule: 'a watch with nothing held: nothing', from: none, input: { type: 'abort' }, effects: [], then: '-/0' },
  {
    rule: 'a page ends with nothing held: nothing',
    from: none,
    input: { type: 'ended', owner: pageA, completed: true },
    effects: [],
    then: '-/0',
  },
];

describe('listPathStep', () => {
  it.each(ROWS.map((row) => [row.rule, row] as const))('%s', (_, row) => {
    const { state, effects } = listPathStep(row.from, row.input);
    expect({ effects: effects.map(effect), then: show(state) }).toEqual({ effects: row.effects, then: row.then });
  });

  it("a paged list's walk: page 1 opens its own, its token opens page 2 ahead, page 2 takes it, the end of the job finds it taken", () => {
    const walk: [ListPathInput, readonly string[]][] = [
      [{ type: 'ask', query: '/q?limit=500' }, []],
      [{ type: 'ahead', owner: pageA, query: '/q?limit=500&continue=a' }, ['open 1']],
      [{ type: 'ended', owner: pageA, completed: true }, ['afterJob 1']],
      [{ type: 'ask', query: '/q?limit=500&continue=a' }, ['claim 1']],
      [{ type: 'jobEnded', slot: 1 }, []],
      // Page 2 is the last: no token, nothing ahead; it ends with nothing held.
      [{ type: 'ended', owner: pageB, completed: true }, []],
    ];
    let state = initialListPath;
    for (const [input, expected] of walk) {
      const result = listPathStep(state, input);
      expect(result.effects.map(effect), input.type).toEqual(expected);
      state = result.state;
    }
    expect(show(state)).toBe('-/1');
  });

  it('is pure: the state given is never changed', () => {
    const from: ListPathState = { held: { ...heldByA.held! }, slots: 1 };
    const before = show(from);
    for (const row of ROWS) listPathStep(from, row.input);
    expect(show(from)).toBe(before);
  });
});

interface OutcomeRow {
  readonly rule: string;
  readonly decoded: DecodedPage;
  readonly protobuf?: boolean;
  readonly shape?: (object: unknown) => unknown;
  /** The page, or the error's reason, status and message. */
  readonly outcome: ListPage | { readonly reason: string; readonly status?: number; readonly message: string };
}

const podList = (extra: Record<string, unknown> = {}) => ({
  kind: 'PodList',
  metadata: { resourceVersion: '7', continue: 'next' },
  items: [{ metadata: { name: 'a' } }],
  ...extra,
});

const OUTCOMES: readonly OutcomeRow[] = [
  {
    rule: 'a list: its items, resourceVersion and token',
    decoded: { value: podList() },
    outcome: { items: [{ metadata: { name: 'a' } }], resourceVersion: '7', continue: 'next' },
  },
  {
    rule: 'a list with a shape (metadata asked, full objects came): each item cut down',
    decoded: { value: podList() },
    shape: (object) => ({ cut: (object as { metadata: unknown }).metadata }),
    outcome: { items: [{ cut: { name: 'a' } }], resourceVersion: '7', continue: 'next' },
  },
  {
    rule: 'not JSON: MalformedLine, with where the parse gave up but never the text',
    decoded: { thrown: new SyntaxError('Unexpected token } in JSON at position 12 ("secret")') },
    outcome: { reason: 'MalformedLine', message: 'list /api/v1/pods: the response is not JSON (40 bytes, invalid at position 12)' },
  },
  {
    rule: "not a protobuf list: MalformedLine, with the decoder's message",
    decoded: { thrown: new Error('field 2 is truncated') },
    protobuf: true,
    outcome: {
      reason: 'MalformedLine',
      message: 'list /api/v1/pods: the response is not a protobuf list (40 bytes; field 2 is truncated)',
    },
  },
  {
    rule: 'a failure Status answered with 200: its own error (client-go Result.Into)',
    decoded: { value: { kind: 'Status', status: 'Failure', code: 410, reason: 'Expired', message: 'too old' } },
    outcome: { reason: 'Expired', status: 410, message: 'too old' },
  },
  {
    rule: 'a failure Status with no code: a 500',
    decoded: { value: { kind: 'Status', status: 'Failure', message: 'broken' } },
    outcome: { reason: 'ServerError', status: 500, message: 'broken' },
  },
  {
    rule: 'a Success Status is not a list',
    decoded: { value: { kind: 'Status', status: 'Success' } },
    outcome: { reason: 'MalformedLine', message: 'list /api/v1/pods: the response is not a list' },
  },
  {
    rule: 'JSON that is not a list (items not an array): MalformedLine',
    decoded: { value: podList({ items: 'x' }) },
    outcome: { reason: 'MalformedLine', message: 'list /api/v1/pods: the response is not a list' },
  },
];

describe('pageOutcome', () => {
  it.each(OUTCOMES.map((row) => [row.rule, row] as const))('%s', (_, row) => {
    const outcome = pageOutcome(row.decoded, { path: '/api/v1/pods', protobuf: row.protobuf ?? false, bytes: 40, shape: row.shape });
    if (outcome instanceof InformerError) {
      expect({ reason: outcome.reason, status: outcome.status, message: outcome.message, phase: outcome.phase }).toEqual({
        status: undefined,
        ...row.outcome,
        phase: 'list',
      });
    } else {
      expect(outcome).toEqual(row.outcome);
    }
  });
});

describe('budgetAdmits: what the list budget admits of the next page', () => {
  const ROWS: readonly [string, number, number, number, number | undefined][] = [
    // rule, maxListTotalBytes, the chain's bytes so far, the page's own limit, admitted (undefined: the page's own)
    ['a first page whose own limit fits the budget: its own', 1000, 0, 256, undefined],
    ['a page whose own limit is exactly what is left: its own', 1000, 744, 256, undefined],
    ['a page whose own limit passes what is left: what is left', 1000, 800, 256, 200],
    ['a chain that has read the whole budget: nothing', 1000, 1000, 256, 0],
    ['a chain past the budget (a page charged more than its bytes): nothing, never below 0', 1000, 1300, 256, 0],
    ["no budget (Infinity): always the page's own", Infinity, 1e15, 256, undefined],
  ];
  it.each(ROWS)('%s', (_, total, chain, page, admitted) => {
    expect(budgetAdmits(total, chain, page)).toBe(admitted);
  });
});

describe('waitsForCollection: whether a list waits for a full collection first', () => {
  const ROWS: readonly [string, string | undefined, boolean, boolean, boolean, number][] = [
    // rule, token, overran, an abandoned chain found, waits, times the chains were looked at
    ['a first page, nothing dropped or abandoned: at once', undefined, false, false, false, 1],
    ['a first page after a list dropped on the budget: waits', undefined, true, false, true, 1],
    ['a first page after a list abandoned past a quarter of the budget: waits', undefined, false, true, true, 1],
    ['a first page after both: waits once, and the abandoned chains are still marked', undefined, true, true, true, 1],
    ['an empty token is a first page', '', true, false, true, 1],
    ['a continued page never waits, and never looks at the chains', 'tok', true, true, false, 0],
  ];
  it.each(ROWS)('%s', (_, token, overran, abandoned, waits, looks) => {
    let looked = 0;
    const found = () => (looked++, abandoned);
    expect(waitsForCollection(token, overran, found)).toBe(waits);
    expect(looked).toBe(looks);
  });
});
