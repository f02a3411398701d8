import type { ListOptions, ListPage, WatchFrame, WatchOptions } from '../1-transport/listWatch.ts';
import { BACKOFF_START, type BackoffRule, type BackoffState } from '../util/backoff.ts';
import type { Decoder } from './decode.ts';
import { NO_FAILURES, NO_PACE, type Next, type Pace, type RecoveryCounters } from './recovery.ts';
import type { ListProgress, SourceEvent } from './sourceEvent.ts';

/**
 * The reflector as data: what `step` (in `step.ts`) needs to know, what it remembers,
 * what it is told, and what it asks the shell (`listAndWatch`) to do.
 *
 * ```
 * starting ──start──▶ listing ──last page──▶ opening ──timeout picked──▶ watching
 * starting ──start (watchList)──▶ opening ──timeout picked (streaming)──▶ streaming ──initial-events-end──▶ watching
 *
 * listing ──page with continue──▶ listing
 * watching ──event, bookmark, check not due──▶ watching
 * streaming ──initial event, check not due──▶ streaming
 * listing, watching, streaming ──failed, ended, idle, stalled, too long──▶ waiting
 * waiting ──timer, answered: resume, or relist with watchList──▶ opening
 * waiting ──timer, answered: relist, relistLatest, listInstead, retryPage──▶ listing
 *   (`answered` ends a wait only after a failure no server answered: the server is back)
 * waiting ──backoff drawn (its length known, the timer started)──▶ waiting
 * ```
 *
 * Every failure and every end goes through `waiting` (a timer, 0 ms when there is no backoff; what follows
 * is the recovery rules' `Next`, see recovery.ts); the other transitions are direct. `opening` lasts until the
 * shell has drawn the watch's timeout, and a backoff's `waiting` starts its timer once the shell has drawn its jitter
 * (`drawBackoff`, `backoffDrawn`): the backoff's state is the reflector's (`ReflectorMemory.backoff`), so `step`
 * decides every wait's length. Each arrow reads `from ──what──▶ to`, names separated by commas
 * standing for each of them: `spec/2-source/stateDiagram.spec.ts` drives `step` with every kind of input in
 * every phase it reaches and checks that these arrows are exactly its transitions.
 * The transitions are in `step.ts` (dispatch), `transitions.ts`
 * (`startList`, `openWatch`, `relist`, `proceed`, `afterWait`), `listing.ts` and `watching.ts`.
 */

/** The fixed settings `step` reads: every default already applied. */
export interface ReflectorConfig<T> {
  readonly decode: Decoder<T>;
  /** Items per list page; 0: unpaged. */
  readonly pageSize: number;
  readonly idleTimeoutMs: number;
  /** The idle limit of a busy watch (see `idleAfterMs` in `recovery.ts`); 0: off. */
  readonly busyIdleTimeoutMs: number;
  readonly stallMarginMs: number;
  readonly bookmarkTimeoutMs: number | undefined;
  /** A list whose continue chain goes on past this many pages is dropped (`ListTooLong`); 0: no limit. */
  readonly maxListPages: number;
  /** A list whose continue chain (or a streaming list's initial events) goes on past this many objects is dropped (`ListTooLong`); 0: no limit. */
  readonly maxListObjects: number;
  /** The wait after a failure (the `backoff` option over client-go's defaults, `REFLECTOR_BACKOFF`). */
  readonly backoff: BackoffRule;
  /** A list (its continue chain, or a streaming list's initial events) still going on this long is dropped (`ListTooLong`); 0: no limit. */
  readonly maxListDurationMs: number;
}

/** What the reflector remembers whatever it is doing. */
export interface ReflectorMemory {
  /** The last resourceVersion synced: from the list, then from every event and bookmark. */
  readonly lastRV: string;
  /**
   * Set by every `relistLatest`: a list at lastRV came back 410 or 504 too large, a streaming list 504 before its
   * bookmark, a continue token expired: the next list asks for the latest state ("").
   */
  readonly lastRVUnavailable: boolean;
  /** The rv "0" list came back in pages (no watch cache): keep paging later lists too (client-go's paginatedResult). */
  readonly paginatedResult: boolean;
  /**
   * A list at rv "0" or "" answered whole (at "0" the watch cache ignores `limit`; a restart at "" asked unpaged) passed
   * the page byte limit: from then on lists at "0" and "" are paged, and ask for "" (never "0" again).
   */
  readonly wholeListTooLarge: boolean;
  /**
   * A relist at a specific resourceVersion, asked unpaged (for the watch cache), passed the page byte limit: from then
   * on those are paged too. Kept apart from `wholeListTooLarge`: a list with `limit` and a resourceVersion is served
   * by etcd, which answers 410 once that version is compacted (fixture 04h), so it is paged only when it must be.
   */
  readonly wholeRelistTooLarge: boolean;
  /**
   * Continue tokens that expired (410) in a row, lists that completed or failed otherwise between them reset it: from
   * the second, the restart waits the backoff (a paged list slower than etcd's compaction would restart for ever).
   */
  readonly expiredTokens: number;
  /** A page of a paged list passed the page byte limit this many times: lists ask for `pageSize / 2^n` items (at least 1). */
  readonly pageHalvings: number;
  /** Whether to try the streaming list; turned off once the server refuses its parameters. */
  readonly useWatchList: boolean;
  /** What the recovery rules remember between watches. */
  readonly counters: RecoveryCounters;
  /** How busy the type has been, for the adaptive idle rule. */
  readonly pace: Pace;
  /** Where the backoff stands: the next wait's base and when the last began (reset by a watch that made progress). */
  readonly backoff: BackoffState;
  /** The request or timer whose inputs count: an input for any other one is stale and ignored. */
  readonly request: number;
}

/** Items gathered so far, newest page first: appending a page is O(1) and shares the rest. */
export interface Chain<V> {
  readonly values: readonly V[];
  readonly before: Chain<V> | undefined;
}

/** A list in progress, page by page. */
export interface Listing<T> {
  readonly name: 'listing';
  /** The resourceVersion the first page asked for. */
  readonly rv: string;
  readonly paged: boolean;
  /** The continue token of the page asked for (undefined: the first page). */
  readonly token: string | undefined;
  /** The first page's resourceVersion (the list's). */
  readonly listRV: string;
  readonly pages: number;
  readonly objects: number;
  readonly items: Chain<T> | undefined;
  readonly rejectedKeys: Chain<string> | undefined;
  /** The continue tokens received in this list (long ones hashed), to catch a repeat (owned by this list, added to in place). */
  readonly tokens: Set<string>;
  /** Times the page asked for was asked again after a throttling answer (`retryPage`); 0 at each new page. */
  readonly retries: number;
  /** When its first page came (the reflector's clock); set by the first page, so the budget counts from there. */
  readonly firstPageAt?: number;
}

/** A watch about to be opened: the shell draws its `timeoutSeconds`. */
export interface Opening {
  readonly name: 'opening';
  readonly streaming: boolean;
  /** It starts from the resourceVersion of a list just received. */
  readonly fromList: boolean;
}

/** What every open watch tracks. */
export interface OpenWatch {
  readonly fromList: boolean;
  readonly started: number;
  readonly timeoutSeconds: number;
  readonly lastFrameAt: number;
  readonly lastBookmarkAt: number;
  readonly events: number;
  /** At least one event or bookmark came. */
  readonly progress: boolean;
  /**
   * Events move `lastRV`: a watch from a specific resourceVersion at once; one from "" or "0" (synthetic ADDED events
   * of the current state, in no resourceVersion order) only from its first event other than ADDED; a streaming list
   * never before its initial-events-end bookmark (client-go's `propagateRVFromStart`, and `watchList` setting
   * lastSyncResourceVersion only at the bookmark): resuming from a random initial object's resourceVersion would skip
   * the changes to every object not yet received.
   */
  readonly propagateRV: boolean;
  /** When the armed deadline check fires. */
  readonly checkAt: number;
}

/** A plain watch from lastRV. */
export interface Watching extends OpenWatch {
  readonly name: 'watching';
  /** It was opened as a streaming list whose initial events are all in. */
  readonly streamed: boolean;
}

/**
 * A streaming list (`sendInitialEvents`) before its initial-events-end bookmark. The
 * objects are gathered by key in a Map owned by this state and updated in place
 * (O(1) per event): a streaming state is consumed by the step it is passed to.
 */
export interface Streaming<T> extends OpenWatch {
  readonly name: 'streaming';
  readonly initial: Map<string, T>;
  readonly initialRejected: Set<string>;
}

/** Waiting for a timer (the backoff, or 0 ms), then doing `then`. */
export interface Waiting<T = unknown> {
  readonly name: 'waiting';
  readonly then: Next;
  /** For `retryPage`: the list that goes on, its failed page asked again. */
  readonly listing?: Listing<T>;
  /** For `relistLatest`: list unpaged (a continue token expired). */
  readonly unpaged: boolean;
  /** After a failure no server answered: the `answered` input ends the wait too. */
  readonly untilAnswered: boolean;
  /** The least wait a `Retry-After` asked for (ms; 0: none), honoured by a backoff's wait. */
  readonly retryAfterMs: number;
  /** The timer runs: false while a backoff's jitter is being drawn (`drawBackoff`), until `backoffDrawn`. */
  readonly timed: boolean;
}

export type Phase<T> = { readonly name: 'starting' } | Listing<T> | Opening | Watching | Streaming<T> | Waiting<T>;

export interface ReflectorState<T> extends ReflectorMemory {
  readonly phase: Phase<T>;
}

/** What the shell tells `step`. `id` names the request or timer the input comes from. */
export type ReflectorInput =
  | { readonly type: 'start' }
  | { readonly type: 'listed'; readonly id: number; readonly page: ListPage | undefined }
  | { readonly type: 'listFailed'; readonly id: number; readonly error: unknown }
  | { readonly type: 'timeoutPicked'; readonly id: number; readonly timeoutSeconds: number }
  /** The backoff's random draw, a number in [0, 1) (the `random` option), for the wait `id`. */
  | { readonly type: 'backoffDrawn'; readonly id: number; readonly random: number }
  | { readonly type: 'frame'; readonly id: number; readonly frame: WatchFrame }
  | { readonly type: 'watchFailed'; readonly id: number; readonly error: unknown }
  | { readonly type: 'watchEnded'; readonly id: number }
  | { readonly type: 'check'; readonly id: number }
  | { readonly type: 'timer'; readonly id: number }
  /** The server answers again (the ListWatch's `reachable$`), during the wait `id`. */
  | { readonly type: 'answered'; readonly id: number };

/**
 * What `step` asks the shell to do, in order. Starting a request or the wait
 * timer ends the one before (at most one is in flight).
 */
export type ReflectorEffect<T> =
  | { readonly type: 'emit'; readonly event: SourceEvent<T> }
  /** Tell `onListProgress`: a page came and the list goes on. */
  | { readonly type: 'progress'; readonly progress: ListProgress }
  | { readonly type: 'list'; readonly id: number; readonly options: ListOptions }
  | { readonly type: 'pickTimeout'; readonly id: number }
  | { readonly type: 'watch'; readonly id: number; readonly options: WatchOptions }
  /** Arm the watch's deadline check in `delayMs` (replacing any armed one). */
  | { readonly type: 'armCheck'; readonly id: number; readonly delayMs: number }
  | { readonly type: 'disarmCheck' }
  /** Draw a number in [0, 1) for the backoff's jitter and input it (`backoffDrawn`). */
  | { readonly type: 'drawBackoff'; readonly id: number }
  /**
   * Wait `delayMs` (the backoff's step, at least a `Retry-After`, when `backoff`; else 0), then input `timer`. With
   * `untilAnswered`, also input `answered` as soon as the ListWatch's `reachable$` emits (the first of the two ends the wait).
   */
  | {
      readonly type: 'wait';
      readonly id: number;
      readonly delayMs: number;
      readonly backoff: boolean;
      readonly untilAnswered: boolean;
    };

export interface StepResult<T> {
  readonly state: ReflectorState<T>;
  readonly effects: readonly ReflectorEffect<T>[];
}

export function initialReflectorState<T>(watchList: boolean): ReflectorState<T> {
  return {
    lastRV: '',
    lastRVUnavailable: false,
    paginatedResult: false,
    wholeListTooLarge: false,
    wholeRelistTooLarge: false,
    pageHalvings: 0,
    expiredTokens: 0,
    useWatchList: watchList,
    counters: NO_FAILURES,
    pace: NO_PACE,
    backoff: BACKOFF_START,
    request: 0,
    phase: { name: 'starting' },
  };
}

/** One line for a test failure or a trace: the phase and what it holds, without the objects. */
export function describeState<T>(state: ReflectorState<T>): string {
  const { phase, counters } = state;
  const memory = `lastRV=${JSON.stringify(state.lastRV)}${state.lastRVUnavailable ? ' (unavailable)' : ''} request=${state.request}`;
  const expired = state.expiredTokens > 0 ? ` expiredTokens=${state.expiredTokens}` : '';
  const halved = `${state.pageHalvings > 0 ? ` pages/${2 ** state.pageHalvings}` : ''}${expired}`;
  const set = {
    watchList: state.useWatchList,
    paginated: state.paginatedResult,
    wholeListTooLarge: state.wholeListTooLarge,
    wholeRelistTooLarge: state.wholeRelistTooLarge,
  };
  const flags = `${Object.entries(set)
    .filter(([, on]) => on)
    .map(([name]) => ` ${name}`)
    .join('')}${halved}`;
  const rules = `brokenResumes=${counters.brokenResumes} failuresAtSameRV=${counters.failuresAtSameRV}`;
  const { gapMs, silenced } = state.pace;
  const pace = `${gapMs === undefined ? '' : ` gap=${Math.round(gapMs)}ms`}${silenced ? ' silenced' : ''}`;
  return `${describePhase(phase)} | ${memory}${flags} ${rules}${pace}`;
}

function describePhase<T>(phase: Phase<T>): string {
  switch (phase.name) {
    case 'starting':
      return 'starting';
    case 'listing': {
      const token = phase.token ? ` continue=${phase.token.slice(0, 40)}` : '';
      return `listing rv=${JSON.stringify(phase.rv)} page ${phase.pages + 1}${token} objects=${phase.objects}`;
    }
    case 'opening':
      return `opening ${phase.streaming ? 'streaming list' : 'watch'}${phase.fromList ? ' from a list' : ''}`;
    case 'waiting': {
      const drawing = phase.timed ? '' : ' (drawing the backoff)';
      return `waiting${drawing} then ${phase.then}${phase.unpaged ? ' (unpaged)' : ''}${phase.untilAnswered ? ' or until answered' : ''}`;
    }
    case 'watching':
    case 'streaming': {
      const initial = phase.name === 'streaming' ? ` initial=${phase.initial.size}` : '';
      return `${phase.name} since ${phase.started} timeout=${phase.timeoutSeconds}s events=${phase.events} progress=${phase.progress}${initial}`;
    }
  }
}
