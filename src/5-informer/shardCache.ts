import { sameSet } from '../util/keeping.ts';

/**
 * The rules of a sharded informer's cache (`shardedInformer`), as one pure transition function in
 * the reflector's shape: a state, the inputs, and {@link shardCacheStep} returning the next state
 * and the effects, in order, that the shell in shardedInformer.ts carries out (no I/O, no clock).
 *
 * The rules, by input:
 * - `held` / `assigned`: the shards kept (`wanted`) are those held and those assigned. A shard that leaves
 *   `wanted` leaves `covered` and the running list's `listing` at once, `owned`/`cached` are published, then its
 *   objects are evicted (as shard moves).
 * - `held` / `assigned`: a shard held, or any `assigned` value, makes the assignment `known`: the first list may start.
 * - `held` / `assigned`: once `ready` and `known`, a list starts when none runs, or again when a shard joined
 *   `wanted` (one list for every shard that joined; the pages read so far dropped the new shards' objects).
 * - `ready`: the handle's replayed values are in: the first list starts if `known`.
 * - `listed`: the running list's objects are cached: `covered` becomes the shards it was started for,
 *   `owned`/`cached` are published.
 * - `stop`: everything is forgotten, `owned` and `cached` published empty.
 *
 * `owned` (held and covered) and `cached` (covered) are published only when they change.
 * A list started by this machine is a *fill* list until its objects are cached (`listing`): its
 * unchanged objects are no events; a relist the reflector makes on its own (after a 410) is not.
 */
export interface ShardCacheState {
  /** The shards whose Leases this replica holds. */
  readonly held: ReadonlySet<number>;
  /** The shards assigned to it (about to be held). */
  readonly assigned: ReadonlySet<number>;
  /** Whether the first list may start: the assignment is known, a shard is held, or the handle has no `assigned$`. */
  readonly known: boolean;
  /** Whether the handle's current values are in (the shell subscribed to them). */
  readonly ready: boolean;
  /** The shards whose objects are kept: held and assigned. */
  readonly wanted: ReadonlySet<number>;
  /** The shards whose objects are in the cache and kept up to date by the watch. */
  readonly covered: ReadonlySet<number>;
  /** The shards the running list was started for, until its objects are cached. */
  readonly listing: ReadonlySet<number> | undefined;
  /** Whether a list and watch runs. */
  readonly running: boolean;
  /** Published: the held shards whose objects are cached. */
  readonly owned: ReadonlySet<number>;
  /** Published: the shards whose objects are cached. */
  readonly cached: ReadonlySet<number>;
}

export type ShardCacheInput =
  { readonly type: 'held' | 'assigned'; readonly shards: ReadonlySet<number> } | { readonly type: 'ready' | 'listed' | 'stop' };

export type ShardCacheEffect =
  /** Publish the held shards whose objects are cached. */
  | { readonly type: 'owned'; readonly shards: ReadonlySet<number> }
  /** Publish the shards whose objects are cached. */
  | { readonly type: 'cached'; readonly shards: ReadonlySet<number> }
  /** Take these shards' objects out of the cache (shard moves). */
  | { readonly type: 'evict'; readonly shards: ReadonlySet<number> }
  /** (Re)start the list and watch. */
  | { readonly type: 'list' };

export interface ShardCacheStep {
  readonly state: ShardCacheState;
  readonly effects: readonly ShardCacheEffect[];
}

const NONE: ReadonlySet<number> = new Set();

/** The state before anything is known; `hasAssigned`: whether the handle has `assigned$` (without it, lists follow `held$` alone). */
export function initialShardCache(hasAssigned: boolean): ShardCacheState {
  return {
    held: NONE,
    assigned: NONE,
    known: !hasAssigned,
    ready: false,
    wanted: NONE,
    covered: NONE,
    listing: undefined,
    running: false,
    owned: NONE,
    cached: NONE,
  };
}

/** Whether a list now would be a fill list: one this machine started, whose objects are not cached yet. */
export function isFilling(state: ShardCacheState): boolean {
  return state.listing !== undefined;
}

/** One input: the next state and the effects, in order. */
export function shardCacheStep(state: ShardCacheState, input: ShardCacheInput): ShardCacheStep {
  const effects: ShardCacheEffect[] = [];
  switch (input.type) {
    case 'held':
    case 'assigned':
      return { state: onShards(state, input.type, input.shards, effects), effects };
    case 'ready':
      return { state: maybeList({ ...state, ready: true }, false, effects), effects };
    case 'listed':
      return { state: publish({ ...state, covered: state.listing ?? state.covered, listing: undefined }, effects), effects };
    case 'stop':
      return {
        state: publish({ ...initialShardCache(false), known: state.known, owned: state.owned, cached: state.cached }, effects),
        effects,
      };
  }
}

/** A new set of held or assigned shards: see the rules' table. */
function onShards(
  state: ShardCacheState,
  type: 'held' | 'assigned',
  shards: ReadonlySet<number>,
  out: ShardCacheEffect[],
): ShardCacheState {
  const held = type === 'held' ? new Set(shards) : state.held;
  const assigned = type === 'assigned' ? new Set(shards) : state.assigned;
  const wanted = new Set([...held, ...assigned]);
  const left = new Set([...state.wanted].filter((shard) => !wanted.has(shard)));
  const joined = [...wanted].some((shard) => !state.wanted.has(shard));
  // A shard that leaves and comes back while a list runs is not covered by that list.
  const without = (set: ReadonlySet<number>) => (left.size === 0 ? set : new Set([...set].filter((shard) => !left.has(shard))));
  const next = publish(
    {
      ...state,
      held,
      assigned,
      wanted,
      known: state.known || type === 'assigned' || held.size > 0,
      covered: without(state.covered),
      listing: state.listing && without(state.listing),
    },
    out,
  );
  // Not ours to reconcile from now on (published above); then out of the cache, as shard moves.
  if (left.size > 0) out.push({ type: 'evict', shards: left });
  return maybeList(next, joined, out);
}

/** Starts a list once ready and known, if none runs or shards joined. */
function maybeList(state: ShardCacheState, joined: boolean, out: ShardCacheEffect[]): ShardCacheState {
  if (!state.ready || !state.known || (state.running && !joined)) return state;
  out.push({ type: 'list' });
  return { ...state, running: true, listing: state.wanted };
}

/** Publishes `owned` and `cached` where they changed. */
function publish(state: ShardCacheState, out: ShardCacheEffect[]): ShardCacheState {
  const cached = sameSet(state.covered, state.cached) ? state.cached : new Set(state.covered);
  const ownedNow = new Set([...state.held].filter((shard) => state.covered.has(shard)));
  const owned = sameSet(ownedNow, state.owned) ? state.owned : ownedNow;
  if (cached !== state.cached) out.push({ type: 'cached', shards: cached });
  if (owned !== state.owned) out.push({ type: 'owned', shards: owned });
  return cached === state.cached && owned === state.owned ? state : { ...state, cached, owned };
}
