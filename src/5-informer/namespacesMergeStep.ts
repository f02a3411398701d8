import type { InformerError } from '../0-model/errors.ts';
import type { KubeObject } from '../0-model/objects.ts';
import { listRefused } from '../2-source/listRefused.ts';
import type { ListProgress, SourceEvent } from '../2-source/sourceEvent.ts';
import type { MissedDeletion } from '../3-deltas/deltas.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';
import { isOutOfDescriptors } from './connectionTurns.ts';

/**
 * An informer over several namespaces as data (the shell is `namespacesInformer`): which way it reads them, and what
 * merging the namespaces' informers needs to remember. As the reflector's `step` (src/2-source/step.ts): one pure
 * function of a state and an input gives the next state and the effects, in order; no I/O, no clock.
 *
 * ```
 * wide ──the cluster-wide list (plain or streaming) refused before its first replace──▶ perNamespace
 * perNamespace, not synced ──every namespace's informer synced──▶ perNamespace, synced (one merged replace)
 * ```
 */
export interface NamespacesMergeState<T> {
  /** One cluster-wide list and watch, or one per namespace (from the start, or its fallback). */
  readonly mode: 'wide' | 'perNamespace';
  /** `wide`: the cluster-wide list has delivered its first `replace` (a 403 after it is no reason to fall back). */
  readonly listed: boolean;
  /** `perNamespace`: every namespace has synced and their first lists went out as one `replace`. */
  readonly synced: boolean;
  /** The last resourceVersion a namespace's informer reached (an event without one is given it). */
  readonly lastRV: string;
  /** An `EMFILE` was said for all the namespaces (again once they sync). */
  readonly saidEmfile: boolean;
  /** `perNamespace`: each namespace's informer, in the order of the namespaces; until the sync only. */
  readonly members: readonly Member<T>[];
}

/** What the merge knows of one namespace's informer until the sync (afterwards, nothing: its events pass). */
export interface Member<T> {
  /** Its last state (undefined: not seen yet). */
  readonly state: InformerState<T> | undefined;
  /** Its list's progress (undefined: none yet). */
  readonly progress: ListProgress | undefined;
}

/** The fixed settings of a step. */
export interface NamespacesMergeConfig {
  /** How many namespaces (distinct): the informers of the per-namespace mode. */
  readonly members: number;
  /** Whether a refused cluster-wide list falls back (not when the source is a ListWatch: it is what it is). */
  readonly fallsBack: boolean;
}

export type NamespacesMergeInput<T> =
  /** Subscribed: in per-namespace mode with no namespace, an empty list at once. */
  | { readonly type: 'start' }
  /** An event of the cluster-wide source. */
  | { readonly type: 'wide'; readonly event: SourceEvent<T> }
  /** A namespace's informer's state; `replayed`: the one it had when subscribed to (its events were delivered before). */
  | { readonly type: 'state'; readonly member: number; readonly state: InformerState<T>; readonly replayed: boolean }
  /** A namespace's paged list's progress. */
  | { readonly type: 'progress'; readonly member: number; readonly progress: ListProgress };

export type NamespacesMergeEffect<T> =
  /** Emit a source event. */
  | { readonly type: 'emit'; readonly event: SourceEvent<T> }
  /** Emit a namespace's `EMFILE`, said for all of them (the shell words it: it knows the turns' capacity). */
  | { readonly type: 'outOfDescriptors'; readonly error: InformerError }
  /** Report the list's progress (`listProgress$`). */
  | { readonly type: 'progress'; readonly progress: ListProgress }
  /** End the cluster-wide source and start one informer per namespace. */
  | { readonly type: 'fallBack' };

export type NamespacesMergeResult<T> = readonly [NamespacesMergeState<T>, readonly NamespacesMergeEffect<T>[]];

const unseen: Member<never> = { state: undefined, progress: undefined };

/** The state as it starts: `wide` until its list is refused, or `perNamespace`, each namespace unseen. */
export function initialMergeState<T>(config: NamespacesMergeConfig, mode: NamespacesMergeState<T>['mode']): NamespacesMergeState<T> {
  return { mode, listed: false, synced: false, lastRV: '', saidEmfile: false, members: mode === 'wide' ? [] : members(config) };
}

function members<T>(config: NamespacesMergeConfig): Member<T>[] {
  return Array.from({ length: config.members }, () => unseen);
}

/** One input: the next state, and what the shell must do, in order. */
export function namespacesMergeStep<T extends KubeObject>(
  config: NamespacesMergeConfig,
  state: NamespacesMergeState<T>,
  input: NamespacesMergeInput<T>,
): NamespacesMergeResult<T> {
  const out: NamespacesMergeEffect<T>[] = [];
  return [stepInto(config, state, input, out), out];
}

function stepInto<T extends KubeObject>(
  config: NamespacesMergeConfig,
  state: NamespacesMergeState<T>,
  input: NamespacesMergeInput<T>,
  out: NamespacesMergeEffect<T>[],
): NamespacesMergeState<T> {
  switch (input.type) {
    case 'start':
      return state.mode === 'perNamespace' ? noNamespace(config, state, out) : state;
    case 'wide':
      return state.mode === 'wide' ? onWide(config, state, input.event, out) : state;
    case 'state':
      return state.mode === 'perNamespace' ? onMemberState(state, input.member, input.state, input.replayed, out) : state;
    case 'progress':
      return state.mode === 'perNamespace' ? onMemberProgress(state, input.member, input.progress, out) : state;
  }
}

/** No namespace: nothing to list, and nothing to wait for (an empty list at once; the informer syncs). */
function noNamespace<T>(
  config: NamespacesMergeConfig,
  state: NamespacesMergeState<T>,
  out: NamespacesMergeEffect<T>[],
): NamespacesMergeState<T> {
  if (config.members > 0) return state;
  out.push({ type: 'emit', event: { type: 'replace', items: [], resourceVersion: '' } });
  return state;
}

/**
 * The cluster-wide source's event passes, but for the 403 that refused its list: these credentials may list the
 * namespaces, not the cluster, so each is listed instead (that 403 is not reported: it is what the fallback is for).
 */
function onWide<T>(
  config: NamespacesMergeConfig,
  state: NamespacesMergeState<T>,
  event: SourceEvent<T>,
  out: NamespacesMergeEffect<T>[],
): NamespacesMergeState<T> {
  if (event.type === 'error' && config.fallsBack && listRefused(event.error, state.listed)) {
    out.push({ type: 'fallBack' });
    return noNamespace(config, { ...state, mode: 'perNamespace', members: members(config) }, out);
  }
  out.push({ type: 'emit', event });
  return event.type === 'replace' && !state.listed ? { ...state, listed: true } : state;
}

/**
 * A namespace's informer moved: its faults are reported (an `EMFILE` once for all), its events pass once every
 * namespace has synced, and the step where the last one syncs emits their first lists as one `replace`.
 */
function onMemberState<T extends KubeObject>(
  state: NamespacesMergeState<T>,
  member: number,
  informer: InformerState<T>,
  replayed: boolean,
  out: NamespacesMergeEffect<T>[],
): NamespacesMergeState<T> {
  let next = state.synced
    ? state
    : { ...state, members: withMember(state.members, member, { ...state.members[member]!, state: informer }) };
  // The replayed state's errors and events were delivered before we joined (none: we are its only subscriber).
  if (replayed) return next;
  for (const error of informer.errors) {
    if (!isOutOfDescriptors(error)) out.push({ type: 'emit', event: { type: 'error', error } });
    else if (!next.saidEmfile) {
      next = { ...next, saidEmfile: true };
      out.push({ type: 'outOfDescriptors', error });
    }
  }
  if (informer.resourceVersion !== '' && informer.resourceVersion !== next.lastRV) next = { ...next, lastRV: informer.resourceVersion };
  if (next.synced) {
    emitChanges(informer, next.lastRV, out);
    return next;
  }
  if (!next.members.every((m) => m.state?.synced === true)) return next;
  const items = next.members.flatMap((m) => m.state!.store.list());
  out.push({ type: 'emit', event: { type: 'replace', items, resourceVersion: next.lastRV } });
  // What the members were is no longer needed: from now on their events pass as they come.
  return { ...next, synced: true, saidEmfile: false, members: [] };
}

/** A synced namespace's step as the merged view's source events. */
function emitChanges<T extends KubeObject>(informer: InformerState<T>, lastRV: string, out: NamespacesMergeEffect<T>[]): void {
  const { resourceVersion } = informer;
  if (informer.step === 'watch') return void out.push({ type: 'emit', event: { type: 'watch', resourceVersion } });
  if (informer.step === 'bookmark') return void out.push({ type: 'emit', event: { type: 'bookmark', resourceVersion } });
  for (const event of informer.events) {
    const rv = event.object.metadata.resourceVersion ?? lastRV;
    if (event.type === 'added') out.push({ type: 'emit', event: { type: 'added', object: event.object, resourceVersion: rv } });
    else if (event.type === 'updated') out.push({ type: 'emit', event: { type: 'modified', object: event.object, resourceVersion: rv } });
    else if (!event.finalStateUnknown) out.push({ type: 'emit', event: { type: 'deleted', object: event.object, resourceVersion: rv } });
    else {
      // A deletion the namespace's relist noticed: a tombstone for the merged view too, as a single namespace's.
      const missed: MissedDeletion<T> = { type: 'deleted', object: event.object, resourceVersion: rv, finalStateUnknown: true };
      out.push({ type: 'emit', event: missed });
    }
  }
}

/**
 * A namespace's list progress: until the sync, summed over the namespaces (one synced counts its cached objects);
 * afterwards each namespace's relist is its own.
 */
function onMemberProgress<T>(
  state: NamespacesMergeState<T>,
  member: number,
  progress: ListProgress,
  out: NamespacesMergeEffect<T>[],
): NamespacesMergeState<T> {
  if (state.synced) {
    out.push({ type: 'progress', progress });
    return state;
  }
  const members = withMember(state.members, member, { ...state.members[member]!, progress });
  let pages = 0;
  let objects = 0;
  for (const m of members) {
    pages += m.progress?.pages ?? 0;
    objects += m.state?.synced === true ? m.state.store.size : (m.progress?.objects ?? 0);
  }
  out.push({ type: 'progress', progress: { pages, objects } });
  return { ...state, members };
}

function withMember<T>(list: readonly Member<T>[], i: number, member: Member<T>): Member<T>[] {
  const copy = list.slice();
  copy[i] = member;
  return copy;
}
