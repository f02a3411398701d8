import { EMPTY, Observable, Subject, Subscription, defer, distinctUntilChanged, map, startWith, type ObservableInput } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import type { KubeObject } from '../0-model/objects.ts';
import type { Resource } from '../0-model/resources.ts';
import { httpListWatch } from '../1-transport/httpTransport.ts';
import { isSkipped, type KeepObject } from '../1-transport/lazyJson.ts';
import type { ListWatch, WatchFrame } from '../1-transport/listWatch.ts';
import { rawKey, rawResourceVersion } from '../0-model/keys.ts';
import type { ListProgress, SourceEvent } from '../2-source/sourceEvent.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';
import type { Store } from '../4-store/store.ts';
import { informerFromSource, reflectorFor, type Informer, type InformerOptions } from './informer.ts';
import { keeping, sameSet } from '../util/keeping.ts';
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
  /** Runs `work` only while the key's shard is held (see `sharding().gate`). */
  gate<R>(key: string, work: () => ObservableInput<R>): Observable<R>;
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
  /** `shards.gate`, and only for a key of a shard whose objects are cached (else completes at once). */
  gate<R>(key: string, work: () => ObservableInput<R>): Observable<R>;
}

/**
 * An informer over the objects whose key falls in a shard this replica holds.
 *
 * - **Dropped on arrival.** An object of another shard is dropped as soon as its key is
 *   read: with lazy decoding (on by default here) only its metadata is parsed, the rest is
 *   scanned for structure; nothing of it is validated, cached or delivered. A dropped watch
 *   event still moves the resourceVersion on (it becomes a bookmark).
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
 */
export function shardedInformer<T extends KubeObject>(
  source: KubeConfig | ListWatch,
  resource: Resource<T>,
  shards: ShardSource,
  options: InformerOptions<T> = {},
): ShardedInformer<T> {
  /** The shards whose objects are kept: those held and those assigned (while running). */
  let wanted: ReadonlySet<number> = new Set();
  /** The held shards whose objects are in the cache. */
  let owned: ReadonlySet<number> = new Set();
  const ownedChanges = new Subject<ReadonlySet<number>>();
  /** The shards whose objects are in the cache (held or assigned). */
  let cached: ReadonlySet<number> = new Set();
  const cachedChanges = new Subject<ReadonlySet<number>>();
  const setCached = (next: ReadonlySet<number>) => {
    if (sameSet(next, cached)) return;
    cached = next;
    cachedChanges.next(next);
  };
  const setOwned = (next: ReadonlySet<number>) => {
    owned = next;
    ownedChanges.next(next);
  };

  const wants = (key: string | undefined): boolean => key === undefined || wanted.has(shards.shardOf(key));
  const keepObject: KeepObject = (skeleton) => wants(rawKey(skeleton));
  const listWatch = filtered(
    isListWatch(source)
      ? source
      : httpListWatch(
          source,
          { resource, namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector },
          { ...options.http, lazyDecode: options.http?.lazyDecode ?? true, keepObject },
        ),
    wants,
  );
  const reflector = reflectorFor(listWatch, resource, options);

  /** Set while a list started for shards that joined is handed on: its unchanged objects are no events. */
  let quietResyncs = false;

  const sourceOf = (cache: () => Store<T>, onListProgress: (progress: ListProgress) => void) =>
    new Observable<SourceEvent<T>>((subscriber) => {
      const subscription = new Subscription();
      let running: Subscription | undefined;
      let lastRV = '';
      let held: ReadonlySet<number> = new Set();
      let assigned: ReadonlySet<number> = new Set();
      /** The shards whose objects are in the cache and kept up to date by the watch. */
      let covered = new Set<number>();
      /** The shards the running list was started for, until its objects are cached. */
      let listing: Set<number> | undefined;
      let subscribed = false;
      /** Whether the first list may start: the assignment is known, or a shard is held (or there is no `assigned$`). */
      let known = shards.assigned$ === undefined;

      const updateOwned = () => {
        setCached(new Set(covered));
        const next = new Set([...held].filter((shard) => covered.has(shard)));
        if (!sameSet(next, owned)) setOwned(next);
      };

      const start = () => {
        running?.unsubscribe();
        listing = new Set(wanted);
        running = reflector(cache, onListProgress).subscribe(
          forward(subscriber, (event) => {
            if (event.type === 'replace') {
              const items = event.items.filter((object) => wants(rawKey(object)));
              const rejectedKeys = event.rejectedKeys?.filter((key) => wants(key));
              lastRV = event.resourceVersion;
              const listed = { type: 'replace' as const, items, resourceVersion: lastRV };
              // A list started for shards that joined: the objects of the shards already cached come
              // back unchanged, and are no news (client-go hands such Replaced deltas only to handlers
              // due for a resync).
              quietResyncs = listing !== undefined;
              try {
                subscriber.next(rejectedKeys && rejectedKeys.length > 0 ? { ...listed, rejectedKeys } : listed);
              } finally {
                quietResyncs = false;
              }
              // The pipeline is synchronous: the list is cached now.
              if (listing !== undefined) {
                covered = listing;
                listing = undefined;
                updateOwned();
              }
              return;
            }
            if (event.type === 'added' || event.type === 'modified' || event.type === 'deleted') {
              lastRV = event.resourceVersion;
              // A shard that left while the event was on its way: its objects stay out.
              if (!wants(rawKey(event.object))) return subscriber.next({ type: 'bookmark', resourceVersion: event.resourceVersion });
            } else if (event.type === 'deletedKey') {
              lastRV = event.resourceVersion;
              if (!wants(event.key)) return subscriber.next({ type: 'bookmark', resourceVersion: event.resourceVersion });
            } else if (event.type === 'bookmark') lastRV = event.resourceVersion;
            subscriber.next(event);
          }),
        );
      };

      /** The cache keeps the shards held and those assigned (about to be held): see the docs' "A shard arrives". */
      const update = () => {
        const before = wanted;
        wanted = new Set([...held, ...assigned]);
        const left = [...before].filter((shard) => !wanted.has(shard));
        const joined = [...wanted].some((shard) => !before.has(shard));
        // A shard that leaves and comes back while a list runs is not covered by that list.
        for (const shard of left) {
          covered.delete(shard);
          listing?.delete(shard);
        }
        // Not ours to reconcile from now on (a Lease lost, or the shard gone); then out of the cache, as shard moves.
        updateOwned();
        if (left.length > 0) {
          const gone = new Set(left);
          const keys = [...cache().keys()].filter((key) => gone.has(shards.shardOf(key)));
          for (const key of keys) subscriber.next({ type: 'deletedKey', key, resourceVersion: lastRV });
        }
        if (held.size > 0) known = true;
        if (!subscribed || !known) return;
        // One list for every shard that joined: a running list (its pages read so far dropped the new
        // shards' objects) is given up and started again with them.
        if (running === undefined || joined) start();
      };

      if (shards.assigned$)
        subscription.add(
          shards.assigned$.subscribe((now) => {
            assigned = new Set(now);
            known = true;
            update();
          }),
        );
      subscription.add(
        shards.held$.subscribe((now) => {
          held = new Set(now);
          update();
        }),
      );
      subscribed = true;
      if (running === undefined && known) start();
      subscription.add(() => {
        running?.unsubscribe();
        running = undefined;
        wanted = new Set();
        if (owned.size > 0) setOwned(new Set());
        setCached(new Set());
      });
      return subscription;
    });

  /**
   * A deletion of a key whose shard is not kept is a shard move: a server's deletion of such a
   * key never reaches the cache (the source drops it), so only a release takes one out. And a
   * list for shards that joined delivers nothing for the objects it found unchanged.
   */
  const markMoves = (step: InformerState<T>): InformerState<T> => {
    const quiet =
      quietResyncs && step.step === 'replace' ? step.events.filter((event) => !(event.type === 'updated' && event.resync)) : undefined;
    const state = quiet === undefined || quiet.length === step.events.length ? step : { ...step, events: quiet };
    const moved = (event: InformerEvent<T>) => event.type === 'deleted' && !wants(rawKey(event.object));
    if (!state.events.some(moved)) return state;
    const events = state.events.map((event): InformerEvent<T> =>
      event.type === 'deleted' && moved(event) ? { ...event, shardMoved: true } : event,
    );
    return { ...state, events };
  };

  const base = informerFromSource(resource, sourceOf, options, markMoves);
  const owned$ = keeping(base.store$, defer(() => ownedChanges.pipe(startWith(owned))).pipe(distinctUntilChanged(sameSet)));
  const cached$ = keeping(base.store$, defer(() => cachedChanges.pipe(startWith(cached))).pipe(distinctUntilChanged(sameSet)));
  const acquired$ = new Observable<number>((subscriber) => {
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
  const ownsKey = (key: string) => owned.has(shards.shardOf(key)) && shards.owns(key);
  return {
    ...base,
    owned$,
    cached$,
    acquired$,
    owns: ownsKey,
    gate: <R>(key: string, work: () => ObservableInput<R>): Observable<R> =>
      defer(() => (owned.has(shards.shardOf(key)) ? shards.gate(key, work) : EMPTY)),
  };
}

function isListWatch(value: KubeConfig | ListWatch): value is ListWatch {
  return typeof (value as Partial<ListWatch>).list === 'function' && typeof (value as Partial<ListWatch>).watch === 'function';
}

const CHANGES = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/**
 * `listWatch` without the objects whose key `wants` rejects: list items are left out, watch
 * events become bookmarks at their resourceVersion (so a watch of only dropped objects still
 * moves on). Skeletons of objects the transport did not decode are dropped the same way.
 */
export function filtered(listWatch: ListWatch, wants: (key: string | undefined) => boolean): ListWatch {
  const drop = (object: unknown) => isSkipped(object) || !wants(rawKey(object));
  return {
    list: (options) =>
      listWatch.list(options).pipe(
        map((page) => {
          const items = page.items.filter((item) => !drop(item));
          return items.length === page.items.length ? page : { ...page, items };
        }),
      ),
    watch: (options) =>
      listWatch.watch(options).pipe(
        map((frame): WatchFrame => {
          if (frame instanceof InformerError || !CHANGES.has(frame.type) || !drop(frame.object)) return frame;
          const resourceVersion = rawResourceVersion(frame.object);
          return { type: 'BOOKMARK', object: { metadata: resourceVersion === undefined ? {} : { resourceVersion } } };
        }),
      ),
  };
}
