import type { InformerError } from '../0-model/errors.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';

/** What happened to an object, in client-go's DeltaFIFO vocabulary. */
export type DeltaType = 'Added' | 'Updated' | 'Deleted' | 'Replaced' | 'Sync';

/**
 * The last known state of an object whose deletion was missed (the watch was
 * down when it happened, and a relist no longer has it). client-go calls this
 * `DeletedFinalStateUnknown`.
 */
export interface DeletedFinalStateUnknown<T> {
  readonly finalStateUnknown: true;
  readonly key: string;
  readonly object: T;
}

export function isTombstone<T>(value: T | DeletedFinalStateUnknown<T>): value is DeletedFinalStateUnknown<T> {
  return typeof value === 'object' && value !== null && (value as { finalStateUnknown?: unknown }).finalStateUnknown === true;
}

export interface Delta<T> {
  readonly type: DeltaType;
  readonly object: T | DeletedFinalStateUnknown<T>;
}

/** Everything that happened to one key since it was last handed on, oldest first. */
export interface Deltas<T> {
  readonly key: string;
  readonly deltas: readonly Delta<T>[];
  /** True while the initial list is being delivered (client-go's isInInitialList). */
  readonly isInInitialList: boolean;
  /**
   * Set by `deltaFifo` (without `knownObjects`) on a delete of a key it handed on as a tombstone
   * at the latest list: it replaces that tombstone if a consumer still has it queued
   * (`processDeltas`), and is dropped otherwise, as client-go's DeltaFIFO ignores a delete of a
   * key it no longer has. (After a later list, such a delete is dropped: see deltaFifo.)
   */
  readonly afterTombstone?: true;
}

/** Why a batch of deltas was produced. */
export type BatchCause = 'event' | 'replace' | 'resync';

/** The deltas one source step produced: one watch event, a whole relist, or a resync tick. */
export interface DeltaBatch<T> {
  readonly type: 'deltas';
  readonly cause: BatchCause;
  readonly items: readonly Deltas<T>[];
  /** The resourceVersion of the step (absent for resync). */
  readonly resourceVersion?: string;
}

/** What `deltaFifo` emits: batches of deltas, and the source's bookmarks, watch starts and errors passed through. */
export type FifoOutput<T> =
  | DeltaBatch<T>
  | { readonly type: 'bookmark' | 'watch'; readonly resourceVersion: string }
  | { readonly type: 'error'; readonly error: InformerError };

/**
 * Appends a delta to a key's list, collapsing a Deleted that follows a Deleted
 * into one (the older one is kept unless it is only a tombstone), as client-go's
 * dedupDeltas. Returns the same array, modified.
 */
export function appendDelta<T>(deltas: Delta<T>[], delta: Delta<T>): Delta<T>[] {
  const last = deltas[deltas.length - 1];
  if (last && last.type === 'Deleted' && delta.type === 'Deleted') {
    if (isTombstone(last.object)) deltas[deltas.length - 1] = delta;
    return deltas;
  }
  deltas.push(delta);
  return deltas;
}

function uidOf(object: unknown): string | undefined {
  const uid = (object as { metadata?: { uid?: unknown } } | null)?.metadata?.uid;
  return typeof uid === 'string' && uid !== '' ? uid : undefined;
}

/**
 * When a list brings `listed` for a key that holds `previous`, and the two are different objects
 * (both have a uid and the uids differ: the name was deleted and created again while the watch was
 * down), the Deleted delta that tells the missed deletion: a {@link DeletedFinalStateUnknown}
 * tombstone of `previous`, to go just before the listed object's Replaced. Otherwise undefined.
 */
export function recreatedDelta<T>(key: string, previous: T | undefined, listed: T): Delta<T> | undefined {
  if (previous === undefined) return undefined;
  const before = uidOf(previous);
  const after = uidOf(listed);
  if (before === undefined || after === undefined || before === after) return undefined;
  return { type: 'Deleted', object: { finalStateUnknown: true, key, object: previous } };
}

/**
 * A `replace` that fills shards which joined a sharded informer (`shardedInformer`): the objects it
 * finds unchanged (the resourceVersion the consumer has) are no news, so `deltaFifo` and `realFifo`
 * hand on no delta for them (the list is there for the new shards; client-go has no such list, and
 * hands a relist's unchanged objects to every handler while no resync check has run: docs/semantics.md).
 * Any other listed object, and every tombstone, is as in a plain `replace`.
 */
export type FillReplace<T> = Extract<SourceEvent<T>, { readonly type: 'replace' }> & { readonly fill: true };

/** Whether a `replace` is a {@link FillReplace}. */
export function isFill<T>(event: Extract<SourceEvent<T>, { readonly type: 'replace' }>): boolean {
  return (event as Partial<FillReplace<T>>).fill === true;
}

/**
 * A `deleted` that a list noticed (the deletion itself was missed): an informer over several namespaces forwards
 * one namespace's tombstone so. `deltaFifo` and `realFifo` hand it on as a Deleted carrying a
 * {@link DeletedFinalStateUnknown} of its object, as they do for the keys a list of their own lacks.
 */
export type MissedDeletion<T> = Extract<SourceEvent<T>, { readonly object: T }> & {
  readonly type: 'deleted';
  readonly finalStateUnknown: true;
};

/** Whether a `deleted` is a {@link MissedDeletion}. */
export function isMissedDeletion<T>(event: SourceEvent<T>): boolean {
  return (event as Partial<MissedDeletion<T>>).finalStateUnknown === true;
}

function resourceVersionOf(object: unknown): string | undefined {
  const rv = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof rv === 'string' ? rv : undefined;
}

/** Whether `listed` is `previous` unchanged: the same resourceVersion (objects without one never are). */
export function isUnchanged<T>(previous: T | undefined, listed: T): boolean {
  const before = previous === undefined ? undefined : resourceVersionOf(previous);
  return before !== undefined && before === resourceVersionOf(listed) && uidOf(previous) === uidOf(listed);
}

/** The newest object in a list of deltas, unwrapping a tombstone. */
export function newestObject<T>(deltas: readonly Delta<T>[]): T | undefined {
  const last = deltas[deltas.length - 1];
  if (!last) return undefined;
  return isTombstone(last.object) ? last.object.object : last.object;
}
