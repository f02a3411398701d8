import { DiscoveryError } from '../discovery/index.ts';
import { type ErrorReason, type InformerError } from '../index.ts';
// Before a resource has synced, a 400, 403 or 404 means retrying cannot help (kubectl gives up too): the one classification.
import { isPermanent } from '../0-model/errors.ts';
import { discoveryFailed, explain, problemLine } from './explain.ts';
import { count } from './format.ts';

/**
 * The rules of a `rx-informer watch` session, in the reflector's shape: a {@link SessionState}, the inputs
 * that reach it (a resource to watch, an informer's state, progress, errors and events, the dynamic factory's
 * resources and faults, the status ticker), and one pure {@link step} returning the next state and the effects
 * as data (lines to print, informers to subscribe or let go, the session synced or failed). The shell in
 * watch.ts subscribes, prints and runs the timer; spec/cli/session.spec.ts tests the rules table-driven.
 *
 * `I` is the informer, opaque here: the session only compares it (a cluster-scoped resource is one informer
 * whatever the namespace; an `ended` event is for the informer it names, not a successor).
 */

/** How often a long list's progress is shown, at most (ms). */
export const LIST_PROGRESS_MS = 5_000;

/**
 * How long a many-namespace informer waits, after the last namespace newly refused (403), before it is made again over
 * the rest (ms): its namespaces are listed together, so their refusals come together, and are dropped in one round,
 * not one informer each (each new informer lists every namespace again: 200 namespaces, 100 refused made 20,510 requests).
 */
export const NARROW_DEBOUNCE_MS = 500;

/** A resource to watch, as the shell finds it (from the factory, or from a dynamic watch). */
export interface NewResource<I> {
  /** The resource's name, as records show it. */
  readonly name: string;
  /** What progress and problems call it: `pods`, or `pods in shop` when several namespaces are watched. */
  readonly label: string;
  /** A Secret: parser messages that may quote its data are withheld. */
  readonly secret: boolean;
  readonly informer: I;
  /** The one namespace its informer reads (one informer per resource and namespace); none: all, or cluster-scoped. */
  readonly namespace?: string;
  /**
   * Past 16 namespaces (one informer over all of them): the namespaces it reads, and the same informer over fewer (a
   * cold informer, made and nothing else): a namespace the user may not list is dropped and the rest go on, as with
   * one informer per namespace (docs/cli.md, "Namespaces and kubectl habits").
   */
  readonly namespaces?: readonly string[];
  readonly narrow?: (namespaces: readonly string[]) => I;
}

/** One watched resource (one informer: a resource in a scope). */
export interface WatchedResource<I> extends NewResource<I> {
  /** Its index in {@link SessionState.resources}. */
  readonly id: number;
  /** With --all: which dynamic watch (by scope) runs it; a resource that may not be listed is taken out of it. */
  readonly scope: number | undefined;
  /** Watched now (not given up, not ended). */
  readonly live: boolean;
  readonly synced: boolean;
  /** Objects cached, as last seen before the session synced (for the progress line and the summary). */
  readonly count: number;
  /**
   * With --all: what was seen of a resource being removed (a watch that ended at once, a 404) since its last event.
   * Each is reported from its second time on: the first may only mean its CRD is being deleted, which ends it with one line of its own.
   */
  readonly hints: readonly ErrorReason[];
  /** When its list progress was last shown, on the terminal's clock (ms). */
  readonly listShownAt: number;
  /** Of {@link NewResource.namespaces}: those refused (403, said) that its informer still reads until it is narrowed. */
  readonly refused?: readonly string[];
}

export interface SessionState<I> {
  /** Every resource watched so far (with --all, ended ones too), by id. */
  readonly resources: readonly WatchedResource<I>[];
  /** Every live resource had synced once: the summary is printed, the progress line is done. */
  readonly allSynced: boolean;
  /** The session said why it cannot go on (once). */
  readonly failed: boolean;
  /** With --all: the kinds of CRD-watch fault already told (each once). */
  readonly reported: readonly ErrorReason[];
}

export interface SessionConfig {
  /** The API server as messages show it. */
  readonly server: string;
  /** Where the user's credential comes from (an exec plugin, a token file), named on a 401; see credentialSource. */
  readonly credential?: string | undefined;
  /** The terminal has a status line: progress rewrites it, and the first sync is summed up in one line. */
  readonly tty: boolean;
  /** When the session started, on the clock `step` is given (ms). */
  readonly startedAt: number;
  /** How many namespaces were asked for (`-n a,b`: 2); 0 for all. Counts say resources, not informers. */
  readonly namespaces: number;
}

export type SessionInput<I> =
  /** Resources to watch from the start (without --all), all at once: none counts as synced before all are known. */
  | { readonly type: 'watch'; readonly resources: readonly NewResource<I>[] }
  /** With --all: a dynamic watch (of scope `scope`) started an informer. */
  | { readonly type: 'started'; readonly scope: number; readonly resource: NewResource<I> }
  /** With --all: a dynamic watch ended an informer (its CRD deleted, no longer served). */
  | { readonly type: 'ended'; readonly label: string; readonly informer: I; readonly message: string }
  /** An informer's state: objects cached, and whether it has synced. */
  | { readonly type: 'state'; readonly id: number; readonly size: number; readonly synced: boolean }
  /** A page of a long list; `at` is the terminal's clock (ms). */
  | { readonly type: 'listProgress'; readonly id: number; readonly pages: number; readonly objects: number; readonly at: number }
  | { readonly type: 'error'; readonly id: number; readonly error: InformerError }
  /** A change to a resource's objects (printed by the shell). */
  | { readonly type: 'event'; readonly id: number }
  /** With --all: a fault of discovery or of the CRD watch. */
  | { readonly type: 'factoryError'; readonly error: InformerError }
  /** On a terminal: time to redraw the status line. */
  | { readonly type: 'tick' }
  /** {@link NARROW_DEBOUNCE_MS} after a `narrowSoon` for this informer (the last one asked for): drop its refused namespaces. */
  | { readonly type: 'narrow'; readonly id: number; readonly informer: I };

export type SessionEffect<I> =
  /** A line on stderr. */
  | { readonly type: 'err'; readonly line: string }
  /** Rewrite the status line (`''` clears it). */
  | { readonly type: 'status'; readonly line: string }
  /** Subscribe to this informer for resource `id`, in place of what was subscribed for it. */
  | { readonly type: 'attach'; readonly id: number; readonly informer: I }
  | { readonly type: 'detach'; readonly id: number }
  /**
   * Send `narrow` for this informer {@link NARROW_DEBOUNCE_MS} from now, in place of any sent for resource `id` so far:
   * a namespace was refused, more may follow.
   */
  | { readonly type: 'narrowSoon'; readonly id: number; readonly informer: I }
  /** Take the resource out of its dynamic watch, so that nothing keeps its informer running. */
  | { readonly type: 'exclude'; readonly scope: number; readonly name: string }
  /** Every resource watched has synced (once). */
  | { readonly type: 'synced' }
  /** The watch cannot go on: exit 1 with this sentence (once). */
  | { readonly type: 'failed'; readonly sentence: string };

export interface SessionStep<I> {
  readonly state: SessionState<I>;
  readonly effects: readonly SessionEffect<I>[];
}

export function initialSession<I>(): SessionState<I> {
  return { resources: [], allSynced: false, failed: false, reported: [] };
}

/**
 * The session's one transition function: a state and an input give the next state and the effects, in order.
 * Pure: `now` (ms, the clock of `config.startedAt`) says how long the sync took. An input about a resource no
 * longer watched changes nothing.
 */
export function step<I>(config: SessionConfig, state: SessionState<I>, input: SessionInput<I>, now: number): SessionStep<I> {
  const out: SessionEffect<I>[] = [];
  return { state: transition(config, state, input, now, out), effects: out };
}

type Out<I> = SessionEffect<I>[];

function transition<I>(config: SessionConfig, state: SessionState<I>, input: SessionInput<I>, now: number, out: Out<I>): SessionState<I> {
  switch (input.type) {
    case 'watch':
      return input.resources.reduce((s, r) => (s.resources.some((w) => w.informer === r.informer) ? s : add(s, r, undefined, out)), state);
    case 'started':
      return onStarted(state, input.scope, input.resource, out);
    case 'ended':
      return onEnded(config, state, input, now, out);
    case 'factoryError':
      return onFactoryError(config, state, input.error, out);
    case 'tick':
      if (config.tty && !state.allSynced) out.push({ type: 'status', line: progress(state) });
      return state;
  }
  const w = state.resources[input.id];
  if (!w?.live) return state;
  switch (input.type) {
    case 'state':
      return onState(config, state, w, input.size, input.synced, now, out);
    case 'listProgress':
      return onListProgress(state, w, input.pages, input.objects, input.at, out);
    case 'error':
      return onError(config, state, w, input.error, now, out);
    case 'event':
      return w.hints.length > 0 ? update(state, w, { hints: [] }) : state;
    case 'narrow':
      return input.informer === w.informer ? narrow(state, w, out) : state;
  }
}

/** A new resource, live from now on: subscribed at once (its state may say synced as soon as it is). */
function add<I>(state: SessionState<I>, r: NewResource<I>, scope: number | undefined, out: Out<I>): SessionState<I> {
  const id = state.resources.length;
  const { name, label, secret, informer, namespace, namespaces, narrow } = r;
  // --all past 16 namespaces: the namespaces without `narrow` (the dynamic watch runs the informer; whyForbiddenAll).
  const many = { ...(namespaces !== undefined ? { namespaces } : {}), ...(narrow !== undefined ? { narrow } : {}) };
  const one = namespace !== undefined ? { namespace } : {};
  const added = {
    id,
    name,
    label,
    secret,
    informer,
    ...one,
    ...many,
    scope,
    live: true,
    synced: false,
    count: 0,
    hints: [],
    listShownAt: 0,
  };
  out.push({ type: 'attach', id, informer });
  return { ...state, resources: [...state.resources, added] };
}

function update<I>(state: SessionState<I>, w: WatchedResource<I>, patch: Partial<WatchedResource<I>>): SessionState<I> {
  const resources = [...state.resources];
  resources[w.id] = { ...w, ...patch };
  return { ...state, resources };
}

const live = <I>(state: SessionState<I>) => state.resources.filter((w) => w.live);

/** How many resources (by name: `pods` in two namespaces is one). */
const names = <I>(resources: readonly WatchedResource<I>[]) => new Set(resources.map((w) => w.name)).size;

/** A dynamic watch started an informer: a new resource, or (same label) the successor of a watch that replaced its predecessor. */
function onStarted<I>(state: SessionState<I>, scope: number, r: NewResource<I>, out: Out<I>): SessionState<I> {
  const same = state.resources.find((w) => w.live && w.label === r.label);
  if (same) {
    out.push({ type: 'attach', id: same.id, informer: r.informer });
    return update(state, same, { informer: r.informer, listShownAt: 0 });
  }
  if (state.allSynced) out.push({ type: 'err', line: `+ watching ${r.label} (new resource)` });
  return add(state, r, scope, out);
}

function onEnded<I>(
  config: SessionConfig,
  state: SessionState<I>,
  input: Extract<SessionInput<I>, { type: 'ended' }>,
  now: number,
  out: Out<I>,
): SessionState<I> {
  const w = state.resources.find((r) => r.live && r.label === input.label);
  if (!w || w.informer !== input.informer) return state;
  out.push({ type: 'detach', id: w.id }, { type: 'err', line: `- stopped watching ${w.label}: ${input.message}` });
  return checkAllSynced(config, update(state, w, { live: false }), now, out);
}

function onState<I>(
  config: SessionConfig,
  state: SessionState<I>,
  w: WatchedResource<I>,
  size: number,
  synced: boolean,
  now: number,
  out: Out<I>,
): SessionState<I> {
  if (synced && !w.synced) {
    // A resource that comes after the first sync has its own line, on a terminal too.
    if (!config.tty || state.allSynced) out.push({ type: 'err', line: `synced ${w.label}: ${count(size, 'object')}` });
    return checkAllSynced(config, update(state, w, { synced: true, count: size }), now, out);
  }
  // Counts feed the progress line and the summary only: after the first sync, a change costs no copy.
  return state.allSynced || size === w.count ? state : update(state, w, { count: size });
}

/** A long list (the first or a relist): "listing pods: 120,000 objects so far", at most every {@link LIST_PROGRESS_MS}. */
function onListProgress<I>(
  state: SessionState<I>,
  w: WatchedResource<I>,
  pages: number,
  objects: number,
  at: number,
  out: Out<I>,
): SessionState<I> {
  const since = pages === 1 ? at : w.listShownAt;
  if (at - since < LIST_PROGRESS_MS) return since === w.listShownAt ? state : update(state, w, { listShownAt: since });
  out.push({ type: 'err', line: `listing ${w.label}: ${objects.toLocaleString('en-US')} objects so far` });
  return update(state, w, { listShownAt: at });
}

/**
 * Whether a resource is given up on for `error` (`watch` leaves it out, `record` too): a list that fails before the
 * resource has synced with a status retrying cannot fix (400, 403, 404; kubectl gives up on it too).
 */
export function givesUp(synced: boolean, error: InformerError): boolean {
  return !synced && error.phase === 'list' && isPermanent(error);
}

function onError<I>(
  config: SessionConfig,
  state: SessionState<I>,
  w: WatchedResource<I>,
  error: InformerError,
  now: number,
  out: Out<I>,
): SessionState<I> {
  if (givesUp(w.synced, error)) {
    const namespace = forbiddenNamespace(w, error);
    if (namespace === null) return state;
    if (namespace !== undefined) return refuseNamespace(config, state, w, namespace, error, now, out);
    return giveUp(config, state, w, error, now, out);
  }
  const removal = error.reason === 'NotFound' || error.reason === 'VeryShortWatch';
  if (w.scope !== undefined && removal && !w.hints.includes(error.reason)) return update(state, w, { hints: [...w.hints, error.reason] });
  out.push({ type: 'err', line: problemLine(w.label, error, config.server, w.secret, config.credential) });
  return state;
}

/**
 * The namespace of a many-namespace informer that its 403 names (`list /api/v1/namespaces/ns-03/configmaps`): that
 * one is dropped, not the resource; `null` for one already refused (its retry: said once). A 403 on the cluster-wide
 * list (no namespace) is the library's fallback to one list per namespace, and never reaches here.
 */
function forbiddenNamespace<I>(w: WatchedResource<I>, error: InformerError): string | null | undefined {
  if (w.namespaces === undefined || w.narrow === undefined || error.reason !== 'Forbidden') return undefined;
  const namespace = requestNamespace(error);
  if (namespace === undefined || !w.namespaces.includes(namespace)) return undefined;
  return w.refused?.includes(namespace) === true ? null : namespace;
}

/** The namespace a failed request names (`list /api/v1/namespaces/ns-03/configmaps`), if any. */
const requestNamespace = (error: InformerError): string | undefined => /\/namespaces\/([^/?]+)\//.exec(error.request ?? '')?.[1];

/**
 * With --all past 16 namespaces (one informer over all of them, run by the dynamic watch, which cannot be made again
 * over fewer): the namespace whose 403 leaves the whole resource out, said, so that the line does not read as a
 * resource the user may not list anywhere. Empty otherwise.
 */
function whyForbiddenAll<I>(w: WatchedResource<I>, error: InformerError): string {
  if (w.namespaces === undefined || w.narrow !== undefined || error.reason !== 'Forbidden') return '';
  const namespace = requestNamespace(error);
  if (namespace === undefined || !w.namespaces.includes(namespace)) return '';
  return `${namespace} may not be listed, and with --all that leaves the whole resource out (without --all only ${namespace} is): `;
}

/**
 * One namespace of a many-namespace informer may not be listed: said at once, and collected; the informer is made again
 * over the rest once, {@link NARROW_DEBOUNCE_MS} after the last one refused (`narrowSoon`, then `narrow`), not once per
 * namespace. The last namespace left: the resource is given up, that namespace named.
 */
function refuseNamespace<I>(
  config: SessionConfig,
  state: SessionState<I>,
  w: WatchedResource<I>,
  namespace: string,
  error: InformerError,
  now: number,
  out: Out<I>,
): SessionState<I> {
  const refused = [...(w.refused ?? []), namespace];
  if (refused.length === w.namespaces!.length) return giveUp(config, state, w, error, now, out, `${w.name} in ${namespace}`);
  out.push({
    type: 'err',
    line: `! not watching ${w.name} in ${namespace}: ${explain(error, config.server, w.secret, config.credential)}`,
  });
  out.push({ type: 'narrowSoon', id: w.id, informer: w.informer });
  return update(state, w, { refused });
}

/** The informer made again over the namespaces not refused, in place of its predecessor (whose inputs are ignored from now on). */
function narrow<I>(state: SessionState<I>, w: WatchedResource<I>, out: Out<I>): SessionState<I> {
  const refused = w.refused ?? [];
  if (refused.length === 0 || w.namespaces === undefined || w.narrow === undefined) return state;
  const namespaces = w.namespaces.filter((n) => !refused.includes(n));
  const informer = w.narrow(namespaces);
  out.push({ type: 'attach', id: w.id, informer });
  // Its label counts the namespaces it reads (watch.ts: `configmaps in 17 namespaces`): fewer now.
  const label = w.label.replace(new RegExp(` in ${w.namespaces.length} namespaces$`), ` in ${count(namespaces.length, 'namespace')}`);
  return update(state, w, { informer, namespaces, label, listShownAt: 0, refused: [] });
}

/**
 * A resource that may not be listed is left out; the watch ends only when none is left (or on a 400: the command itself is
 * wrong). `where`: what the line names (a many-namespace informer's last namespace: `configmaps in ns-16`).
 */
function giveUp<I>(
  config: SessionConfig,
  state: SessionState<I>,
  w: WatchedResource<I>,
  error: InformerError,
  now: number,
  out: Out<I>,
  where = w.label,
): SessionState<I> {
  out.push({ type: 'detach', id: w.id });
  if (w.scope !== undefined) out.push({ type: 'exclude', scope: w.scope, name: w.name });
  const next = update(state, w, { live: false });
  const why = whyForbiddenAll(w, error) + explain(error, config.server, w.secret, config.credential);
  if (error.reason === 'BadRequest') return fail(next, `cannot watch ${w.label}: ${why}`, out);
  if (live(next).length === 0) {
    // One resource in one scope; a many-namespace informer says its namespaces, as one informer per namespace does.
    if (next.resources.length === 1 && w.namespaces === undefined) return fail(next, `cannot watch ${w.label}: ${why}`, out);
    out.push({ type: 'err', line: `! not watching ${where}: ${why}` });
    const resources = names(next.resources);
    const sentence =
      resources === 1
        ? `cannot watch ${w.name} in any of the ${count(config.namespaces, 'namespace')}`
        : `none of the ${count(resources, 'resource')} can be watched`;
    return fail(next, sentence, out);
  }
  out.push({ type: 'err', line: `! not watching ${where}: ${why}` });
  return checkAllSynced(config, next, now, out);
}

function fail<I>(state: SessionState<I>, sentence: string, out: Out<I>): SessionState<I> {
  if (state.failed) return state;
  out.push({ type: 'failed', sentence });
  return { ...state, failed: true };
}

/** Once every live resource has synced: the summary (on a terminal, what was listed too), once. */
function checkAllSynced<I>(config: SessionConfig, state: SessionState<I>, now: number, out: Out<I>): SessionState<I> {
  const watched = live(state);
  if (state.allSynced || watched.length === 0 || !watched.every((w) => w.synced)) return state;
  const total = watched.reduce((n, w) => n + w.count, 0);
  if (config.tty) {
    out.push({ type: 'status', line: '' });
    const counts = watched.filter((w) => w.count > 0).map((w) => `${w.label} ${w.count}`);
    if (counts.length) out.push({ type: 'err', line: `listed: ${counts.join(', ')}` });
  }
  // One informer per resource and namespace: the resources are counted by name, the namespaces said apart.
  const where = config.namespaces > 1 ? namespacesWatched(config, watched) : '';
  // Whole milliseconds: the monotonic clock reads fractions.
  const took = `${count(total, 'object')} in ${Math.round(now - config.startedAt)} ms${where}`;
  out.push(
    { type: 'err', line: `synced ${count(names(watched), 'resource')}, ${took}; watching for changes (Ctrl-C to stop)` },
    { type: 'synced' },
  );
  return { ...state, allSynced: true };
}

/**
 * ` (3 namespaces)`, or ` (2 of 3 namespaces)` when some were dropped (a 403 before their sync): the namespaces still
 * watched, not those asked for. A session whose resources say no namespace (cluster-scoped only) says the number asked.
 */
function namespacesWatched<I>(config: SessionConfig, watched: readonly WatchedResource<I>[]): string {
  const read = watched.flatMap((w) => w.namespaces ?? (w.namespace !== undefined ? [w.namespace] : []));
  const n = read.length === 0 ? config.namespaces : new Set(read).size;
  return n < config.namespaces ? ` (${n} of ${count(config.namespaces, 'namespace')})` : ` (${count(n, 'namespace')})`;
}

/** `syncing 3/5 resources, 1200 objects (waiting for pods, …)`. */
export function progress<I>(state: SessionState<I>): string {
  const watched = live(state);
  const pending = watched.filter((w) => !w.synced).map((w) => w.label);
  const objects = watched.reduce((n, w) => n + w.count, 0);
  const waiting = pending.length ? ` (waiting for ${pending.slice(0, 4).join(', ')}${pending.length > 4 ? ', …' : ''})` : '';
  return `syncing ${watched.length - pending.length}/${count(watched.length, 'resource')}, ${count(objects, 'object')}${waiting}`;
}

/** With --all: discovery's faults (one group version, or all of it) and the CRD watch's (each kind once; a 410 is routine). */
function onFactoryError<I>(config: SessionConfig, state: SessionState<I>, error: InformerError, out: Out<I>): SessionState<I> {
  const unnoticed = 'resources installed or removed from now on may go unnoticed';
  if (error instanceof DiscoveryError) {
    const why = () => explain(error, config.server, false, config.credential);
    const line =
      error.groupVersion !== undefined
        ? discoveryFailed(error.groupVersion, error, config.server, true)
        : `! discovery failed (tried again with backoff; what it adds or removes is seen once it reads): ${why()}`;
    out.push({ type: 'err', line });
    return state;
  }
  if (error.reason === 'Expired' || error.reason === 'Gone' || state.reported.includes(error.reason)) return state;
  out.push({
    type: 'err',
    line: `! cannot watch CustomResourceDefinitions; ${unnoticed}: ${explain(error, config.server, false, config.credential)}`,
  });
  return { ...state, reported: [...state.reported, error.reason] };
}
