import { InformerError, isExpired } from '../0-model/errors.ts';
import { overlongQueryValue, type ListPage } from '../1-transport/listWatch.ts';
import { rawKey } from '../0-model/keys.ts';
import { formatDuration } from '../util/formatDuration.ts';
import { tokenId } from '../util/tokenId.ts';
import { afterListFailure } from './recovery.ts';
import type { Listing, ReflectorConfig, ReflectorState } from './reflectorState.ts';
import { flatten, openWatch, pageLimit, proceed, replaceEvent, report, type Effects } from './transitions.ts';

/** A page came (or the list completed without one). */
export function onListed<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  listing: Listing<T>,
  page: ListPage | undefined,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  if (!page) return onListFailed(state, listing, new InformerError('Unknown', 'list completed without a page', { phase: 'list' }), out);
  if (page.notice) report(out, page.notice); // e.g. NotAcceptable: not a failure
  const firstPageAt = listing.firstPageAt ?? now;
  // The list's resourceVersion (its first page's) is sent back in the watch: one no server makes is its malformed answer.
  const overlongRV = listing.token === undefined ? overlongQueryValue('resourceVersion', page.resourceVersion) : undefined;
  if (overlongRV !== undefined)
    return onListFailed(
      state,
      listing,
      new InformerError('MalformedLine', `${overlongRV}; relisting after the backoff`, { phase: 'list' }),
      out,
    );
  const tooLong = page.continue ? chainFault(config, listing, page.items.length, page.continue, now - firstPageAt) : undefined;
  if (tooLong) return onListFailed(state, listing, tooLong, out);
  const { items, rejectedKeys } = decodePage(config, page.items, out);
  const next: Listing<T> = {
    ...listing,
    listRV: listing.token === undefined ? page.resourceVersion : listing.listRV,
    pages: listing.pages + 1,
    objects: listing.objects + page.items.length,
    retries: 0,
    firstPageAt,
    items: items.length > 0 ? { values: items, before: listing.items } : listing.items,
    rejectedKeys: rejectedKeys.length > 0 ? { values: rejectedKeys, before: listing.rejectedKeys } : listing.rejectedKeys,
  };
  if (page.continue) return continueList(config, state, next, page.continue, out);
  config.decode.renames?.listed();
  return listComplete(state, next, out);
}

/**
 * A continue chain that cannot be right: a token longer than any server makes (`MAX_CONTINUE_TOKEN_CHARS`, ../1-transport/listWatch.ts: the
 * server's malformed answer, `MalformedLine`, never sent back), a token the server already sent in this list (a loop),
 * or more pages or objects than any real list has (a server that never ends it), or one still going on
 * `maxListDurationMs` after its first page (`elapsedMs`: each page may come just within its own waits). The list is
 * dropped (its objects are garbage at once) and the usual rules relist after the backoff.
 */
function chainFault<T>(
  config: ReflectorConfig<T>,
  listing: Listing<T>,
  items: number,
  token: string,
  elapsedMs: number,
): InformerError | undefined {
  const pages = listing.pages + 1;
  const objects = listing.objects + items;
  // Formatted only for a fault (toLocaleString is not free, and every page of every list passes here).
  const sofar = () => `${pages.toLocaleString('en-US')} pages, ${objects.toLocaleString('en-US')} objects`;
  const overlong = overlongQueryValue('continue', token);
  if (overlong !== undefined)
    return new InformerError('MalformedLine', `${overlong} (after ${sofar()}); not asked for, relisting after the backoff`, {
      phase: 'list',
    });
  let why: string | undefined;
  if (listing.tokens.has(tokenId(token))) why = `the server repeated a continue token (after ${sofar()}); relisting after the backoff`;
  else if (config.maxListPages > 0 && pages >= config.maxListPages)
    why = `the list went on past maxListPages ${config.maxListPages} (${sofar()}); relisting after the backoff (option maxListPages)`;
  else if (config.maxListObjects > 0 && objects > config.maxListObjects)
    why = `the list went on past maxListObjects ${config.maxListObjects} (${sofar()}); relisting after the backoff (option maxListObjects)`;
  else if (config.maxListDurationMs > 0 && elapsedMs >= config.maxListDurationMs)
    why =
      `the list went on past maxListDurationMs ${config.maxListDurationMs} (${formatDuration(elapsedMs)} since its first page, ${sofar()}); ` +
      'relisting after the backoff (option maxListDurationMs)';
  return why === undefined ? undefined : new InformerError('ListTooLong', why, { phase: 'list' });
}

/** Decodes a page's items; an item that fails is reported, and its key kept as one the server has. */
function decodePage<T>(config: ReflectorConfig<T>, raws: readonly unknown[], out: Effects<T>): { items: T[]; rejectedKeys: string[] } {
  const items: T[] = [];
  const rejectedKeys: string[] = [];
  for (const raw of raws) {
    const decoded = config.decode(raw, 'list', true);
    if (decoded instanceof InformerError) {
      report(out, decoded);
      // It exists on the server: never taken for missing (see docs/invalid-objects.md), under the key the cache holds
      // it by (a transform may have renamed its earlier version).
      const key = rawKey(raw);
      if (key !== undefined) rejectedKeys.push(config.decode.renames?.cachedKey(key) ?? key);
    } else items.push(decoded);
  }
  return { items, rejectedKeys };
}

/** Asks for the next page. */
function continueList<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  listing: Listing<T>,
  token: string,
  out: Effects<T>,
): ReflectorState<T> {
  // Only a paged answer to rv "0" shows the watch cache is off; an rv "" list is paged by etcd anyway (client-go).
  const paginatedResult = state.paginatedResult || (listing.token === undefined && listing.rv === '0');
  const request = state.request + 1;
  listing.tokens.add(tokenId(token));
  out.push({ type: 'progress', progress: { pages: listing.pages, objects: listing.objects } });
  out.push({
    type: 'list',
    id: request,
    options: { resourceVersion: undefined, limit: listing.paged ? pageLimit(config, state) : undefined, continue: token },
  });
  return { ...state, paginatedResult, request, phase: { ...listing, token } };
}

/** The last page came: replace, then watch from the list's resourceVersion. */
function listComplete<T>(state: ReflectorState<T>, listing: Listing<T>, out: Effects<T>): ReflectorState<T> {
  const { listRV } = listing;
  // A list that lands where the watches kept failing does not wipe that count: no relist storm.
  const counters = { brokenResumes: 0, failuresAtSameRV: listRV === state.lastRV ? state.counters.failuresAtSameRV : 0 };
  const items = flatten(listing.items);
  const rejectedKeys = flatten(listing.rejectedKeys);
  out.push({ type: 'emit', event: replaceEvent(items, listRV, rejectedKeys) });
  return openWatch({ ...state, counters, lastRV: listRV, lastRVUnavailable: false, expiredTokens: 0 }, false, true, out);
}

/**
 * A page failed: the recovery rules decide (a continue token whose snapshot was
 * compacted: list again, whole and unpaged, at the latest state; a continue page throttled: the same page again,
 * the pages read kept), unless the page
 * did not fit the page byte limit (see {@link didNotFit}): then never the same request again.
 */
export function onListFailed<T>(state: ReflectorState<T>, listing: Listing<T>, error: InformerError, out: Effects<T>): ReflectorState<T> {
  report(out, error);
  switch (didNotFit(state, listing, error)) {
    case 'whole': {
      // At once: a paged list is another request, and this happens once (every list of its kind is paged from now on).
      const tooLarge = isLatest(listing.rv) ? { wholeListTooLarge: true } : { wholeRelistTooLarge: true };
      return proceed({ ...state, ...tooLarge }, { next: 'relist', backoff: false }, false, out);
    }
    case 'page':
      return proceed({ ...state, pageHalvings: state.pageHalvings + 1 }, { next: 'relist', backoff: true }, false, out);
    case undefined: {
      const continued = listing.token !== undefined;
      const expiredTokens = continued && isExpired(error) ? state.expiredTokens + 1 : 0;
      const decision = afterListFailure(error, listing.rv, continued, listing.retries, expiredTokens);
      return proceed({ ...state, expiredTokens }, decision, continued, out, decision.next === 'retryPage' ? listing : undefined);
    }
  }
}

/** A list at "" or "0" (the latest state, or the watch cache's), not at a specific resourceVersion. */
const isLatest = (rv: string) => rv === '' || rv === '0';

/**
 * Whether a list failed because a successful answer passed the page byte limit (`ResponseTooLarge`
 * on a 200, not an error body's limit): `whole` when it may have been the whole collection at once
 * (the first page at rv "0", which a watch cache answers whole ignoring `limit`, or a list asked
 * unpaged), `page` when it was one page of a paged list (the next lists ask for half as many items).
 * `whole` counts once for lists at ""/"0" and once for relists at a specific rv: after it those are paged (with
 * paging off, `pageSize: 0`, the usual backoff follows).
 */
function didNotFit<T>(state: ReflectorState<T>, listing: Listing<T>, error: InformerError): 'whole' | 'page' | undefined {
  if (error.reason !== 'ResponseTooLarge' || error.status !== 200) return undefined;
  const first = listing.token === undefined;
  const already = isLatest(listing.rv) ? state.wholeListTooLarge : state.wholeRelistTooLarge;
  if (first && !already && (listing.rv === '0' || !listing.paged)) return 'whole';
  return listing.paged ? 'page' : undefined;
}
