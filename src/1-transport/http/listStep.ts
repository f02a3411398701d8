import { InformerError, asStatus, errorFromStatus, isFailureStatus } from '../../0-model/errors.ts';
import type { ListPage } from '../listWatch.ts';
import { syntaxErrorAt, toListPage } from './decode.ts';

// The paged list path as data, in the reflector's shape (src/2-source/step.ts): a state, an input, one pure step
// giving the next state and the effects, in order. It holds the decisions of a ListWatch's lists across their pages:
// which request a page takes (the one held ahead, or its own), when the one ahead is opened, aborted or released, what
// the list budget admits (a page's limit, a wait for a collection first) and which error a page's body fails with.
// The shells perform the effects: prefetch.ts (`PagePrefetch`: the request held, its response or failure),
// listPage.ts's `listPages` (a page's request, timers and reading) and listBudget.ts (the chains' bytes). The rules
// are listed on `PagePrefetch` and below; each is a row of spec/1-transport/listStep.spec.ts.

/** The request opened ahead: its slot (the shell's handle on it), the page it continues, its path and query. */
export interface Held {
  readonly slot: number;
  /** The page whose token it continues (that page's `list` subscription's own object: compared by identity). */
  readonly owner: object;
  readonly query: string;
}

/** What a ListWatch's list path remembers between pages: at most one request held ahead (one slot). */
export interface ListPathState {
  readonly held: Held | undefined;
  /** Slots handed out so far: the next request ahead is slot `slots + 1`. */
  readonly slots: number;
}

export const initialListPath: ListPathState = { held: undefined, slots: 0 };

/** What the shells tell the step. */
export type ListPathInput =
  /** A `list` of `query` is subscribed: it takes the request held when that is the same request. */
  | { readonly type: 'ask'; readonly query: string }
  /** Page `owner` told its token: the request of the page after it (`query`) is opened ahead. */
  | { readonly type: 'ahead'; readonly owner: object; readonly query: string }
  /** Page `owner`'s subscription ended, after it `completed` or not (failed, unsubscribed). */
  | { readonly type: 'ended'; readonly owner: object; readonly completed: boolean }
  /** The end of the job (a microtask) in which a completed page's subscription ended, as asked by `afterJob`. */
  | { readonly type: 'jobEnded'; readonly slot: number }
  /** Something else than the page held is asked (a watch): the request held goes. */
  | { readonly type: 'abort' };

/** What the step asks the shell to do, in order. */
export type ListPathEffect =
  /** Hand the request of `slot` to the `list` that asked: unsubscribing it from then on aborts it. */
  | { readonly type: 'claim'; readonly slot: number }
  /** Abort the request of `slot` (its socket or stream freed, its progress rule stopped). */
  | { readonly type: 'abort'; readonly slot: number }
  /** Open the request ahead as `slot`, and hold its response (or failure) unread. */
  | { readonly type: 'open'; readonly slot: number }
  /** Input `jobEnded` for `slot` at the end of this job (a microtask: no timer). */
  | { readonly type: 'afterJob'; readonly slot: number };

export interface ListPathStep {
  readonly state: ListPathState;
  readonly effects: readonly ListPathEffect[];
}

const NONE: readonly never[] = [];

/**
 * The list path's one transition: pure (no I/O, no timer), so that the prefetch rules read in one place and are
 * tested by table rows, without sockets. A `list` whose `ask` gives no `claim` opens its own request.
 */
export function listPathStep(state: ListPathState, input: ListPathInput): ListPathStep {
  const { held } = state;
  switch (input.type) {
    case 'ask':
      if (held === undefined) return { state, effects: NONE };
      // Taken only by the same request (path, selectors, limit, token); any other aborts it first.
      return { state: { ...state, held: undefined }, effects: [{ type: held.query === input.query ? 'claim' : 'abort', slot: held.slot }] };
    case 'ahead': {
      // One slot: a request opened ahead aborts the one held before it.
      const slot = state.slots + 1;
      const opened: ListPathEffect = { type: 'open', slot };
      const effects: readonly ListPathEffect[] = held ? [{ type: 'abort', slot: held.slot }, opened] : [opened];
      return { state: { held: { slot, owner: input.owner, query: input.query }, slots: slot }, effects };
    }
    case 'ended':
      if (held === undefined || held.owner !== input.owner) return { state, effects: NONE };
      // A page that failed or was unsubscribed takes its request ahead with it; a completed one's waits for the
      // next `list`, asked from within the page's completion, until the end of the job.
      if (!input.completed) return { state: { ...state, held: undefined }, effects: [{ type: 'abort', slot: held.slot }] };
      return { state, effects: [{ type: 'afterJob', slot: held.slot }] };
    case 'jobEnded':
      // Still held at the end of the job: nobody asked for it.
      if (held === undefined || held.slot !== input.slot) return { state, effects: NONE };
      return { state: { ...state, held: undefined }, effects: [{ type: 'abort', slot: held.slot }] };
    case 'abort':
      if (held === undefined) return { state, effects: NONE };
      return { state: { ...state, held: undefined }, effects: [{ type: 'abort', slot: held.slot }] };
  }
}

/**
 * What the list budget admits of the next page, pure so that it is a table row: undefined when the page's own limit
 * (`maxListBytes`) fits in what is left of the whole list's (`maxListTotalBytes` less the bytes its chain has read),
 * else what is left (never below 0: a chain already past it admits no byte).
 */
export function budgetAdmits(maxListTotalBytes: number, chainBytes: number, pageMaxBytes: number): number | undefined {
  const left = maxListTotalBytes - chainBytes;
  return left >= pageMaxBytes ? undefined : Math.max(0, left);
}

/**
 * Whether a list's request waits for a full collection of the heap first (listBudget.ts's `whenRoom`): only a first
 * page (no continue token), and only after a list dropped on the budget (`overran`) or one left unfinished after
 * reading a quarter of it (`abandoned`, asked only for a first page, and even after an overrun: it marks what it finds).
 */
export function waitsForCollection(token: string | undefined, overran: boolean, abandoned: () => boolean): boolean {
  if (token) return false;
  const found = abandoned();
  return overran || found;
}

/** What a list page's body decoded to: its value, or what the decoder threw. */
export type DecodedPage = { readonly value: unknown } | { readonly thrown: unknown };

/** How a page was read, for its outcome's messages and shape. */
export interface PageRead {
  readonly path: string;
  readonly protobuf: boolean;
  /** The page's bytes (inflated). */
  readonly bytes: number;
  readonly shape: ((object: unknown) => unknown) | undefined;
}

/**
 * What a 200's body whole gives, pure so that each failure is a table row: the page, or the error it fails with
 * (not a protobuf list or not JSON: `MalformedLine`; a failure Status answered with 200, as a proxy or a broken
 * aggregated API does: its error, as client-go's Result.Into; anything else not a list: `MalformedLine`).
 */
export function pageOutcome(decoded: DecodedPage, read: PageRead): ListPage | InformerError {
  const { path, bytes } = read;
  if ('thrown' in decoded) {
    const error = decoded.thrown;
    const detail = read.protobuf
      ? `list ${path}: the response is not a protobuf list (${bytes} bytes; ${error instanceof Error ? error.message : String(error)})`
      : `list ${path}: the response is not JSON (${bytes} bytes${syntaxErrorAt(error)})`;
    return new InformerError('MalformedLine', detail, { phase: 'list' });
  }
  const { value } = decoded;
  const status = asStatus(value);
  if (isFailureStatus(status)) return errorFromStatus(status.code ?? 500, value, 'list');
  return toListPage(value, read.shape) ?? new InformerError('MalformedLine', `list ${path}: the response is not a list`, { phase: 'list' });
}
