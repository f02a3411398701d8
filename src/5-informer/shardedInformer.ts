import { EMPTY, Observable, Subject, Subscription, defer, distinctUntilChanged, map, startWith, type ObservableInput } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import type { KubeObject } from '../0-model/objects.ts';
import type { Resource } from '../0-model/resources.ts';
import { httpListWatch } from '../1-transport/httpTransport.ts';
import { isSkipped, type KeepObject } from '../1-transport/lazyJson.ts';
import type { ListWatch, WatchFrame } from '../1-transport/listWatch.ts';
import { rawKey, rawResourceVersion } from '../2-source/decode.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';
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
 *   `acquired$` emits it. A controller never reconciles a key from a cold cache.
 * - **A shard leaves:** it leaves `owned$` at once, then its objects leave the cache as
 *   `deleted` events with `shardMoved: true` (not a deletion on the server: `controller()`
 *   ignores them).
 *
 * Keys are `namespace/name` (the store's and the controller's keys, so `owns(key)` of a
 * reconcile and the cache agree); `uid`s would spread as well but mean nothing to a work queue.
 *
 * ```
 * held$:     a---------b------------c        a {}  b {0,1}  c {0}
 * list:      L--(r)----L----(r)                L: a list request, (r): it is cached
 * owned$:    a--------------x-------c        x {0,1}: only once shards 0 and 1 are cached
 * acquired$: ---------------(01)
 * events$:   ---------------(++)----(--)     +: added (shards 0, 1), -: deleted, shardMoved (shard 1)
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
  /** The shards held, as last heard from `shards.held$` (while running). */
  let wanted: ReadonlySet<number> = new Set();
  /** The held shards whose objects are in the cache. */
  let owned: ReadonlySet<number> = new Set();
  const ownedChanges = new Subject<ReadonlySet<number>>();
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

  const sourceOf = (cache: () => Store<T>) =>
    new Observable<SourceEvent<T>>((subscriber) => {
      const subscription = new Subscription();
      let running: Subscription | undefined;
      let lastRV = '';
      /** The shards the running list was started for, until its objects are cached. */
      let listing: Set<number> | undefined;
      /** Shards arrived while a list was running: listed again once it is cached. */
      let arrivedMeanwhile = false;

      const start = () => {
        running?.unsubscribe();
        listing = new Set(wanted);
        running = reflector(cache).subscribe(
          forward(subscriber, (event) => {
            if (event.type === 'replace') {
              const items = event.items.filter((object) => wants(keyOf(object)));
              const rejectedKeys = event.rejectedKeys?.filter((key) => wants(key));
              lastRV = event.resourceVersion;
              const listed = { type: 'replace' as const, items, resourceVersion: lastRV };
              subscriber.next(rejectedKeys && rejectedKeys.length > 0 ? { ...listed, rejectedKeys } : listed);
              // The pipeline is synchronous: the list is cached now.
              if (listing !== undefined) {
                const next = new Set(owned);
                for (const shard of listing) if (wanted.has(shard)) next.add(shard);
                listing = undefined;
                if (next.size !== owned.size) setOwned(next);
              }
              if (arrivedMeanwhile) {
                arrivedMeanwhile = false;
                start();
              }
              return;
            }
            if (event.type === 'added' || event.type === 'modified' || event.type === 'deleted') {
              lastRV = event.resourceVersion;
              // A shard that left while the event was on its way: its objects stay out.
              if (!wants(keyOf(event.object))) return subscriber.next({ type: 'bookmark', resourceVersion: event.resourceVersion });
            } else if (event.type === 'deletedKey') {
              lastRV = event.resourceVersion;
              if (!wants(event.key)) return subscriber.next({ type: 'bookmark', resourceVersion: event.resourceVersion });
            } else if (event.type === 'bookmark') lastRV = event.resourceVersion;
            subscriber.next(event);
          }),
        );
      };

      subscription.add(
        shards.held$.subscribe((held) => {
          const before = wanted;
          wanted = new Set(held);
          const left = [...before].filter((shard) => !held.has(shard));
          const arrived = [...held].some((shard) => !before.has(shard));
          if (left.length > 0) {
            // A shard that leaves and comes back while a list runs is not covered by that list.
            for (const shard of left) listing?.delete(shard);
            // Not ours to reconcile from now on; then out of the cache, as shard moves.
            const next = new Set([...owned].filter((shard) => held.has(shard)));
            if (next.size !== owned.size) setOwned(next);
            const gone = new Set(left);
            const keys = [...cache().keys()].filter((key) => gone.has(shards.shardOf(key)));
            for (const key of keys) subscriber.next({ type: 'deletedKey', key, resourceVersion: lastRV });
          }
          if (running === undefined) start();
          // A running list is let finish (its shards become owned), then the new ones are listed:
          // restarting it at every arrival would starve it while shards trickle in.
          else if (arrived) {
            if (listing === undefined) start();
            else arrivedMeanwhile = true;
          }
        }),
      );
      subscription.add(() => {
        running?.unsubscribe();
        running = undefined;
        wanted = new Set();
        if (owned.size > 0) setOwned(new Set());
      });
      return subscription;
    });

  /**
   * A deletion of a key whose shard is not held is a shard move: a server's deletion of such a
   * key never reaches the cache (the source drops it), so only a release takes one out.
   */
  const markMoves = (state: InformerState<T>): InformerState<T> => {
    const moved = (event: InformerEvent<T>) => event.type === 'deleted' && !wants(keyOf(event.object));
    if (!state.events.some(moved)) return state;
    const events = state.events.map((event): InformerEvent<T> =>
      event.type === 'deleted' && moved(event) ? { ...event, shardMoved: true } : event,
    );
    return { ...state, events };
  };

  const base = informerFromSource(resource, sourceOf, options, markMoves);
  const owned$ = keeping(base.store$, defer(() => ownedChanges.pipe(startWith(owned))).pipe(distinctUntilChanged(sameSet)));
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
    acquired$,
    owns: ownsKey,
    gate: <R>(key: string, work: () => ObservableInput<R>): Observable<R> =>
      defer(() => (owned.has(shards.shardOf(key)) ? shards.gate(key, work) : EMPTY)),
  };
}

function isListWatch(value: KubeConfig | ListWatch): value is ListWatch {
  return typeof (value as Partial<ListWatch>).list === 'function' && typeof (value as Partial<ListWatch>).watch === 'function';
}

function keyOf(object: unknown): string | undefined {
  return rawKey(object);
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
