/**
 * `leaseListStep`: a Lease listing's rules as a pure step (src/leaderelection/leaseListStep.ts), a table of input
 * sequences and the effects they give: no timers, no I/O. The shell (`pagedList` in httpLeaseClient.ts) through the
 * emulator and a hostile server is in http.spec.ts and largeMemberLeases.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import {
  CHARGE_PER_LEASE,
  initialLeaseList,
  LEASE_LIST_PAGE_SIZE,
  leaseListStep,
  MAX_LEASE_LIST_PAGES,
  type LeaseListConfig,
  type LeaseListEffect,
  type LeaseListInput,
  type LeaseListState,
} from '../../src/leaderelection/leaseListStep.ts';
import { LeaseError } from '../../src/leaderelection/errors.ts';

/** A page of Leases named `names` (an empty name: an item without one), then `token` when given. */
const page = (names: readonly string[], token?: string): LeaseListInput => ({
  type: 'page',
  body: {
    kind: 'LeaseList',
    metadata: token === undefined ? {} : { continue: token },
    items: names.map((name) => (name === '' ? { metadata: {} } : { metadata: { name, resourceVersion: '1' }, spec: {} })),
  },
});
const failed = (error: unknown): LeaseListInput => ({ type: 'failed', error });
/** A page cut at its byte bound, as the transport says it (a 200 whose body was too long). */
const tooLarge = failed(new InformerError('ResponseTooLarge', 'too large', { status: 200, request: 'GET /leases' }));
const expired = failed(new InformerError('Expired', 'continue token expired', { status: 410 }));
const serverError = failed(new InformerError('ServerError', 'etcd down', { status: 500 }));

/** An effect in one line: `ask 500 after t1 within 808`, `pageSize 250`, `listed a,b`, `failed ListTooLong: …`. */
function described(effect: LeaseListEffect): string {
  switch (effect.type) {
    case 'request':
      return `ask ${effect.limit}${effect.token === undefined ? '' : ` after ${effect.token}`}${effect.maxBytes === undefined ? '' : ` within ${effect.maxBytes}`}`;
    case 'pageSize':
      return `pageSize ${effect.limit}`;
    case 'listed':
      return `listed ${effect.leases.map((l) => l.name).join(',')}`;
    case 'failed':
      expect(effect.error).toBeInstanceOf(LeaseError);
      expect(effect.error.message.startsWith('list lease *: ')).toBe(true);
      return `failed ${effect.error.reason}${effect.error.status === undefined ? '' : ` ${effect.error.status}`}: ${effect.error.message.slice(14)}`;
  }
}

const WIDE: LeaseListConfig = { pageBytes: 4 * 1024 * 1024, totalBytes: Number.POSITIVE_INFINITY };

/** `start`, then each input: every effect, described, and the state at the end. */
function run(inputs: readonly LeaseListInput[], config = WIDE, pageSize = LEASE_LIST_PAGE_SIZE) {
  let state: LeaseListState = initialLeaseList(pageSize);
  const effects: string[] = [];
  for (const input of [{ type: 'start' } as const, ...inputs]) {
    const result = leaseListStep(config, state, input);
    state = result.state;
    effects.push(...result.effects.map(described));
  }
  return { effects, state };
}

/** Bytes of a page as the step measures it (the body written back as JSON). */
const bytesOf = (input: LeaseListInput) => Buffer.byteLength(JSON.stringify(input.type === 'page' ? input.body : null));

/** Pages with fresh continue tokens and no Leases: `n` of them. */
const emptyPages = (n: number) => Array.from({ length: n }, (_, i) => page([], `t${i + 1}`));

interface Row {
  readonly rule: string;
  readonly inputs: readonly LeaseListInput[];
  readonly config?: LeaseListConfig;
  readonly pageSize?: number;
  readonly effects: readonly (string | RegExp)[];
}

const rows: readonly Row[] = [
  { rule: 'one page without a continue token is the listing', inputs: [page(['a', 'b'])], effects: ['ask 500', 'listed a,b'] },
  {
    rule: 'a continue token asks the next page after it; the listing is every page’s Leases',
    inputs: [page(['a'], 't1'), page(['b', 'c'])],
    effects: ['ask 500', 'ask 500 after t1', 'listed a,b,c'],
  },
  { rule: 'an item without a name is not kept', inputs: [page(['a', '', 'b'])], effects: ['ask 500', 'listed a,b'] },
  {
    rule: 'a continue token sent again is a loop: ListTooLong at once',
    inputs: [page(['a'], 't1'), page([], 't1')],
    effects: ['ask 500', 'ask 500 after t1', /^failed ListTooLong: the server repeated a continue token \(after 2 pages, \d+ bytes\)$/],
  },
  {
    rule: `past ${MAX_LEASE_LIST_PAGES} pages: ListTooLong, no page ${MAX_LEASE_LIST_PAGES + 1} asked`,
    inputs: emptyPages(MAX_LEASE_LIST_PAGES),
    effects: [
      'ask 500',
      ...Array.from({ length: MAX_LEASE_LIST_PAGES - 1 }, (_, i) => `ask 500 after t${i + 1}`),
      /^failed ListTooLong: the listing went on past 100 pages \(100 pages, \d+ bytes\)$/,
    ],
  },
  {
    rule: 'the whole listing’s bytes: a page’s bound is what is left of them when less, and past them is ListTooLong',
    config: { pageBytes: 1_000, totalBytes: 999 + bytesOf(page(['a'], 't1')) },
    inputs: [page(['a'], 't1'), page(['b'], 't2'), page(Array.from({ length: 20 }, (_, i) => `c${i}`))],
    effects: [
      'ask 500',
      'ask 500 after t1 within 999',
      `ask 500 after t2 within ${999 - bytesOf(page(['b'], 't2'))}`,
      /^failed ListTooLong: the listing is larger than the \d+ bytes limit for a whole listing \(3 pages, \d+ bytes, 22 Leases charged at least 64 bytes each\); option maxListTotalBytes$/,
    ],
  },
  {
    rule: 'a listing of exactly the whole listing’s bytes is within them',
    config: { pageBytes: 1_000, totalBytes: bytesOf(page(['a'])) },
    inputs: [page(['a'])],
    effects: [`ask 500 within ${bytesOf(page(['a']))}`, 'listed a'],
  },
  {
    rule: `each Lease kept is charged ${CHARGE_PER_LEASE} bytes when that is more than its page’s bytes`,
    config: { pageBytes: 4_000, totalBytes: 4_000 },
    inputs: [page(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'], 't1')],
    effects: ['ask 500', `ask 500 after t1 within ${4_000 - 10 * CHARGE_PER_LEASE}`],
  },
  {
    rule: 'items without a name are not charged per Lease, and the failure names how many were dropped',
    config: { pageBytes: 1_000, totalBytes: 100 },
    inputs: [page(['', '', '', ''])],
    effects: [
      'ask 500 within 100',
      /^failed ListTooLong: the listing is larger than the 100 bytes limit for a whole listing \(1 pages, 1\d\d bytes, 4 items without a name dropped, 0 Leases/,
    ],
  },
  {
    rule: 'a page refused by what is left of the listing’s bytes is a hard stop: ListTooLong, no smaller page asked',
    config: { pageBytes: 1_000, totalBytes: 500 },
    inputs: [tooLarge],
    effects: [
      'ask 500 within 500',
      'failed ListTooLong: the listing is larger than the 500 bytes limit for a whole listing (0 pages, 0 bytes, then more); option maxListTotalBytes',
    ],
  },
  {
    rule: 'a page refused by its own bound is asked again, same token, half the limit, remembered; the rest keeps it',
    inputs: [page(['a'], 't1'), tooLarge, page(['b'], 't2'), page(['c'])],
    effects: ['ask 500', 'ask 500 after t1', 'pageSize 250', 'ask 250 after t1', 'ask 250 after t2', 'listed a,b,c'],
  },
  {
    rule: 'refused down to a limit of one: 9 requests, then ResponseTooLarge naming the first Lease',
    inputs: Array.from({ length: 9 }, () => tooLarge),
    effects: [
      'ask 500',
      ...[250, 125, 62, 31, 15, 7, 3, 1].flatMap((limit) => [`pageSize ${limit}`, `ask ${limit}`]),
      'failed ResponseTooLarge 200: the first Lease listed alone is larger than the 4 MiB limit for a page; option maxBodyBytes (0 pages, 0 bytes)',
    ],
  },
  {
    rule: 'one Lease alone past the bound after others: ResponseTooLarge naming the Lease before it',
    pageSize: 1,
    inputs: [page(['a'], 't1'), tooLarge],
    // It read pages and none was refused (a limit of 1 is not halved): the next listing starts at 2.
    effects: [
      'ask 1',
      'ask 1 after t1',
      'pageSize 2',
      /^failed ResponseTooLarge 200: the Lease after a \(in name order\) alone is larger than the 4 MiB/,
    ],
  },
  {
    rule: 'an expired continue token starts the listing again from its first page, once; what it read is forgotten',
    inputs: [page(['a'], 't1'), expired, page(['b'], 't1'), page(['c'])],
    effects: ['ask 500', 'ask 500 after t1', 'ask 500', 'ask 500 after t1', 'listed b,c'],
  },
  {
    rule: 'a second expired continue token fails the listing with the 410 itself',
    inputs: [page(['a'], 't1'), expired, page(['b'], 't2'), expired],
    effects: ['ask 500', 'ask 500 after t1', 'ask 500', 'ask 500 after t2', 'failed Expired 410: continue token expired'],
  },
  {
    rule: 'a 410 on the first page is no expired token: the listing fails with it',
    inputs: [expired],
    effects: ['ask 500', 'failed Expired 410: continue token expired'],
  },
  {
    rule: 'a restart keeps the bounds: the pages before it count',
    inputs: [...emptyPages(60), expired, ...emptyPages(40)],
    effects: [
      'ask 500',
      ...Array.from({ length: 60 }, (_, i) => `ask 500 after t${i + 1}`),
      'ask 500',
      ...Array.from({ length: 39 }, (_, i) => `ask 500 after t${i + 1}`),
      /^failed ListTooLong: the listing went on past 100 pages \(100 pages/,
    ],
  },
  {
    rule: 'any other failure fails the listing with its reason and status',
    inputs: [page(['a'], 't1'), serverError],
    effects: ['ask 500', 'ask 500 after t1', 'failed ServerError 500: etcd down'],
  },
  {
    rule: 'a listing whose pages were at most a quarter of the bound leaves the next one twice its page size',
    pageSize: 100,
    inputs: [page(['a'], 't1'), page(['b'])],
    effects: ['ask 100', 'ask 100 after t1', 'pageSize 200', 'listed a,b'],
  },
  {
    rule: 'a failed listing leaves it too',
    pageSize: 300,
    inputs: [page(['a'], 't1'), serverError],
    effects: ['ask 300', 'ask 300 after t1', 'pageSize 500', 'failed ServerError 500: etcd down'],
  },
  {
    rule: 'not after a refusal: the next listing starts with this one’s smaller page size',
    pageSize: 100,
    inputs: [tooLarge, page(['a'])],
    effects: ['ask 100', 'pageSize 50', 'ask 50', 'listed a'],
  },
  {
    rule: 'not when a page was over a quarter of the bound',
    config: { pageBytes: 4 * bytesOf(page(['a'])) - 1, totalBytes: Number.POSITIVE_INFINITY },
    pageSize: 100,
    inputs: [page(['a'])],
    effects: ['ask 100', 'listed a'],
  },
  {
    rule: 'not before a page was read',
    pageSize: 100,
    inputs: [serverError],
    effects: ['ask 100', 'failed ServerError 500: etcd down'],
  },
  { rule: 'a remembered page size is brought within 1 … 500', pageSize: 0.5, inputs: [], effects: ['ask 1'] },
  { rule: 'and a larger one to 500', pageSize: 10_000, inputs: [], effects: ['ask 500'] },
  {
    rule: 'after the listing, inputs change nothing',
    inputs: [page(['a']), page(['b']), tooLarge, { type: 'start' }],
    effects: ['ask 500', 'listed a'],
  },
];

describe('leaseListStep: a Lease listing’s rules', () => {
  it.each(rows.map((row) => [row.rule, row] as const))('%s', (_rule, row) => {
    const { effects, state } = run(row.inputs, row.config, row.pageSize);
    expect(effects).toHaveLength(row.effects.length);
    row.effects.forEach((want, i) => (typeof want === 'string' ? expect(effects[i]).toBe(want) : expect(effects[i]).toMatch(want)));
    // A listing that ended says so; one waiting for its page has a request out (the last effect).
    if (state.phase === 'listing') expect(effects.at(-1)).toMatch(/^ask /);
    else expect(effects.at(-1)).toMatch(/^(listed|failed) /);
  });

  it('a page does not copy the Leases before it: kept page by page, one array at the end', () => {
    const { state } = run([page(['a', 'b'], 't1'), page(['c'], 't2')]);
    expect(state.kept.map((p) => p.map((l) => l.name))).toEqual([['a', 'b'], ['c']]);
    expect(state.leases).toBe(3);
  });

  it('is pure: the state given is left as it was', () => {
    const before = run([page(['a'], 't1')]).state;
    const copy = { ...before, tokens: new Set(before.tokens), kept: before.kept.map((p) => [...p]) };
    leaseListStep(WIDE, before, page(['b'], 't2'));
    leaseListStep(WIDE, before, expired);
    expect(before).toEqual(copy);
  });
});
