import { InformerError } from '../0-model/errors.ts';
import { overlongQueryValue } from '../1-transport/listWatch.ts';
import { backoffStep } from '../util/backoff.ts';
import type { Decision } from './recovery.ts';
import type { SourceEvent } from './sourceEvent.ts';
import type { Chain, Listing, ReflectorConfig, ReflectorEffect, ReflectorMemory, ReflectorState, Waiting } from './reflectorState.ts';

/** Effects in the making: each transition appends what the shell must do, in order. */
export type Effects<T> = ReflectorEffect<T>[];

/** Reports a fault as an `error` event: reported and survived. */
export function report<T>(out: Effects<T>, error: InformerError): void {
  out.push({ type: 'emit', event: { type: 'error', error } });
}

/** Whatever a request failed with, as a typed error of its phase. */
export function toInformerError(error: unknown, phase: 'list' | 'watch'): InformerError {
  if (error instanceof InformerError) return error.inPhase(phase);
  return new InformerError('Unknown', error instanceof Error ? error.message : String(error), { phase, cause: error });
}

/** A `replace` event; `rejectedKeys` only when there are some. */
export function replaceEvent<T>(items: readonly T[], resourceVersion: string, rejectedKeys: readonly string[]): SourceEvent<T> {
  return rejectedKeys.length > 0 ? { type: 'replace', items, resourceVersion, rejectedKeys } : { type: 'replace', items, resourceVersion };
}

/** The values of a chain, oldest first. */
export function flatten<V>(chain: Chain<V> | undefined): V[] {
  const parts: (readonly V[])[] = [];
  for (let link = chain; link; link = link.before) parts.push(link.values);
  return parts.reverse().flat();
}

/**
 * The resourceVersion a relist asks for: the last one synced, "0" before any, "" when it is unavailable, or too long to
 * send (`MAX_RESOURCE_VERSION_CHARS`: an event's or a bookmark's from a server that makes such; the transport refuses it).
 * After a whole answer did not fit (`wholeListTooLarge`), "" instead of "0": a consistent list, which
 * the server pages (at "0" a watch cache answers whole, ignoring `limit`).
 */
export function relistResourceVersion(memory: ReflectorMemory): string {
  if (memory.lastRVUnavailable || overlongQueryValue('resourceVersion', memory.lastRV) !== undefined) return '';
  if (memory.lastRV !== '') return memory.lastRV;
  return memory.wholeListTooLarge ? '' : '0';
}

/** Items per page: `pageSize`, halved for each page that did not fit (at least 1); 0: unpaged. */
export function pageLimit<T>(config: ReflectorConfig<T>, memory: ReflectorMemory): number {
  if (config.pageSize <= 0) return 0;
  return Math.max(1, Math.floor(config.pageSize / 2 ** memory.pageHalvings));
}

/**
 * A list: in pages of `pageSize` when the rv is "" or "0" or the server showed it pages
 * anyway (client-go); `unpaged` after a continue token expired (the restart is one request),
 * unless a whole answer of its kind already did not fit (`wholeListTooLarge` for "" and "0",
 * `wholeRelistTooLarge` for a specific rv: always paged). A relist at a specific rv is otherwise
 * unpaged, as client-go: with `limit` it would bypass the watch cache and get 410 once etcd compacted it.
 */
export function startList<T>(config: ReflectorConfig<T>, memory: ReflectorMemory, unpaged: boolean, out: Effects<T>): ReflectorState<T> {
  const rv = relistResourceVersion(memory);
  const limit = pageLimit(config, memory);
  const latest = rv === '' || rv === '0';
  const tooLarge = latest ? memory.wholeListTooLarge : memory.wholeRelistTooLarge;
  const paged = limit > 0 && (tooLarge || (!unpaged && (memory.paginatedResult || latest)));
  const request = memory.request + 1;
  out.push({
    type: 'list',
    id: request,
    options: { resourceVersion: rv, limit: paged ? limit : undefined, continue: undefined },
  });
  const phase: Listing<T> = {
    name: 'listing',
    rv,
    paged,
    token: undefined,
    listRV: '',
    pages: 0,
    objects: 0,
    items: undefined,
    rejectedKeys: undefined,
    tokens: new Set<string>(),
    retries: 0,
  };
  return { ...memory, request, phase };
}

/** A watch (or a streaming list) from lastRV; `fromList`: lastRV is a list's, just received. The shell first draws its timeout. */
export function openWatch<T>(memory: ReflectorMemory, streaming: boolean, fromList: boolean, out: Effects<T>): ReflectorState<T> {
  const request = memory.request + 1;
  out.push({ type: 'pickTimeout', id: request });
  return { ...memory, request, phase: { name: 'opening', streaming, fromList } };
}

/** A fresh full state: a streaming list when enabled, else list + watch. */
export function relist<T>(config: ReflectorConfig<T>, memory: ReflectorMemory, out: Effects<T>): ReflectorState<T> {
  return memory.useWatchList ? openWatch(memory, true, false, out) : startList(config, memory, false, out);
}

/**
 * Carries out a decision of the recovery rules: wait (the backoff, or 0 ms), then `decision.next`. `listing`: the list
 * that goes on after a `retryPage` wait (kept in the waiting phase: its pages read are not thrown away).
 */
export function proceed<T>(
  memory: ReflectorMemory,
  decision: Decision,
  unpaged: boolean,
  out: Effects<T>,
  listing?: Listing<T>,
): ReflectorState<T> {
  const request = memory.request + 1;
  const untilAnswered = decision.untilAnswered === true;
  const retryAfterMs = (decision.retryAfterSeconds ?? 0) * 1000;
  // The backoff's length needs its jitter: the shell draws it (`backoffDrawn`, then `startBackoff`); no backoff, no wait.
  if (decision.backoff) out.push({ type: 'drawBackoff', id: request });
  else out.push({ type: 'wait', id: request, delayMs: 0, backoff: false, untilAnswered });
  const phase: Waiting<T> = {
    name: 'waiting',
    then: decision.next,
    unpaged,
    untilAnswered,
    retryAfterMs,
    timed: !decision.backoff,
    ...(listing ? { listing } : {}),
  };
  return { ...memory, request, phase };
}

/**
 * The backoff's jitter is drawn (`random`, in [0, 1)): the wait is the backoff's next step at `now` (client-go's
 * `BackOffManager.Backoff()`), at least the `Retry-After` asked for, and the backoff moves on.
 */
export function startBackoff<T>(
  config: ReflectorConfig<T>,
  state: ReflectorState<T>,
  waiting: Waiting<T>,
  random: number,
  now: number,
  out: Effects<T>,
): ReflectorState<T> {
  const { waitMs, state: backoff } = backoffStep(state.backoff, now, config.backoff, () => random);
  const delayMs = Math.max(waitMs, waiting.retryAfterMs);
  out.push({ type: 'wait', id: state.request, delayMs, backoff: true, untilAnswered: waiting.untilAnswered });
  return { ...state, backoff, phase: { ...waiting, timed: true } };
}

/** The wait is over: do what was decided. */
export function afterWait<T>(config: ReflectorConfig<T>, memory: ReflectorMemory, waiting: Waiting<T>, out: Effects<T>): ReflectorState<T> {
  switch (waiting.then) {
    case 'resume':
      return openWatch(memory, false, false, out);
    case 'relist':
      return relist(config, memory, out);
    case 'relistLatest': {
      const latest = { ...memory, lastRVUnavailable: true };
      return waiting.unpaged ? startList(config, latest, true, out) : relist(config, latest, out);
    }
    case 'listInstead':
      // This time a plain list (client-go's fallback); later relists stream again unless the server refused.
      return startList(config, memory, false, out);
    case 'retryPage':
      return waiting.listing ? retryPage(config, memory, waiting.listing, out) : relist(config, memory, out);
  }
}

/** The page that failed (a continue page: its token is `listing.token`), asked again; the pages read are kept. */
function retryPage<T>(config: ReflectorConfig<T>, memory: ReflectorMemory, listing: Listing<T>, out: Effects<T>): ReflectorState<T> {
  const request = memory.request + 1;
  out.push({
    type: 'list',
    id: request,
    options: { resourceVersion: undefined, limit: listing.paged ? pageLimit(config, memory) : undefined, continue: listing.token },
  });
  return { ...memory, request, phase: { ...listing, retries: listing.retries + 1 } };
}
