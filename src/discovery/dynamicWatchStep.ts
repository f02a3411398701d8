/**
 * The rules of one dynamic watch (`dynamicInformerFactory(…).watch(selection)`), as one pure transition function in
 * the reflector's shape: a state, the inputs, and {@link dynamicWatchStep} returning the next state and the effects,
 * in order, that the shell in dynamicInformers.ts carries out (it starts and ends the informers, holds and releases
 * them in the factory, and emits the watch's events). No I/O, no clock; `selection`, when a predicate, is called.
 *
 * The rules, by input:
 * - `crdDeleted`: the name may still be listed by a discovery that raced the deletion (`deleted`); its informer, if
 *   one runs, ends as `CRDDeleted` ("customresourcedefinition <name> was deleted").
 * - `crdCreated` (or updated, or listed): the name is no longer racing a deletion: a discovery listing it starts it.
 * - `discovery`, in this order:
 *   1. every name `selection` lists is resolved: one discovery cannot resolve is reported `unresolved` once per
 *      message (again only after it resolved, or with another message); not among what it read while a group
 *      version that may serve it failed: `GroupDiscoveryFailed`, or nothing when its informer runs (it goes on);
 *      listed but not watchable: `Unknown` (its verbs); a name whose informer runs stays on that resource while it is
 *      served, and a CRD that makes the name ambiguous or a better match elsewhere is reported `Ambiguous` (the watch
 *      stays on it), never a false `NotServed`. A predicate that throws for a resource is reported
 *      (`selectionThrew`) and decides nothing: what runs of it goes on as it is, what does not run does not start;
 *   2. a running informer ends as `NotServed` when not wanted any more ("<key> is no longer served") or served in
 *      another version or scope ("<key> is now served as <group>/<version>"), unless discovery could not read its
 *      group version (it goes on);
 *   3. every wanted resource starts that does not run (an informer just ended in another version starts anew) and
 *      whose CRD is not racing a deletion;
 *   4. a deleted CRD's name stops racing once discovery read its group without listing it.
 * - `teardown`: every running informer is released (no event); nothing is remembered.
 *
 * Every end comes before every start, so that the factory forgets an informer of another version before the new
 * one is asked for.
 */
import { resourceName } from '../0-model/resources.ts';
import {
  GroupDiscoveryFailedError,
  ResourceNameError,
  UnknownResourceError,
  isWatchable,
  resolveResource,
  watchableResources,
  type DiscoveredResource,
  type Discovery,
  type DiscoveryFailure,
} from './discovery.ts';

/** Why a dynamic informer ended. */
export type EndReason =
  /** Its CustomResourceDefinition was deleted. */
  | 'CRDDeleted'
  /** Discovery no longer lists it (or lists another version of it, which starts as a new informer). */
  | 'NotServed';

/** Which resources a dynamic watch follows. */
export type Selection =
  /** Every resource that can be listed and watched (one per group, its preferred version), CRDs installed later included. */
  | 'all'
  /** These names (`pods`, `deploy`, `myapples.stable.example.com`, …), each as soon as discovery knows it. */
  | readonly string[]
  /** Every watchable resource the predicate accepts (a throw is reported on `errors$`, and decides nothing). */
  | ((resource: DiscoveredResource) => boolean);

export interface DynamicWatchState {
  /** What the watch follows (fixed for its life). */
  readonly selection: Selection;
  /** The informers it runs, by key (a resource's {@link resourceName}), with the resource each was started for. */
  readonly running: ReadonlyMap<string, DiscoveredResource>;
  /** The names reported unresolved, with the message reported (each is reported once per message). */
  readonly unresolved: ReadonlyMap<string, string>;
  /** CRDs seen deleted that a discovery may still list (one that raced the deletion): not to be started. */
  readonly deleted: ReadonlySet<string>;
}

export type DynamicWatchInput =
  /** A CRD created, updated or listed, by name (`<plural>.<group>`). */
  | { readonly type: 'crdCreated'; readonly name: string }
  /** A CRD deleted, by name. */
  | { readonly type: 'crdDeleted'; readonly name: string }
  /** A discovery emitted. */
  | { readonly type: 'discovery'; readonly discovery: Discovery }
  /** The watch's subscriber let go. */
  | { readonly type: 'teardown' };

export type DynamicWatchEffect =
  /** Emit `unresolved` for this name. */
  | { readonly type: 'unresolved'; readonly name: string; readonly error: ResourceNameError }
  /** End the informer `key` runs: out of the factory, then the `ended` event, then its streams complete. */
  | {
      readonly type: 'end';
      readonly key: string;
      readonly resource: DiscoveredResource;
      readonly reason: EndReason;
      readonly message: string;
    }
  /** Start an informer for `resource` under `key`, and emit `started`. */
  | { readonly type: 'start'; readonly key: string; readonly resource: DiscoveredResource }
  /** Let go of the informer `key` runs, without an event (the watch ends). */
  | { readonly type: 'release'; readonly key: string }
  /** Report that the selection's predicate threw for `resource` (user code: reported, and the watch goes on). */
  | { readonly type: 'selectionThrew'; readonly resource: DiscoveredResource; readonly thrown: unknown };

export interface DynamicWatchStep {
  readonly state: DynamicWatchState;
  readonly effects: readonly DynamicWatchEffect[];
}

/** A watch of `selection` before anything happened. */
export function initialDynamicWatch(selection: Selection): DynamicWatchState {
  return { selection, running: new Map(), unresolved: new Map(), deleted: new Set() };
}

/** One input: the next state and the effects, in order. */
export function dynamicWatchStep(state: DynamicWatchState, input: DynamicWatchInput): DynamicWatchStep {
  const effects: DynamicWatchEffect[] = [];
  switch (input.type) {
    case 'crdCreated': {
      if (!state.deleted.has(input.name)) return { state, effects };
      const deleted = new Set(state.deleted);
      deleted.delete(input.name);
      return { state: { ...state, deleted }, effects };
    }
    case 'crdDeleted': {
      const deleted = new Set(state.deleted).add(input.name);
      const resource = state.running.get(input.name);
      if (!resource) return { state: { ...state, deleted }, effects };
      const running = new Map(state.running);
      running.delete(input.name);
      effects.push({
        type: 'end',
        key: input.name,
        resource,
        reason: 'CRDDeleted',
        message: `customresourcedefinition ${input.name} was deleted`,
      });
      return { state: { ...state, deleted, running }, effects };
    }
    case 'discovery':
      return { state: onDiscovery(state, input.discovery, effects), effects };
    case 'teardown':
      for (const key of state.running.keys()) effects.push({ type: 'release', key });
      return { state: initialDynamicWatch(state.selection), effects };
  }
}

/** A discovery: see the rules' table, steps 1 to 4. */
function onDiscovery(state: DynamicWatchState, d: Discovery, out: DynamicWatchEffect[]): DynamicWatchState {
  const unresolved = new Map(state.unresolved);
  const want = selected(
    d,
    state.selection,
    state.running,
    (name, error) => {
      if (unresolved.get(name) !== error.message) out.push({ type: 'unresolved', name, error });
      unresolved.set(name, error.message);
    },
    (name) => unresolved.delete(name),
    (resource, thrown) => out.push({ type: 'selectionThrew', resource, thrown }),
  );
  const running = new Map(state.running);
  for (const [key, message] of noLongerServed(d, state.running, want)) {
    const resource = running.get(key);
    if (!resource) continue;
    running.delete(key);
    out.push({ type: 'end', key, resource, reason: 'NotServed', message });
  }
  for (const [key, resource] of want) {
    if (running.has(key) || state.deleted.has(key)) continue;
    running.set(key, resource);
    out.push({ type: 'start', key, resource });
  }
  return { ...state, running, unresolved, deleted: stillRacing(state.deleted, d) };
}

/**
 * The deleted CRDs' names a discovery `d` may still have raced: those it lists, or could not read the group of. The
 * others leave: discoveries are emitted in the order they were started (`discoveryRounds`: one round at a time),
 * so every later one started after `d` read the group without the name, and cannot list it unless the CRD is
 * created again (an event that starts it anyway). So the set holds only names the last discovery still served (or
 * could not read): before, every CRD name deleted and never created again stayed for the life of the watch.
 */
export function stillRacing(deleted: ReadonlySet<string>, d: Pick<Discovery, 'all' | 'failures'>): ReadonlySet<string> {
  if (deleted.size === 0) return deleted;
  const served = new Set(d.all.map((r) => resourceName(r)));
  const racing = [...deleted].filter((name) => served.has(name) || d.failures.some((f) => mayServe(f.groupVersion, name)));
  return racing.length === deleted.size ? deleted : new Set(racing);
}

/**
 * The watchable resources `selection` names in discovery `d`, by name. A name it cannot resolve
 * (or that cannot be listed and watched) goes to `unresolved`; one it resolves, to `resolved`.
 * A name not among what `d` read while a group version that may serve it failed is not "unknown":
 * a `GroupDiscoveryFailedError`, or nothing at all when its informer runs (`running`: it goes on).
 * A resource the predicate throws for goes to `threw`, and is wanted as it runs (if it does): nothing changes for it.
 */
function selected(
  d: Discovery,
  selection: Selection,
  running: ReadonlyMap<string, DiscoveredResource>,
  unresolved: (name: string, error: ResourceNameError) => void,
  resolved: (name: string) => void,
  threw: (resource: DiscoveredResource, thrown: unknown) => void,
): Map<string, DiscoveredResource> {
  const out = new Map<string, DiscoveredResource>();
  if (!Array.isArray(selection)) {
    const accept = typeof selection === 'function' ? selection : () => true;
    for (const r of watchableResources(d)) {
      const key = resourceName(r);
      let accepted: boolean;
      try {
        accepted = accept(r);
      } catch (thrown) {
        threw(r, thrown);
        const runs = running.get(key);
        if (runs) out.set(key, runs);
        continue;
      }
      if (accepted) out.set(key, r);
    }
    return out;
  }
  for (const name of selection as readonly string[]) {
    const found = resolveResource(d, name);
    const pin = found instanceof UnknownResourceError ? undefined : pinned(name, d, running);
    if (pin && (found instanceof ResourceNameError || resourceName(found) !== pin.key)) {
      // Still served: the name stays on it. What changed is said, not acted on (a false "no longer served" before).
      const now = found instanceof ResourceNameError ? found.message : `"${name}" now resolves to ${resourceName(found)}`;
      const candidates = found instanceof ResourceNameError ? found.candidates : [found, pin.resource];
      unresolved(name, new ResourceNameError('Ambiguous', name, `${now}; the watch stays on ${pin.key}, still served`, candidates));
      out.set(pin.key, pin.resource);
    } else if (found instanceof UnknownResourceError) {
      const hiding = d.failures.filter((f) => mayServe(f.groupVersion, name));
      if (hiding.length === 0) unresolved(name, found);
      else if (!runsHidden(name, running, hiding)) unresolved(name, new GroupDiscoveryFailedError(name, hiding));
    } else if (found instanceof ResourceNameError) unresolved(name, found);
    else if (!isWatchable(found))
      unresolved(
        name,
        new ResourceNameError('Unknown', name, `${resourceName(found)} cannot be listed and watched (verbs: ${found.verbs.join(', ')})`),
      );
    else {
      resolved(name);
      out.set(resourceName(found), found);
    }
  }
  return out;
}

/**
 * Whether group version `groupVersion` (`apps/v1`, `v1`) may serve the resource `name` names: any may serve a bare
 * name (`myapples`); a name with a group (`myapples.stable.example.com`), only that group's, and with a version too
 * (`myapples.v1.stable.example.com`), only that one.
 */
export function mayServe(groupVersion: string, name: string): boolean {
  const wanted = name.trim().toLowerCase();
  if (!wanted.includes('.')) return true;
  const slash = groupVersion.indexOf('/');
  if (slash < 0) return false; // the core group's resources have no group to name
  const group = groupVersion.slice(0, slash).toLowerCase();
  const version = groupVersion.slice(slash + 1).toLowerCase();
  if (!wanted.endsWith(`.${group}`)) return false;
  const rest = wanted.slice(0, -group.length - 1);
  return !rest.includes('.') || rest.endsWith(`.${version}`);
}

/**
 * The resource this watch runs that `name` resolved to (it matches the name), as discovery `d` serves it now (its
 * group's preferred version), if `d` still serves it and it can be listed and watched: a name stays pinned to it while
 * it is served, whatever a CRD installed later makes the name mean (ambiguous, or a better match elsewhere).
 */
function pinned(
  name: string,
  d: Discovery,
  running: ReadonlyMap<string, DiscoveredResource>,
): { readonly key: string; readonly resource: DiscoveredResource } | undefined {
  for (const [key, r] of running) {
    if (resolveResource({ all: [r] }, name) instanceof ResourceNameError) continue;
    const now = d.resources.find((x) => x.group === r.group && x.plural === r.plural);
    if (now && isWatchable(now)) return { key, resource: now };
  }
  return undefined;
}

/** Whether `name` is a resource this watch runs, of a group version in `failures` (one discovery could not read). */
function runsHidden(name: string, running: ReadonlyMap<string, DiscoveredResource>, failures: readonly DiscoveryFailure[]): boolean {
  const unread = new Set(failures.map((f) => f.groupVersion));
  const hidden = [...running.values()].filter((r) => unread.has(groupVersionOf(r)));
  return hidden.length > 0 && !(resolveResource({ all: hidden }, name) instanceof ResourceNameError);
}

function groupVersionOf(r: Pick<DiscoveredResource, 'group' | 'version'>): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/**
 * The running informers discovery `d` ends as `NotServed`, with why: not wanted any more, or
 * served in another version or scope. A group version discovery could not read (a 503, a document
 * of the wrong shape) is not "no longer served": its informers go on, whatever `want` says, and
 * the other version `d` falls back to meanwhile (`Discovery.resources`) is not started (it has
 * the same key, which stays running).
 */
function noLongerServed(
  d: Discovery,
  running: ReadonlyMap<string, DiscoveredResource>,
  want: ReadonlyMap<string, DiscoveredResource>,
): [string, string][] {
  const unread = new Set(d.failures.map((f) => f.groupVersion));
  const ends: [string, string][] = [];
  for (const [key, r] of running) {
    if (unread.has(groupVersionOf(r))) continue;
    const w = want.get(key);
    if (!w) ends.push([key, `${key} is no longer served`]);
    else if (w.version !== r.version || w.namespaced !== r.namespaced) {
      ends.push([key, `${key} is now served as ${w.group}/${w.version}`]);
    }
  }
  return ends;
}

/**
 * The deleted-CRD race of {@link dynamicWatchStep} alone, as a mutable set (a watch's `deleted`): the CRDs one watch
 * saw deleted (by name, `<plural>.<group>`) that a discovery may still list. Before (review audit15), a name left
 * only when its CRD was created again; see {@link stillRacing}.
 */
export function deletedCrds() {
  let state = initialDynamicWatch([]);
  return {
    deleted: (name: string) => void (state = dynamicWatchStep(state, { type: 'crdDeleted', name }).state),
    created: (name: string) => void (state = dynamicWatchStep(state, { type: 'crdCreated', name }).state),
    /** Whether discovery listing `name` may have raced its deletion: not to be started. */
    racing: (name: string) => state.deleted.has(name),
    /** After discovery `d`: forget the names it read the group of and did not list. */
    discovered(d: Pick<Discovery, 'all' | 'failures'>) {
      state = { ...state, deleted: stillRacing(state.deleted, d) };
    },
    get size() {
      return state.deleted.size;
    },
  };
}
