import { InformerError, isExpired } from '../0-model/errors.ts';
import { formatBytes } from '../1-transport/httpTransport.ts';
import { MAX_CONTINUE_TOKEN_CHARS } from '../1-transport/listWatch.ts';
import { tokenId } from '../util/tokenId.ts';
import { LeaseError } from './errors.ts';
import { objectOf, snapshotOf, type LeaseSnapshot } from './record.ts';

/**
 * A Lease listing as data (the shell is `pagedList` in httpLeaseClient.ts): page by page (`limit` and `continue`, as the
 * informers' pager), so a group whose member Leases are past one body's bound is listed all the same. As the
 * reflector's `step` (src/2-source/step.ts): one pure function of a state and an input gives the next state and the
 * effects, in order; no I/O, no clock. The rules:
 *
 * - **Bounds.** The chain is bounded as the informers' list chain is: its pages' bytes together (each page's limit is
 *   what is left of `totalBytes`, when less than a page's own), its pages ({@link MAX_LEASE_LIST_PAGES}, restarts
 *   included), and a repeated continue token, each a `ListTooLong`. A page refused by the whole listing's budget is a
 *   hard stop (`ListTooLong`): a smaller page brings the same Leases.
 * - **Expired continue token.** A 410 on a continue token starts the listing again from its first page, as client-go's
 *   pager falls back to a full list, once: a second expired token fails the listing with its 410 (a server expiring
 *   every token would otherwise be listed from the start until the page bound, and the error would blame the
 *   listing's length). What the first attempt read still counts against the bounds.
 * - **A page past its own bound** (`maxBodyBytes`: Leases whose annotations other tools fill, 100 KB each, 500 to a
 *   page) is asked again at once, same continue token, for half as many Leases, down to one, and the rest of the
 *   listing keeps the smaller `limit` (a refusal costs a page's bytes read, and no more than ⌊log2 500⌋ + 1 = 9
 *   requests are ever refused in a listing). One Lease alone past the bound fails the listing (`ResponseTooLarge`,
 *   naming the Lease before it: the body is cut unread, and its continue token with it, so there is no skipping it).
 * - **Page size learned.** A refusal's smaller `limit` is remembered for the next listing of the same labels (effect
 *   `pageSize`); a listing that read pages, none refused, the largest a quarter of the bound at most, leaves the next
 *   one twice its `limit` (Leases that shrank).
 *
 * ```
 * listing ──page with continue, new token, within bounds──▶ listing (asks the next page)
 * listing ──page refused by its own bound, limit > 1──▶ listing (asks it again, half the limit)
 * listing ──410 on a continue token, first time──▶ listing (asks the first page again)
 * listing ──last page──▶ done (listed)
 * listing ──past a bound, repeated token, one Lease too large, any other failure──▶ done (failed)
 * ```
 */
export interface LeaseListState {
  /** `done`: listed or failed, every input ignored. */
  readonly phase: 'listing' | 'done';
  /** The Leases kept, a page's worth each (made one array once, at the end: a page does not copy the ones before). */
  readonly kept: readonly (readonly LeaseSnapshot[])[];
  /** How many Leases `kept` holds. */
  readonly leases: number;
  /** The continue tokens seen (as {@link tokenId}s): one sent again is a loop. */
  readonly tokens: ReadonlySet<string>;
  /** The continue token of the page asked now (undefined: the first page). */
  readonly token: string | undefined;
  /** Pages read, restarts included. */
  readonly pages: number;
  /** Bytes charged, restarts included. */
  readonly bytes: number;
  /** Items without a name, not kept. */
  readonly dropped: number;
  /** The `limit` asked for. */
  readonly limit: number;
  /** The largest page read, in bytes as parsed: the next listing's page size grows from it. */
  readonly largest: number;
  /** Whether a page was refused (then the next listing starts with this one's page size, not twice it). */
  readonly refused: boolean;
  /** Whether an expired continue token already restarted this listing (a second one fails with the 410 itself). */
  readonly restarted: boolean;
}

/** The fixed settings of a listing. */
export interface LeaseListConfig {
  /** A page's own bound (`maxBodyBytes`). */
  readonly pageBytes: number;
  /** The whole listing's bound (`maxListTotalBytes`; `Infinity`: none). */
  readonly totalBytes: number;
}

export type LeaseListInput =
  /** Subscribed: the first page is asked. */
  | { readonly type: 'start' }
  /** The page asked, as parsed JSON. */
  | { readonly type: 'page'; readonly body: unknown }
  /** The page asked failed (the transport's error). */
  | { readonly type: 'failed'; readonly error: unknown };

export type LeaseListEffect =
  /** Ask a page: `limit` Leases after `token`; `maxBytes`, when set, in place of the page's own bound (what is left of the listing's). */
  | { readonly type: 'request'; readonly limit: number; readonly token: string | undefined; readonly maxBytes: number | undefined }
  /** Remember `limit` as the page size the next listing of these labels starts with. */
  | { readonly type: 'pageSize'; readonly limit: number }
  /** The listing: emit it and complete. */
  | { readonly type: 'listed'; readonly leases: readonly LeaseSnapshot[] }
  /** The listing failed. */
  | { readonly type: 'failed'; readonly error: LeaseError };

export interface LeaseListResult {
  readonly state: LeaseListState;
  readonly effects: readonly LeaseListEffect[];
}

/** Leases a list page asks for (`limit`): the informers' page size, client-go's pager's default. */
export const LEASE_LIST_PAGE_SIZE = 500;
/**
 * Pages one Lease listing reads at most, restarts after a 410 included: 50,000 members at a full page each, far past
 * any group (each member writes its Lease every retry period); a server that sends continue tokens with few or no
 * Leases ends here instead of never.
 */
export const MAX_LEASE_LIST_PAGES = 100;

/**
 * Bytes a listing charges for each Lease it keeps, when that is more than its page's bytes: about half what the
 * smallest kept one takes (as the informers' lists charge, listBudget.ts): a `LeaseSnapshot` of an item with only a name
 * is 130–155 bytes of heap (measured with `--expose-gc` over a million, Node 24) against 26 bytes on the wire. Before,
 * a listing was charged its bytes alone and kept every item, `{}` too: 20 MiB charged was 943 MiB of heap (found by
 * review). A real member Lease is several hundred bytes on the wire, and is charged its bytes.
 */
export const CHARGE_PER_LEASE = 64;

/** A listing as it starts: `pageSize` (what the last listing of these labels learned) brought within 1 … 500. */
export function initialLeaseList(pageSize: number): LeaseListState {
  return {
    phase: 'listing',
    kept: [],
    leases: 0,
    tokens: new Set(),
    token: undefined,
    pages: 0,
    bytes: 0,
    dropped: 0,
    limit: Math.max(1, Math.min(LEASE_LIST_PAGE_SIZE, Math.floor(pageSize))),
    largest: 0,
    refused: false,
    restarted: false,
  };
}

/** One input: the next state, and what the shell must do, in order (a `request` is always the last effect). */
export function leaseListStep(config: LeaseListConfig, state: LeaseListState, input: LeaseListInput): LeaseListResult {
  const effects: LeaseListEffect[] = [];
  if (state.phase === 'done') return { state, effects };
  switch (input.type) {
    case 'start':
      return { state: state.pages === 0 && state.bytes === 0 ? ask(config, state, undefined, effects) : state, effects };
    case 'page':
      return { state: onPage(config, state, input.body, effects), effects };
    case 'failed':
      return { state: onFailed(config, state, input.error, effects), effects };
  }
}

/** Ask the page after `token`, unless the page bound is reached; within what is left of the listing's bytes. */
function ask(config: LeaseListConfig, state: LeaseListState, token: string | undefined, out: LeaseListEffect[]): LeaseListState {
  if (state.pages >= MAX_LEASE_LIST_PAGES)
    return fail(config, state, tooLong(`the listing went on past ${MAX_LEASE_LIST_PAGES} pages (${soFar(state)})`), out);
  const left = config.totalBytes - state.bytes;
  out.push({ type: 'request', limit: state.limit, token, maxBytes: left < config.pageBytes ? Math.max(1, left) : undefined });
  return { ...state, token };
}

/** A page: its named Leases kept, its bytes charged; then the next page, the listing, or a bound passed. */
function onPage(config: LeaseListConfig, state: LeaseListState, body: unknown, out: LeaseListEffect[]): LeaseListState {
  const object = objectOf(body);
  const items = object['items'];
  const page: LeaseSnapshot[] = [];
  let dropped = state.dropped;
  if (Array.isArray(items))
    for (const item of items) {
      // No name, no member Lease (nor any Lease): not kept (`{}` is 3 bytes, and was 130 of heap as a snapshot).
      const name = objectOf(objectOf(item)['metadata'])['name'];
      if (typeof name === 'string' && name !== '') page.push(snapshotOf(name, item, true));
      else dropped++;
    }
  // The page as parsed, written back: its bytes but for whitespace (the transport keeps the count it read), or its
  // Leases' charge when more (CHARGE_PER_LEASE).
  const size = Buffer.byteLength(JSON.stringify(body) ?? '');
  const next: LeaseListState = {
    ...state,
    kept: page.length === 0 ? state.kept : [...state.kept, page],
    leases: state.leases + page.length,
    pages: state.pages + 1,
    bytes: state.bytes + Math.max(size, CHARGE_PER_LEASE * page.length),
    dropped,
    largest: Math.max(state.largest, size),
  };
  if (next.bytes > config.totalBytes) {
    const charged = `${next.leases.toLocaleString('en-US')} Leases charged at least ${CHARGE_PER_LEASE} bytes each`;
    return fail(config, next, tooLong(`${overBudget(config)} (${soFar(next)}, ${charged}); option maxListTotalBytes`), out);
  }
  const token = objectOf(object['metadata'])['continue'];
  if (typeof token !== 'string' || token === '') {
    learn(config, next, out);
    out.push({ type: 'listed', leases: next.kept.flat() });
    return { ...next, phase: 'done' };
  }
  if (token.length > MAX_CONTINUE_TOKEN_CHARS) {
    const why =
      `the server's continue token is ${token.length.toLocaleString('en-US')} characters, over the ` +
      `${MAX_CONTINUE_TOKEN_CHARS.toLocaleString('en-US')} sent back to it (after ${soFar(next)}); not asked for`;
    return fail(config, next, new LeaseError('MalformedLine', 'list', '*', why), out);
  }
  const id = tokenId(token);
  if (next.tokens.has(id)) return fail(config, next, tooLong(`the server repeated a continue token (after ${soFar(next)})`), out);
  return ask(config, { ...next, tokens: new Set(next.tokens).add(id) }, token, out);
}

/** A page failed: refused by a bound (the listing's, or its own), its continue token expired, or another fault. */
function onFailed(config: LeaseListConfig, state: LeaseListState, error: unknown, out: LeaseListEffect[]): LeaseListState {
  const tooLarge = error instanceof InformerError && error.reason === 'ResponseTooLarge' && error.status === 200;
  if (tooLarge && config.totalBytes - state.bytes < config.pageBytes)
    return fail(config, state, tooLong(`${overBudget(config)} (${soFar(state)}, then more); option maxListTotalBytes`), out);
  if (tooLarge && state.limit > 1) {
    // Refused by its own bound: the same page again, half as many Leases (kept for the rest, and remembered).
    const limit = Math.floor(state.limit / 2);
    out.push({ type: 'pageSize', limit });
    return ask(config, { ...state, refused: true, limit }, state.token, out);
  }
  if (tooLarge) {
    const last = state.kept.at(-1)?.at(-1)?.name;
    const which = last === undefined ? 'the first Lease listed' : `the Lease after ${last} (in name order)`;
    const why = `${which} alone is larger than the ${formatBytes(config.pageBytes)} limit for a page; option maxBodyBytes (${soFar(state)})`;
    return fail(config, state, new LeaseError('ResponseTooLarge', 'list', '*', why, 200, { request: error.request, cause: error }), out);
  }
  if (state.token === undefined || state.restarted || !(error instanceof InformerError) || !isExpired(error))
    return fail(config, state, LeaseError.of(error, 'list', '*', 'Unknown'), out);
  // The continue token expired: the listing again from its start (a new snapshot), its bounds kept; once.
  return ask(config, { ...state, restarted: true, kept: [], leases: 0, tokens: new Set() }, undefined, out);
}

/** The listing fails: what it learned of the page size first. */
function fail(config: LeaseListConfig, state: LeaseListState, error: LeaseError, out: LeaseListEffect[]): LeaseListState {
  learn(config, state, out);
  out.push({ type: 'failed', error });
  return { ...state, phase: 'done' };
}

/**
 * What the next listing starts with: twice this one's page size when it read pages, none refused, the largest a
 * quarter of the bound at most (Leases that shrank; a listing cut short at 100 pages of one Lease grows too).
 */
function learn(config: LeaseListConfig, state: LeaseListState, out: LeaseListEffect[]): void {
  if (!state.refused && state.pages > 0 && state.largest <= config.pageBytes / 4 && state.limit < LEASE_LIST_PAGE_SIZE)
    out.push({ type: 'pageSize', limit: Math.min(LEASE_LIST_PAGE_SIZE, state.limit * 2) });
}

const tooLong = (why: string) => new LeaseError('ListTooLong', 'list', '*', why);

const overBudget = (config: LeaseListConfig) =>
  `the listing is larger than the ${formatBytes(config.totalBytes)} limit for a whole listing`;

function soFar(state: LeaseListState): string {
  const nameless = state.dropped === 0 ? '' : `, ${state.dropped.toLocaleString('en-US')} items without a name dropped`;
  return `${state.pages.toLocaleString('en-US')} pages, ${state.bytes} bytes${nameless}`;
}
