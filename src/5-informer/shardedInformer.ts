import { EMPTY, Observable, Subject, Subscription, defer, distinctUntilChanged, map, startWith, type ObservableInput } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import type { KubeObject } from '../0-model/objects.ts';
import type { Resource } from '../0-model/resources.ts';
import type { KeepObject } from '../1-transport/lazyJson.ts';
import { filtered, isListWatch, type ListWatch } from '../1-transport/listWatch.ts';
import { namespaceOfKey, rawKey } from '../0-model/keys.ts';
import type { ListProgress, SourceEvent } from '../2-source/sourceEvent.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';
import type { Store } from '../4-store/store.ts';
import { informerFromSource, reflectorFor, toListWatch, type Informer, type InformerOptions } from './informerFromSource.ts';
import { checkInformerOptionNames, checkInformerOptions, checkListWatchSelectors, checkResource } from './checkOptions.ts';
import { keeping, sameSet } from '../util/keeping.ts';
import type { FillReplace } from '../3-deltas/deltas.ts';
import {
  initialShardCache,
  isFilling,
  shardCacheStep,
  type ShardCacheEffect,
  type ShardCacheInput,
  type ShardCacheState,
} from './shardCache.ts';
import { forward } from '../util/forward.ts';

/**
 * What a sharded informer needs of a sharding handle: `sharding()` of
 * `rx-informer/leaderelection` is one (any object of this shape will do).
 */
export interface ShardSource {
  /** How many shards keys are spread over. */
  readonly shards: number;
  /** The shard of a key (`namespace/name`, or `name` for cluster-scoped objects). */
  shardOf(key: string): number;
  /** The shards this replica holds, after every change (replays the latest). */
  readonly held$: Observable<ReadonlySet<number>>;
  /**
   * Optional: the shards assigned to this replica and about to be held (replays the latest).
   * Their objects are cached from then on, so a shard is owned as soon as its Lease is taken
   * (`sharding()` has it). Without it, the cache follows `held$` alone. With it, the first list
   * waits for its first emission (or a shard held, whichever comes first): a list before the
   * assignment is known would keep nothing.
   */
  readonly assigned$?: Observable<ReadonlySet<number>>;
  /** Whether this replica holds the key's shard now. */
  owns(key: string): boolean;
  /**
   * Runs `work` only while the key's shard is held (see `sharding().gate`), giving it a signal aborted when the work is
   * cancelled (optional: a handle without one calls `work()`).
   */
  gate<R>(key: string, work: (signal?: AbortSignal) => ObservableInput<R>): Observable<R>;
}

/** An informer that caches only the objects of the shards its replica holds. */
export interface ShardedInformer<T> extends Informer<T> {
  /**
   * The shards that are held **and** whose objects are in the cache: the ones to reconcile.
   * A shard joins once the list that brought its objects in has been cached, and leaves at
   * once when its Lease goes (replays the latest; starts empty).
   */
  readonly owned$: Observable<ReadonlySet<number>>;
  /**
   * The shards whose objects are in the cache, held or only assigned (a superset of `owned$`): a shard
   * joins once a list that kept it has been cached, and leaves when it is neither held nor assigned
   * (replays the latest; starts empty).
   */
  readonly cached$: Observable<ReadonlySet<number>>;
  /** Each shard as it joins `owned$`: its objects are cached now (re-enqueue its keys then). */
  readonly acquired$: Observable<number>;
  /** Whether `key` may be reconciled now: its shard is held and its objects are cached. */
  owns(key: string): boolean;
  /**
   * `shards.gate`, and only for a key of a shard whose objects are cached (else completes at once). `work` is given the
   * handle's signal: `sharding()`'s is aborted when the work is cancelled (a lost lead, a handover past
   * `handoverDrainMs`), which a promise needs, as it runs on when unsubscribed from.
   */
  gate<R>(key: string, work: (signal?: AbortSignal) => ObservableInput<R>): Observable<R>;
}

/**
 * An informer over the objects whose key falls in a shard this replica holds.
 *
 * - **Dropped on arrival.** An object of another shard is dropped as soon as its key is
 *   read: with lazy decoding (on by default here) only its metadata is parsed, the rest is
 *   scanned for structure; nothing of it is validated, cached or delivered. A dropped watch
 *   event still moves the resourceVersion on (it becomes a bookmark). With `http.encoding: 'auto'` or
 *   `'protobuf'`, the kinds of core/v1, apps/v1 and coordination.k8s.io/v1 are read in protobuf: a dropped object costs its name, namespace and
 *   resourceVersion, everything else skipped by length; a kept one is checked whole and decoded lazily.
 * - **A shard arrives:** the informer lists again, keeping the new shard too; once that list
 *   is cached, the shard joins `owned$`, `owns` and `gate` say yes for its keys, and
 *   `acquired$` emits it. A controller never reconciles a key from a cold cache. With a handle
 *   that has `assigned$` (`sharding()` has), the list starts when the shard is *assigned*
 *   (before its Lease is taken), so the shard is owned as soon as it is held. Shards that join
 *   while a list runs start it again: one list for all of them. The objects of the shards
 *   already cached come back unchanged from such a list, and are no events.
 * - **A shard leaves** (neither held nor assigned): it leaves `owned$` at once, then its objects
 *   leave the cache as `deleted` events with `shardMoved: true` (not a deletion on the server:
 *   `controller()` ignores them). A shard whose Lease is lost but that is still assigned stops
 *   being owned and stays cached.
 *
 * Keys are `namespace/name` (the store's and the controller's keys, so `owns(key)` of a
 * reconcile and the cache agree); `uid`s would spread as well but mean nothing to a work queue.
 *
 * ```
 * assigned$: a----b---------------c-------   a {0}  b {0,1}  c {0}
 * held$:     a--------------b--------c----   a {0}  b {0,1}  c {0}
 * list:      L-(r)L-(r)-------------------   L: a list request, (r): it is cached
 * owned$:    e-x------------y--------x----   e {}  x {0}  y {0,1}: as soon as shard 1's Lease is taken
 * acquired$: --0------------1-------------
 * events$:   --+----(++)-------------(--)-   +: added (no event for shard 0's objects, unchanged); -: deleted, shardMoved
 * ```
 *
 * ## Example
 * ```ts
 * const shards = sharding(httpLeaseClients(kc, { namespace: 'ops' }), { name: 'pods', shards: 8, identity });
 * const pods = shardedInformer(kc, Pod, shards);
 * const c = controller({ for: pods, keyFilter: pods.owns, reconcile: (key) => pods.gate(key, () => work(key)) });
 * ```
 *
 * @throws TypeError when `resource` has no schema or an option has the wrong type or an unknown name (as `informer()`).
 * @throws InformerError (`Config`) when `options` has an `http.keepObject` (the informer drops other shards' objects
 *   with its own, and would replace it), or `maxNamespaceWatches` with several `namespaces`.
 */
export function shardedInformer<T extends KubeObject>(
  source: KubeConfig | ListWatch,
  resource: Resource<T>,
  shards: ShardSource,
  /** `informer()`'s, but `maxNamespaceWatches`: several `namespaces` are read with one cluster-wide list and watch here. */
  options: Omit<InformerOptions<T>, 'maxNamespaceWatches'> = {},
): ShardedInformer<T> {
  checkResource('shardedInformer', resource);
  checkInformerOptions('shardedInformer', options);
  checkInformerOptionNames('shardedInformer', options);
  checkListWatchSelectors('shardedInformer', source, options);
  if (options.http?.keepObject !== undefined)
    throw new InformerError(
      'Config',
      'shardedInformer drops the objects of shards it does not hold with a keepObject of its own: http.keepObject does not apply',
      { phase: 'config' },
    );
  const view = new ShardView(shards);
  const { namespace, inNamespaces } = shardedNamespaces(resource, options, isListWatch(source));
  const wants = (key: string | undefined): boolean => key === undefined || (inNamespaces(key) && view.wants(key));
  const keepObject: KeepObject = (skeleton) => wants(rawKey(skeleton));
  const listWatch = filtered(
    toListWatch(
      source,
      { resource, namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector },
      { ...options.http, lazyDecode: options.http?.lazyDecode ?? true, keepObject },
      options.random,
    ),
    wants,
  );
  const reflector = reflectorFor(listWatch, resource, options);
  const sourceOf = (cache: () => Store<T>, onListProgress: (progress: ListProgress) => void) =>
    shardedSource(view, shards, wants, cache, () => reflector(cache, onListProgress));
  const base = informerFromSource(resource, sourceOf, options, (state) => markMoves(state, wants));
  const owned$ = keeping(base.store$, view.owned$);
  const ownsKey = (key: string) => view.owns(key) && shards.owns(key);
  return {
    ...base,
    owned$,
    cached$: keeping(base.store$, view.cached$),
    acquired$: arrivals(owned$),
    owns: ownsKey,
    gate: <R>(key: string, work: (signal?: AbortSignal) => ObservableInput<R>): Observable<R> =>
      defer(() => (view.owns(key) ? shards.gate(key, (signal) => work(signal)) : EMPTY)),
  };
}

/**
 * The sharded informer's cache rules as they stand (the state of the running source, see
 * shardCache.ts), for everything outside the source: which keys are kept, which are owned, and
 * `owned$`/`cached$`. Written only by {@link shardedSource}.
 */
class ShardView {
  private state: ShardCacheState;
  private readonly ownedChanges = new Subject<ReadonlySet<number>>();
  private readonly cachedChanges = new Subject<ReadonlySet<number>>();
  readonly owned$: Observable<ReadonlySet<number>> = defer(() => this.ownedChanges.pipe(startWith(this.state.owned))).pipe(
    distinctUntilChanged(sameSet),
  );
  readonly cached$: Observable<ReadonlySet<number>> = defer(() => this.cachedChanges.pipe(startWith(this.state.cached))).pipe(
    distinctUntilChanged(sameSet),
  );

  private readonly shards: ShardSource;

  constructor(shards: ShardSource) {
    this.shards = shards;
    this.state = initialShardCache(shards.assigned$ !== undefined);
  }

  get current(): ShardCacheState {
    return this.state;
  }

  /** Whether the key's shard is kept (held or assigned). */
  wants(key: string): boolean {
    return this.state.wanted.has(this.shards.shardOf(key));
  }

  /** Whether the key's shard is held and its objects cached. */
  owns(key: string): boolean {
    return this.state.owned.has(this.shards.shardOf(key));
  }

  /** A source starts afresh. */
  restart(): void {
    this.state = initialShardCache(this.shards.assigned$ !== undefined);
  }

  /** The source's next state. */
  set(state: ShardCacheState): void {
    this.state = state;
  }

  /** A change of `owned` or `cached` the state already holds, to `owned$` or `cached$`. */
  publish(effect: Extract<ShardCacheEffect, { readonly type: 'owned' | 'cached' }>): void {
    (effect.type === 'owned' ? this.ownedChanges : this.cachedChanges).next(effect.shards);
  }
}

/**
 * The thin shell around {@link shardCacheStep}: feeds it the handle's `held$` and `assigned$`,
 * the end of each list it started, and its own end; carries out its effects (publishes, evicts a
 * shard's keys as `deletedKey` events, (re)starts the list and watch); and hands on the reflector's
 * events with the other shards' objects left out (see {@link keepWanted}), a list it started for
 * joining shards marked as a fill list ({@link FillReplace}).
 */
function shardedSource<T extends KubeObject>(
  view: ShardView,
  shards: ShardSource,
  wants: (key: string | undefined) => boolean,
  cache: () => Store<T>,
  reflector: () => Observable<SourceEvent<T>>,
): Observable<SourceEvent<T>> {
  return new Observable<SourceEvent<T>>((subscriber) => {
    const subscription = new Subscription();
    let running: Subscription | undefined;
    /** The resourceVersion of the last event handed on: a shard's evictions are at it. */
    let lastRV = '';
    view.restart();

    const feed = (input: ShardCacheInput) => {
      const { state, effects } = shardCacheStep(view.current, input);
      view.set(state);
      for (const effect of effects) run(effect);
    };
    const run = (effect: ShardCacheEffect) => {
      switch (effect.type) {
        case 'owned':
        case 'cached':
          return view.publish(effect);
        case 'evict': {
          const keys = [...cache().keys()].filter((key) => effect.shards.has(shards.shardOf(key)));
          for (const key of keys) subscriber.next({ type: 'deletedKey', key, resourceVersion: lastRV });
          return;
        }
        case 'list':
          running?.unsubscribe();
          running = reflector().subscribe(forward(subscriber, (event) => onEvent(event)));
          return;
      }
    };
    const onEvent = (event: SourceEvent<T>) => {
      if (event.type !== 'error' && event.type !== 'resync' && event.type !== 'watch') lastRV = event.resourceVersion;
      const kept = keepWanted(event, wants);
      if (kept.type !== 'replace') return subscriber.next(kept);
      // A list started for shards that joined: the objects of the shards already cached come back unchanged, and are no news.
      const fill: FillReplace<T> = { ...kept, fill: true };
      subscriber.next(isFilling(view.current) ? fill : kept);
      // The pipeline is synchronous: the list is cached now.
      feed({ type: 'listed' });
    };

    if (shards.assigned$) subscription.add(shards.assigned$.subscribe((now) => feed({ type: 'assigned', shards: now })));
    subscription.add(shards.held$.subscribe((now) => feed({ type: 'held', shards: now })));
    feed({ type: 'ready' });
    subscription.add(() => {
      running?.unsubscribe();
      running = undefined;
      feed({ type: 'stop' });
    });
    return subscription;
  });
}

/**
 * A reflector event with the objects of shards (and namespaces) not kept left out: a list's
 * items are filtered, a change to a key not kept becomes a bookmark at its resourceVersion (a
 * shard that left while the event was on its way: its objects stay out).
 */
function keepWanted<T extends KubeObject>(event: SourceEvent<T>, wants: (key: string | undefined) => boolean): SourceEvent<T> {
  switch (event.type) {
    case 'replace': {
      const items = event.items.filter((object) => wants(rawKey(object)));
      const rejectedKeys = event.rejectedKeys?.filter((key) => wants(key));
      const listed = { type: 'replace' as const, items, resourceVersion: event.resourceVersion };
      return rejectedKeys && rejectedKeys.length > 0 ? { ...listed, rejectedKeys } : listed;
    }
    case 'added':
    case 'modified':
    case 'deleted':
      return wants(rawKey(event.object)) ? event : { type: 'bookmark', resourceVersion: event.resourceVersion };
    case 'deletedKey':
      return wants(event.key) ? event : { type: 'bookmark', resourceVersion: event.resourceVersion };
    default:
      return event;
  }
}

/**
 * A deletion of a key whose shard is not kept is a shard move: a server's deletion of such a key
 * never reaches the cache (the source drops it), so only an eviction takes one out.
 */
function markMoves<T extends KubeObject>(state: InformerState<T>, wants: (key: string | undefined) => boolean): InformerState<T> {
  const moved = (event: InformerEvent<T>) => event.type === 'deleted' && !wants(rawKey(event.object));
  if (!state.events.some(moved)) return state;
  const events = state.events.map((event): InformerEvent<T> =>
    event.type === 'deleted' && moved(event) ? { ...event, shardMoved: true } : event,
  );
  return { ...state, events };
}

/** Each shard as it joins `owned$` (not those it starts with). */
function arrivals(owned$: Observable<ReadonlySet<number>>): Observable<number> {
  return new Observable<number>((subscriber) => {
    let before: ReadonlySet<number> | undefined;
    return owned$
      .pipe(
        map((now) => {
          const arrived = before === undefined ? [] : [...now].filter((shard) => !before!.has(shard));
          before = now;
          return arrived;
        }),
      )
      .subscribe((arrived) => arrived.forEach((shard) => subscriber.next(shard)));
  });
}

/**
 * Where a sharded informer reads: `namespace`, or the one namespace of `namespaces`; with several
 * `namespaces`, the whole cluster (one list and watch) with the other namespaces' keys dropped on
 * arrival like the other shards'. `maxNamespaceWatches` (one watch per namespace) is an error here. A ListWatch
 * source (`fromListWatch`) is read whole: its one namespace is then kept on the client too, as `informer()` does.
 */
function shardedNamespaces(
  resource: Pick<Resource<KubeObject>, 'namespaced'>,
  options: Pick<InformerOptions<KubeObject>, 'namespace' | 'namespaces' | 'maxNamespaceWatches'>,
  fromListWatch = false,
): { readonly namespace: string | undefined; readonly inNamespaces: (key: string) => boolean } {
  const only = (namespace: string | undefined) =>
    fromListWatch && resource.namespaced && namespace ? (key: string) => namespaceOfKey(key) === namespace : () => true;
  if (options.namespaces === undefined || !resource.namespaced)
    return { namespace: options.namespace, inNamespaces: only(options.namespace) };
  if (options.maxNamespaceWatches !== undefined)
    throw new InformerError(
      'Config',
      `shardedInformer reads several namespaces with one cluster-wide list and watch: maxNamespaceWatches (${options.maxNamespaceWatches}) does not apply`,
      { phase: 'config' },
    );
  const namespaces = new Set(options.namespaces);
  if (namespaces.size === 1) return { namespace: [...namespaces][0], inNamespaces: only([...namespaces][0]) };
  return { namespace: undefined, inNamespaces: (key) => namespaces.has(namespaceOfKey(key)) };
}
