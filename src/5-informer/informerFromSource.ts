/**
 * What every informer of this library is made of, below the informers themselves (informer.ts,
 * namespacesInformer.ts, shardedInformer.ts all import it, and it imports none of them): the options and the
 * `Informer` interface, `toListWatch` (a KubeConfig or a ListWatch → the ListWatch), `reflectorFor` (the
 * list/watch source over it) and `informerFromSource` (everything from `resync` on).
 */
import { Observable, Subject, defer, distinctUntilChanged, map, merge, shareReplay } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import type { MonoTypeOperatorFunction, Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { InformerError } from '../0-model/errors.ts';
import type { KubeObject } from '../0-model/objects.ts';
import { typeMetaOf } from '../0-model/metadata.ts';
import { resourceName, type Resource } from '../0-model/resources.ts';
import { httpListWatch, type HttpTransportOptions } from '../1-transport/httpTransport.ts';
import { isListWatch, type ListWatch } from '../1-transport/listWatch.ts';
import type { ListWatchTarget } from '../1-transport/paths.ts';
import { rawKey, rawResourceVersion } from '../0-model/keys.ts';
import { decoder, type Decoder } from '../2-source/decode.ts';
import { listAndWatch, type ListAndWatchOptions } from '../2-source/listAndWatch.ts';
import type { ListProgress, SourceEvent } from '../2-source/sourceEvent.ts';
import { deltaFifo } from '../3-deltas/deltaFifo.ts';
import { realFifo } from '../3-deltas/realFifo.ts';
import type { FifoOutput } from '../3-deltas/deltas.ts';
import { resync } from '../3-deltas/resync.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';
import { initialState, reduceDeltas, type InformerState } from '../4-store/reduceDeltas.ts';
import { Store, type Indexers } from '../4-store/store.ts';
import { HandlerMetricsRecorder, checkHandler, measuredHandleEvents, type EventHandler, type HandlerMetrics } from './handleEvents.ts';
import { informerHealth, type InformerHealth } from './health.ts';
import { sharedEvents } from './sharedEvents.ts';
import { forward } from '../util/forward.ts';
import { observedErrors, unobservedReporter } from './unobservedErrors.ts';
import { StepCounter, type StepCounts } from './stepCounts.ts';

/**
 * The reflector's options an informer passes through unchanged (documented on {@link ListAndWatchOptions}). Not
 * checkReflectorOptions.ts's `NUMERIC_OPTIONS` (the options checked as numbers, an informer's own among them).
 */
const REFLECTOR_OPTIONS = [
  'pageSize',
  'watchList',
  'minWatchTimeoutSeconds',
  'idleTimeoutMs',
  'busyIdleTimeoutMs',
  'stallMarginMs',
  'bookmarkTimeoutMs',
  'maxListPages',
  'maxListObjects',
  'maxListDurationMs',
  'backoff',
  'scheduler',
  'random',
] as const satisfies readonly (keyof ListAndWatchOptions<unknown>)[];

/** What to watch and how; the reflector's options (paging, watch timeouts, backoff, timing) are {@link ListAndWatchOptions}'. */
export interface InformerOptions<T> extends Pick<ListAndWatchOptions<T>, (typeof REFLECTOR_OPTIONS)[number]> {
  /** One namespace; omit for all namespaces. */
  readonly namespace?: string;
  /**
   * Several namespaces, as one informer (replaces `namespace`; ignored for cluster-scoped resources).
   * Up to `maxNamespaceWatches` of them: one list and watch each; more: one cluster-wide list and watch
   * whose other namespaces' objects are dropped after their metadata is read, or one each again when
   * the cluster-wide list is Forbidden (403). See docs/api.md, "Several namespaces".
   */
  readonly namespaces?: readonly string[];
  /** With `namespaces`: the most namespaces watched one by one. Default 16 (docs/transport.md, "Many namespaces"). */
  readonly maxNamespaceWatches?: number;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Re-deliver every cached object as an `updated` event with `resync: true` this often (ms). 0 (default) disables. */
  readonly resyncPeriod?: number;
  /** Secondary indexes, besides `namespace`. */
  readonly indexers?: Indexers<T>;
  /** Runs on every object after validation, before caching (e.g. `stripManagedFields`). */
  readonly transform?: (object: T) => T;
  /** HTTP tuning (ignored when a ListWatch is given instead of a KubeConfig). */
  readonly http?: HttpTransportOptions;
  /**
   * How the server's events become the informer's: `'delta-fifo'` (default), client-go's DeltaFIFO
   * (per-key queue: a key's deltas that pile up are handed on together); `'in-order'`, client-go's
   * RealFIFO (1.33+ `InOrderInformers`): every event on its own, in the order the server sent it, a
   * relist as one batch, tombstones first. See docs/semantics.md, "Delivery modes".
   */
  readonly delivery?: 'delta-fifo' | 'in-order';
  /**
   * While nothing subscribes to `errors$`, report its faults with `process.emitWarning` (type `RxInformerWarning`,
   * the reason as `code`; per reason the first, then at most one each 5 minutes). Default true. See docs/api.md, "errors$".
   */
  readonly reportUnobservedErrors?: boolean;
}

/**
 * A shared, indexed, self-healing cache of one kind of object, as Observables.
 * Nothing happens until something subscribes; every subscriber shares one
 * list/watch connection, and the last unsubscribe aborts it and frees every timer.
 */
export interface Informer<T> {
  readonly resource: Resource<T & KubeObject>;
  /**
   * added / updated / deleted, in order. A subscriber that joins late first
   * receives the cache as it stands as `added` events with
   * `isInInitialList: true`, then live events: no gap, no duplicate. The objects are the cache's own, shared with every
   * subscriber and snapshot, not copies: never mutate one (copy it first), as client-go's thread_safe_store.go asks.
   */
  readonly events$: Observable<InformerEvent<T>>;
  /**
   * The cache: an immutable snapshot after every change (replays the latest). Immutable as a structure: the objects
   * in it are shared, not copied, so mutating a listed one changes it for every subscriber and every snapshot holding
   * it, and leaves its index entries stale (they were computed from it as it was). Copy before changing.
   */
  readonly store$: Observable<Store<T>>;
  /** false until the initial list has been delivered, then true (replays the latest). */
  readonly synced$: Observable<boolean>;
  /** Every fault met, as typed values. Faults never end the informer. */
  readonly errors$: Observable<InformerError>;
  /**
   * While a paged list runs (the first or a relist), after every page but the last: the pages and
   * objects received so far. Hot: it emits only while something else keeps the informer running.
   */
  readonly listProgress$: Observable<ListProgress>;
  /**
   * Store, events and errors of every step together. The first state is a replay of the latest, without its events
   * and errors (docs/api.md, `state$`, says what follows).
   */
  readonly state$: Observable<InformerState<T>>;
  /**
   * Watching or not and since when, last event and bookmark and their age, failures in a
   * row, synced: after every step and every 10 s (replays the latest). Starts the informer.
   */
  readonly health$: Observable<InformerHealth>;
  /**
   * Subscribes a handler, isolated and buffered: it runs one event at a time;
   * if it throws (or its promise rejects) the error goes to `errors$` as a
   * `HandlerError` and nothing else is affected; if it is slow, its backlog
   * coalesces per key (at most two events per distinct key). Unsubscribe
   * the returned Subscription to remove it. It is `events$.pipe(handleEvents(handler))` (same order, coalescing,
   * resyncs), its faults sent to `errors$` and its work counted in `handlerMetrics()`; `handleEvents` hands them to
   * its own subscriber instead, for a stream filtered first.
   */
  on(handler: EventHandler<T>): Subscription;
  /**
   * The `on()` handlers' backlog and how long they take, now (read at scrape time by `serve()`'s
   * `/metrics`). Every informer has it (every one is made by `informerFromSource`; the sharded, many-namespace
   * and dynamic ones spread it).
   */
  readonly handlerMetrics: () => HandlerMetrics;
}

const shared = { bufferSize: 1, refCount: true } as const;

/**
 * The ListWatch an informer reads: the one given, or HTTP through a KubeConfig (with the transport's options, and the
 * informer's `random` where they name none).
 */
export function toListWatch(
  source: KubeConfig | ListWatch,
  target: ListWatchTarget,
  http?: HttpTransportOptions,
  random?: () => number,
): ListWatch {
  return isListWatch(source) ? source : httpListWatch(source, target, withRandom(http, random));
}

/** The transport's options with the informer's `random` where they name none (it draws the words a list page's charge reads). */
export function withRandom(http: HttpTransportOptions | undefined, random: (() => number) | undefined): HttpTransportOptions | undefined {
  return random === undefined || http?.random !== undefined ? http : { ...http, random };
}

/** The list/watch source of an informer over `listWatch`, given read access to its cache. */
export function reflectorFor<T extends KubeObject>(
  listWatch: ListWatch,
  resource: Resource<T>,
  options: InformerOptions<T>,
): (cache: () => Store<T>, onListProgress?: (progress: ListProgress) => void) => Observable<SourceEvent<T>> {
  const decode = decoder(resource.schema, options.transform, typeMetaOf(resource));
  return (cache: () => Store<T>, onListProgress?: (progress: ListProgress) => void) =>
    listAndWatch<T>(listWatch, { ...reflectorOptions(options), decode: reuseUnchanged(decode, cache), onListProgress });
}

/** The reflector's options out of an informer's (only those: an informer's others mean nothing to it). */
function reflectorOptions<T>(options: InformerOptions<T>): Pick<ListAndWatchOptions<T>, (typeof REFLECTOR_OPTIONS)[number]> {
  const picked: Partial<Record<(typeof REFLECTOR_OPTIONS)[number], unknown>> = {};
  for (const key of REFLECTOR_OPTIONS) picked[key] = options[key];
  return picked as Pick<ListAndWatchOptions<T>, (typeof REFLECTOR_OPTIONS)[number]>;
}

/**
 * During a relist (a list's pages, or a streaming list's initial events: the decoder's `whole`), an item whose key and
 * resourceVersion the cache already holds is not decoded again: the cached object stands for it. So a relist keeps
 * one object per version (the new copy is garbage as soon as its page or event is read), and the memory peak of a
 * relist is the cache plus what changed, not two whole caches. Watch events are decoded as they come: each is a
 * change, the lookup would find nothing to reuse.
 */
function reuseUnchanged<T extends KubeObject>(decode: Decoder<T>, cache: () => Store<T>): Decoder<T> {
  const reusing: Decoder<T> = (raw, phase, whole) => {
    if (whole === true) {
      const store = cache();
      // An empty cache (the first list) has nothing to reuse: no key made for each item.
      if (store.size === 0) return decode(raw, phase, whole);
      const key = rawKey(raw);
      const cached = key === undefined ? undefined : store.get(key);
      if (
        cached !== undefined &&
        cached.metadata.resourceVersion !== undefined &&
        cached.metadata.resourceVersion === rawResourceVersion(raw)
      )
        return cached;
    }
    return decode(raw, phase, whole);
  };
  // A transform's renames go with it (the reflector matches rejected objects to the keys the cache holds).
  return decode.renames ? Object.assign(reusing, { renames: decode.renames }) : reusing;
}

const NO_STEP: readonly never[] = Object.freeze([]);

/** Each informer's last fault of its current run, by its `state$` (see {@link lastErrorOf}). */
const lastErrors = new WeakMap<Observable<unknown>, () => InformerError | undefined>();

/**
 * The last fault an informer's steps reported since it started running (undefined: none, or not an informer of ours).
 * A timed `waitForCacheSync` names it: the replayed first state has no errors (docs/api.md, `state$`), so a wait that joined an informer
 * refused for minutes (a 401, a 403) said "no error yet" until the next retry, up to the backoff's 30 s later.
 */
export function lastErrorOf(state$: Observable<unknown>): InformerError | undefined {
  return lastErrors.get(state$)?.();
}

/** Each informer's step counts, by its `state$` (see {@link stepCountsOf}). */
const stepCounters = new WeakMap<Observable<unknown>, StepCounter>();

/**
 * What an informer's steps have counted since it was made (undefined: not an informer of ours). `informerMetrics$` reads
 * it, so an informer served after it started reports every list and event, and its sync time from its own start.
 */
export function stepCountsOf(state$: Observable<unknown>): StepCounts | undefined {
  return stepCounters.get(state$)?.snapshot();
}

/**
 * `wrapped$` is `inner$` under another Observable (the dynamic factory's `takeUntil`): {@link lastErrorOf} and
 * {@link stepCountsOf} read the inner informer's.
 */
export function sameRunAs(wrapped$: Observable<unknown>, inner$: Observable<unknown>): void {
  const lastError = lastErrors.get(inner$);
  if (lastError) lastErrors.set(wrapped$, lastError);
  const counter = stepCounters.get(inner$);
  if (counter) stepCounters.set(wrapped$, counter);
}

/**
 * Once a state has been delivered to every subscriber, its `events` and `errors` are cleared: what makes the replayed
 * first state (docs/api.md, `state$`) stand for the cache, not for its step, and a relist's events (one per object)
 * are not kept alive until the next step.
 */
function forgetDeliveredSteps<T>(): MonoTypeOperatorFunction<InformerState<T>> {
  return (source) =>
    new Observable<InformerState<T>>((subscriber) =>
      source.subscribe(
        forward(subscriber, (state) => {
          subscriber.next(state);
          if (state.events.length > 0 || state.errors.length > 0) {
            // The one writer of these fields: readonly to every reader, cleared here once all have the state.
            const delivered: { events: readonly unknown[]; errors: readonly unknown[] } = state;
            delivered.events = NO_STEP;
            delivered.errors = NO_STEP;
          }
        }),
      ),
    );
}

/**
 * An informer over any stream of source events (a list/watch source, or, in
 * tests, marbles): everything from `resync` and `deltaFifo` (or `realFifo`, with `delivery: 'in-order'`) on. Each
 * subscription after a full teardown subscribes to `source` afresh. A function
 * is given read access to the cache as it stands (the HTTP informer uses it to
 * reuse unchanged objects during a relist).
 */
export function informerFromSource<T extends KubeObject>(
  resource: Resource<T>,
  source:
    Observable<SourceEvent<T>> | ((cache: () => Store<T>, onListProgress: (progress: ListProgress) => void) => Observable<SourceEvent<T>>),
  options: Pick<InformerOptions<T>, 'indexers' | 'resyncPeriod' | 'scheduler' | 'delivery' | 'reportUnobservedErrors'> = {},
  /** Rewrites each step before it is cached and delivered (the sharded informer marks shard moves with it). */
  afterStep: (state: InformerState<T>) => InformerState<T> = (state) => state,
): Informer<T> {
  const listProgress = new Subject<ListProgress>();
  const scheduler = options.scheduler ?? monotonicScheduler;
  const unobserved = unobservedReporter(
    `informer ${resourceName(resource)}`,
    () => scheduler.now(),
    options.reportUnobservedErrors !== false,
  );
  let lastError: InformerError | undefined;
  const counter = new StepCounter();
  const state$ = defer(() => {
    lastError = undefined;
    counter.start(scheduler.now());
    // deltaFifo's knownObjects is the cache itself, as of the last step (the pipeline is synchronous).
    // The one reference to the latest state: no operator keeps the first one (a `scan` seed, a `startWith`
    // value), which would hold the first snapshot for as long as the informer runs.
    let current = initialState(Store.empty<T>(options.indexers));
    const source$ =
      typeof source === 'function'
        ? source(
            () => current.store,
            (progress) => listProgress.next(progress),
          )
        : source;
    const steps$ = source$.pipe(
      resync<T>(options.resyncPeriod ?? 0, options.scheduler),
      options.delivery === 'in-order'
        ? realFifo<T>({ knownObjects: () => current.store })
        : deltaFifo<T>({ knownObjects: () => current.store }),
      map((output: FifoOutput<T>) => {
        current = afterStep(reduceDeltas(current, output));
        const errors = current.errors;
        for (let i = 0; i < errors.length; i++) unobserved.report(errors[i]!);
        if (errors.length > 0) lastError = errors[errors.length - 1];
        counter.record(current, scheduler);
        return current;
      }),
    );
    return new Observable<InformerState<T>>((subscriber) => {
      subscriber.next(current);
      return subscriber.closed ? undefined : steps$.subscribe(subscriber);
    });
  }).pipe(forgetDeliveredSteps(), shareReplay(shared));
  lastErrors.set(state$, () => lastError);
  stepCounters.set(state$, counter);

  const store$ = state$.pipe(
    map((state) => state.store),
    distinctUntilChanged(),
    shareReplay(shared),
  );
  const synced$ = state$.pipe(
    map((state) => state.synced),
    distinctUntilChanged(),
    shareReplay(shared),
  );

  const events$ = sharedEvents(state$);

  const handlerErrors = new Subject<InformerError>();
  const sourceErrors$ = new Observable<InformerError>((subscriber) => {
    let first = true;
    return state$.subscribe(
      forward(subscriber, (state) => {
        // The replayed state's errors happened before we joined.
        if (first) {
          first = false;
          return;
        }
        for (const error of state.errors) subscriber.next(error);
      }),
    );
  });

  const errors$ = observedErrors(merge(sourceErrors$, handlerErrors), unobserved);
  const handlerMetrics = new HandlerMetricsRecorder(() => scheduler.now());
  const on = (handler: EventHandler<T>, ...rest: readonly unknown[]): Subscription => {
    checkHandler('on()', handler, rest.length);
    return events$.pipe(measuredHandleEvents(handler, handlerMetrics)).subscribe((error) => {
      unobserved.report(error);
      handlerErrors.next(error);
    });
  };

  const health$ = informerHealth(resourceName(resource), state$, { scheduler: options.scheduler }).pipe(shareReplay(shared));
  const listProgress$ = listProgress.asObservable();
  return {
    resource: resource as Resource<T & KubeObject>,
    events$,
    store$,
    synced$,
    errors$,
    listProgress$,
    state$,
    health$,
    on,
    handlerMetrics: () => handlerMetrics.snapshot(),
  };
}
