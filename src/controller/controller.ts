import {
  EMPTY,
  Observable,
  Subject,
  Subscription,
  asyncScheduler,
  catchError,
  defer,
  finalize,
  from,
  last,
  map,
  of,
  race,
  share,
  switchMap,
  take,
  type ObservableInput,
  type SchedulerLike,
} from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import { InformerError, describeThrown } from '../0-model/errors.ts';
import { keyOf, splitKey, type KubeObject } from '../0-model/objects.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';
import type { Store } from '../4-store/store.ts';
import { cacheSynced$ } from '../5-informer/factory.ts';
import type { Informer } from '../5-informer/informer.ts';
import { observedErrors, unobservedReporter } from '../5-informer/unobservedErrors.ts';
import { checkOptionNames } from '../util/optionNames.ts';
import { formatDuration } from '../util/formatDuration.ts';
import type { Predicate } from './predicates/predicate.ts';
import type { RateLimiter } from '../workqueue/rateLimiter.ts';
import { createRateLimitingQueue, type RateLimitingWorkQueue } from '../workqueue/rateLimitingQueue.ts';
import { DEFAULT_PRIORITY, LOW_PRIORITY } from '../workqueue/workQueue.ts';
import { processItems, type Hold, type WorkSource } from '../workqueue/processItems.ts';
import { Holds, heldIteration, isPromiseLike } from '../workqueue/holds.ts';
import { guardWith, guardedRateLimiter, type Guard } from './guard.ts';
import { ownerKeysOf } from './ownerKeys.ts';
import { TerminalError, type ReconcileOutcome, type ReconcileResult } from './reconcile.ts';
import { forward } from '../util/forward.ts';
import { isAsyncIterable, isWork } from '../util/isWork.ts';
import { AbandonedRoomError, ABANDONED_ROOM_REPORT_MS, Room, type HeldRoom, type RoomStall } from './room.ts';

/** What a reconcile is given besides the key. */
export interface ReconcileContext<T> {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** The object as the primary informer's cache has it now; undefined once deleted. */
  readonly object: T | undefined;
  /** The primary informer's cache, as it stands. */
  readonly store: Store<T>;
  /**
   * How many rate-limited requeues this key has had (failures and `requeue()` results) since it was last forgotten
   * (a success, a `requeueAfter`, a terminal error): the rate limiter's `numRequeues`.
   */
  readonly requeues: number;
  /** The queue priority the key was taken at; a failure or `requeueAfter` queues it again at this priority. */
  readonly priority: number;
  /** The cache of any informer this controller watches (`for`, `owns`, `watches`), as it stands. */
  cacheOf<U extends KubeObject>(informer: Informer<U>): Store<U>;
  /**
   * Aborted when this reconcile is abandoned (`outcomes$` unsubscribed, as when leadership is lost) or the controller
   * is stopped: a promise cannot be cancelled, so pass it on (`fetch`, a client call) or check it, to end early. Until
   * a promise settles its key stays in flight: it never runs twice at once, and counts as an active worker.
   */
  readonly signal: AbortSignal;
  /**
   * Holds the key in flight until `value` settles if it is a promise, as a returned promise does, and returns it as
   * it is: for a promise started inside an Observable reconcile (`from(context.hold(api.patch(…)))`, `defer(() =>
   * context.hold(call()))`). Unsubscribing cancels an Observable, not a promise inside it: without this the call
   * would run on while the key starts again beside it (after a leadership flip). Its rejection stays yours to handle.
   */
  hold<V>(value: V): V;
}

/**
 * What a controller reads of an input in `owns` and `watches`: its events, its cache and whether it has synced.
 * Every `Informer<T>` is one, whatever its `T` (a typed custom resource, `metadataOnly`'s objects), and so is any
 * object of this read-only shape (a fake, a wrapper): a controller needs no more of an input.
 */
export interface ControllerInput<T extends KubeObject = KubeObject> {
  readonly events$: Observable<InformerEvent<T>>;
  /** The cache, read in a reconcile through `cacheOf`. */
  readonly store$: Observable<Pick<Store<T>, 'get' | 'has' | 'list' | 'keys' | 'byIndex' | 'indexKeys' | 'indexValues' | 'indexNames'>>;
  readonly synced$: Observable<boolean>;
}

/** An entry of `watches`: an input and the keys of the primary resource each of its objects maps to. */
export interface WatchInput<U extends KubeObject = KubeObject> {
  readonly informer: ControllerInput<U>;
  readonly map: (object: U) => readonly string[];
}

/**
 * A controller's options. `W` is the object type of each `watches` entry, inferred from its informer
 * (leave it out: `ControllerOptions<Pod>` takes entries of any kind whose `map` reads a `KubeObject`).
 */
export interface ControllerOptions<T extends KubeObject, W extends readonly KubeObject[] = readonly KubeObject[]> {
  /** Names the controller in metrics. Default: the primary resource's kind, lower-cased. */
  readonly name?: string;
  /** The primary resource: its events enqueue their own key. */
  readonly for: Informer<T>;
  /**
   * Owned resources: an event enqueues the key of the object's controller owner of the primary kind.
   * Informers of any kind (a typed custom resource, `metadataOnly`).
   */
  readonly owns?: readonly ControllerInput[];
  /**
   * Other inputs: an event enqueues the keys `map` returns. Each entry's `map` is given its own informer's
   * objects (`{ informer: configMaps, map: (cm) => … }`: `cm` is a ConfigMap).
   */
  readonly watches?: { readonly [K in keyof W]: WatchInput<W[K]> };
  /** Filters the primary resource's events (see predicates). Default: all pass. */
  readonly predicate?: Predicate<T>;
  /**
   * Only keys it returns true for are queued, whatever input they come from: for example
   * `shards.owns` (rx-informer/leaderelection), so a replica never queues a key of a shard
   * another replica holds. Default: every key.
   */
  readonly keyFilter?: (key: string) => boolean;
  /**
   * Brings the world in line with the object at `key`. Return (or emit last)
   * a {@link ReconcileResult}; throw or error to retry with backoff; throw a
   * {@link TerminalError} to give up on this version of the key.
   */
  readonly reconcile: (
    key: string,
    context: ReconcileContext<T>,
  ) => ReconcileResult | PromiseLike<ReconcileResult> | ObservableInput<ReconcileResult>;
  /**
   * Queue keys from initial-list events (`isInInitialList`: what the cache held when the
   * controller started) and from resync events (`updated` with `resync`: same resourceVersion)
   * at {@link LOW_PRIORITY}, every other event at the default priority 0, so that after a
   * restart a real change is reconciled before the backlog of unchanged objects (controller-runtime
   * v0.23's `WithLowPriorityWhenUnchanged`). Applies to every input (`for`, `owns`, `watches`);
   * deletions always go in at the default priority. `false`: every key at priority 0, plain FIFO.
   * Default true.
   */
  readonly lowPriorityWhenUnchanged?: boolean;
  /** Keys reconciled at once (never the same key twice at once). Default 1. */
  readonly concurrency?: number;
  /** Default: max of per-key exponential (5 ms … 1000 s) and a 10/s, burst-100 token bucket. */
  readonly rateLimiter?: RateLimiter<string>;
  /** All timing (queue delays, backoff, metrics). Default `monotonicScheduler` (`asyncScheduler`'s timers, a monotonic clock: src/util/monotonicNow.ts). */
  readonly scheduler?: SchedulerLike;
  /**
   * While nothing subscribes to the controller's `errors$`, report its faults with `process.emitWarning` (type
   * `RxInformerWarning`, `code` the reason; per reason the first at once, then at most one each 5 minutes), as an
   * informer does. Default true; `false`: not. Its informers report their own faults by their own option.
   */
  readonly reportUnobservedErrors?: boolean;
}

/** Counters in controller-runtime's terms. */
export interface ControllerMetrics {
  readonly name: string;
  /** controller_runtime_reconcile_total by result label. */
  readonly reconcileTotal: Readonly<Record<'success' | 'error' | 'requeue' | 'requeue_after', number>>;
  /** controller_runtime_reconcile_errors_total (errors and terminal errors). */
  readonly reconcileErrorsTotal: number;
  /** controller_runtime_terminal_reconcile_errors_total. */
  readonly terminalReconcileErrorsTotal: number;
  /** controller_runtime_reconcile_time_seconds (count and sum). */
  readonly reconcileTimeSeconds: { readonly count: number; readonly sumSeconds: number };
  /** controller_runtime_active_workers. */
  readonly activeWorkers: number;
  /** controller_runtime_max_concurrent_reconciles. */
  readonly maxConcurrentReconciles: number;
}

export interface Controller {
  readonly name: string;
  readonly queue: RateLimitingWorkQueue<string>;
  /**
   * Running the controller: subscribing starts it (and the informers it needs),
   * and it emits how each reconcile ended. Reconciles begin only once every
   * input informer has synced. Shared: many subscribers, one controller. Unsubscribing the last
   * subscriber stops the informers it started and leaves no timer armed: keys waiting a `requeueAfter` or
   * their backoff keep their place in the queue and wait again from the next subscription (one already
   * due then is queued at once).
   * Completes after `stop()` once in-flight reconciles are done.
   */
  readonly outcomes$: Observable<ReconcileOutcome>;
  /**
   * Faults in the user's functions that route events to keys (`predicate`, a `watches` map,
   * `keyFilter`), as `HandlerError`s with the key where known; the controller goes on. A
   * predicate that throws lets its key through (one reconcile too many beats one missed);
   * a key filter that throws keeps its key out (a key of another replica's shard must not run).
   * So are faults of a given `rateLimiter` (`when` throwing or giving no finite number, `forget`, `numRequeues`): the key then waits
   * client-go's per-key backoff (5 ms doubling, up to 1000 s), never dropped. A fault around a
   * reconcile, outside the user's function, is an `Unknown` error with the key, retried rate-limited.
   * While nothing subscribes, each is reported with `process.emitWarning` (see
   * {@link ControllerOptions.reportUnobservedErrors}). A reconcile's error is not here: it is an outcome.
   */
  readonly errors$: Observable<InformerError>;
  /**
   * Stops taking events and new work: no queued key starts after it (those still queued are not reconciled; they stay
   * in the shut-down `queue`). Aborts the in-flight reconciles' `signal`, then emits once and completes when they have
   * finished (a drain: their outcomes count; an abandoned reconcile's promise too: see {@link ReconcileContext.signal}).
   * A reconcile that never ends holds it for good: end on `signal` (an Observable too:
   * `takeUntil(fromEvent(signal, 'abort'))`), or bound the wait (`stop().pipe(timeout(…))`).
   */
  stop(): Observable<void>;
  /** The metrics now. */
  metrics(): ControllerMetrics;
  /** The metrics after every reconcile (subscribing runs the controller, like `outcomes$`). */
  readonly metrics$: Observable<ControllerMetrics>;
}

/** A reconcile's result as an Observable; a promise is held (its key in flight) until it settles. */
function toObservable(
  value: ReconcileResult | PromiseLike<ReconcileResult> | ObservableInput<ReconcileResult>,
  hold: Hold,
): Observable<ReconcileResult> {
  if (isPromiseLike(value)) return from(hold(value));
  // An `async function*`'s steps run on promises, held as a returned one is; a generator, an array: synchronous.
  if (isAsyncIterable(value)) return heldIteration(value as AsyncIterable<ReconcileResult>, hold);
  // An array is the results' Observable (its last decides); a generator, a stream: the reconcile's body.
  if (isWork(value) || Array.isArray(value)) return from(value as ObservableInput<ReconcileResult>);
  return of(value as ReconcileResult);
}

/** The counters of {@link ControllerMetrics} that outcomes move (all but the live `activeWorkers`). */
type OutcomeCounts = Omit<ControllerMetrics, 'name' | 'activeWorkers' | 'maxConcurrentReconciles'>;

const NO_OUTCOMES: OutcomeCounts = {
  reconcileTotal: { success: 0, error: 0, requeue: 0, requeue_after: 0 },
  reconcileErrorsTotal: 0,
  terminalReconcileErrorsTotal: 0,
  reconcileTimeSeconds: { count: 0, sumSeconds: 0 },
};

/** The label of controller_runtime_reconcile_total an outcome counts under. */
const RESULT_LABEL: Readonly<Record<ReconcileOutcome['result'], keyof OutcomeCounts['reconcileTotal']>> = {
  success: 'success',
  requeue: 'requeue',
  requeueAfter: 'requeue_after',
  error: 'error',
  terminal: 'error',
};

/** The counters after one more reconcile: pure, so the rules are a table (controller-runtime's labels). */
export function countOutcome(counts: OutcomeCounts, outcome: ReconcileOutcome): OutcomeCounts {
  const label = RESULT_LABEL[outcome.result];
  const failed = outcome.result === 'error' || outcome.result === 'terminal';
  return {
    reconcileTotal: { ...counts.reconcileTotal, [label]: counts.reconcileTotal[label] + 1 },
    reconcileErrorsTotal: counts.reconcileErrorsTotal + (failed ? 1 : 0),
    terminalReconcileErrorsTotal: counts.terminalReconcileErrorsTotal + (outcome.result === 'terminal' ? 1 : 0),
    reconcileTimeSeconds: {
      count: counts.reconcileTimeSeconds.count + 1,
      sumSeconds: counts.reconcileTimeSeconds.sumSeconds + outcome.durationMs / 1000,
    },
  };
}

/** The queue priority an event's keys go in at (see `lowPriorityWhenUnchanged`). */
function priorityOf(lowWhenUnchanged: boolean, event: InformerEvent<unknown>): number {
  return lowWhenUnchanged && event.type !== 'deleted' && (event.isInInitialList || (event.type === 'updated' && event.resync))
    ? LOW_PRIORITY
    : DEFAULT_PRIORITY;
}

/** An object whose shard moved to another replica was not deleted: that replica reconciles it. */
const movedAway = (event: InformerEvent<unknown>): boolean => event.type === 'deleted' && event.shardMoved === true;

/** Subscribes to every input and turns its events into queued keys (`enqueue` applies the key filter). */
function routeEvents<T extends KubeObject, W extends readonly KubeObject[]>(
  options: ControllerOptions<T, W>,
  guarded: Guard,
  enqueue: (keys: Iterable<string>, priority: number) => void,
): Subscription {
  const lowWhenUnchanged = options.lowPriorityWhenUnchanged ?? true;
  const priority = (event: InformerEvent<unknown>) => priorityOf(lowWhenUnchanged, event);
  const { predicate } = options;
  const subscription = new Subscription();
  subscription.add(
    options.for.events$.subscribe((event: InformerEvent<T>) => {
      if (movedAway(event)) return;
      const key = keyOf(event.object);
      if (!predicate || guarded('predicate', key, true, () => predicate(event))) enqueue([key], priority(event));
    }),
  );
  for (const owned of options.owns ?? []) {
    subscription.add(
      owned.events$.subscribe((event) => {
        if (!movedAway(event)) enqueue(ownerKeysOf(event, options.for.resource), priority(event));
      }),
    );
  }
  for (const watch of options.watches ?? []) {
    const mapped = (object: W[number]) =>
      guarded('a watches map', keyOf(object), [] as readonly string[], () => {
        const keys = watch.map(object);
        if (!Array.isArray(keys)) throw new TypeError(`returned ${typeof keys}, not an array of keys`);
        return keys;
      });
    subscription.add(
      watch.informer.events$.subscribe((event) => {
        const keys = new Set(mapped(event.object));
        if (event.type === 'updated') for (const key of mapped(event.oldObject)) keys.add(key);
        enqueue(keys, priority(event));
      }),
    );
  }
  return subscription;
}

/** What one reconcile needs from the controller around it. */
interface ReconcileDeps<T extends KubeObject> {
  readonly options: Pick<ControllerOptions<T>, 'for' | 'reconcile'>;
  readonly queue: RateLimitingWorkQueue<string>;
  readonly scheduler: SchedulerLike;
  readonly cacheOf: ReconcileContext<T>['cacheOf'];
  /** Called once when the reconcile starts; its result once when it ends, or `abandon()` then it once it settles. */
  readonly started: () => HeldRoom;
  /** The signals of the reconciles running now, aborted by `stop()`. */
  readonly running: Set<AbortController>;
  readonly record: (outcome: ReconcileOutcome) => void;
  /** The controller's name, for messages. */
  readonly name: string;
}

/**
 * The outcome of a reconcile's result, with the queue told what comes next for the key.
 * `requeueAfter` waits only for a delay > 0 (controller-runtime's `RequeueAfter > 0`); a delay ≤ 0
 * is a rate-limited `requeue` (put back at once, an async reconcile would spin on microtasks), and a
 * delay that is not a finite number an error outcome (`HandlerError`), retried rate-limited.
 */
function settle(
  queue: RateLimitingWorkQueue<string>,
  key: string,
  priority: number,
  result: ReconcileResult,
  durationMs: number,
  name: string,
): ReconcileOutcome {
  if (result && result.type === 'requeueAfter') {
    const delayMs: unknown = result.delayMs;
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs)) {
      const error = new InformerError(
        'HandlerError',
        `controller ${name}: reconcile of ${key} returned requeueAfter(${describeDelay(delayMs)}): the delay must be a finite number of milliseconds`,
        { key },
      );
      return settleError(queue, key, priority, error, durationMs);
    }
    if (delayMs <= 0) return settle(queue, key, priority, { type: 'requeue' }, durationMs, name);
  }
  if (result && result.type === 'requeue') {
    queue.addRateLimited(key, priority);
    return { key, result: 'requeue', durationMs };
  }
  queue.forget(key);
  if (result && result.type === 'requeueAfter') {
    queue.addAfter(key, result.delayMs, priority);
    return { key, result: 'requeueAfter', delayMs: result.delayMs, durationMs };
  }
  return { key, result: 'success', durationMs };
}

/** A bad delay as a message shows it: a number (NaN, Infinity) or undefined as such, anything else by its type. */
const describeDelay = (delay: unknown): string => (typeof delay === 'number' || delay === undefined ? String(delay) : `a ${typeof delay}`);

/** The outcome of a reconcile that threw or errored: terminal (forgotten) or retried with the key's backoff. */
function settleError(
  queue: RateLimitingWorkQueue<string>,
  key: string,
  priority: number,
  error: unknown,
  durationMs: number,
): ReconcileOutcome {
  if (error instanceof TerminalError) {
    queue.forget(key);
    return { key, result: 'terminal', error, durationMs };
  }
  queue.addRateLimited(key, priority);
  return { key, result: 'error', error, requeues: queue.numRequeues(key), durationMs };
}

/** One reconcile of `key`: the user's function with its context, its outcome counted and the queue told. */
function reconcileOnce<T extends KubeObject>(deps: ReconcileDeps<T>, key: string, holdKey: Hold): Observable<ReconcileOutcome> {
  const { options, queue, scheduler, cacheOf } = deps;
  return defer(() => {
    const started = scheduler.now();
    const { namespace, name } = splitKey(key);
    const store = cacheOf(options.for);
    const priority = queue.priorityOf(key) ?? DEFAULT_PRIORITY;
    const abort = new AbortController();
    // Held by the queue's run (the key in flight) and here (the room an abandoned reconcile keeps): one count, holds.ts.
    const holds = new Holds();
    const hold: Hold = (promise) => holdKey(holds.hold(promise));
    const context: ReconcileContext<T> = {
      key,
      namespace,
      name,
      object: store.get(key),
      store,
      requeues: queue.numRequeues(key),
      priority,
      cacheOf,
      signal: abort.signal,
      hold,
    };
    // Counted down once: when the outcome is known, or when an abandoned reconcile (outcomes$ unsubscribed
    // mid-reconcile) has let go of its key: at once for an Observable (unsubscribed), once it settles for a promise.
    const finished = deps.started();
    let ended = false;
    deps.running.add(abort);
    const elapsed = () => Math.max(0, scheduler.now() - started); // ≥ 0 on a clock that steps back (a scheduler given)
    return defer(() => toObservable(options.reconcile(key, context), hold)).pipe(
      last(undefined, undefined as ReconcileResult),
      map((result) => settle(queue, key, priority, result, elapsed(), deps.name)),
      catchError((error: unknown) => of(settleError(queue, key, priority, error, elapsed()))),
      map((outcome) => {
        ended = true;
        // The room too is kept until what the reconcile held settles (a `context.hold` promise may outlive its
        // Observable, a `timeout()`): the key is, and `activeWorkers` never passes `concurrency` (audit38).
        holds.afterSettled(finished);
        deps.record(outcome);
        return outcome;
      }),
      finalize(() => {
        deps.running.delete(abort);
        if (ended) return;
        abort.abort();
        finished.abandon();
        holds.afterSettled(finished);
      }),
    );
  });
}

/** The report of a slot kept waiting by abandoned reconciles: how many, for how long, and what to do about it. */
function abandonedRoomError(name: string, concurrency: number, stall: RoomStall): AbandonedRoomError {
  const seconds = (ms: number) => formatDuration(ms, 'seconds');
  const them = stall.abandoned === 1 ? '1 abandoned reconcile holds' : `${stall.abandoned} abandoned reconciles hold`;
  return new AbandonedRoomError(
    `controller ${name}: no reconcile could start for ${seconds(stall.waitedMs)} (reported after ${seconds(ABANDONED_ROOM_REPORT_MS)}): ` +
      `${them} the room of concurrency ${concurrency}, abandoned ${seconds(stall.abandonedForMs)} ago (outcomes$ unsubscribed mid-reconcile, ` +
      `as on a lost leadership) and its promise not settled; pass context.signal on so that it ends when aborted`,
    stall,
  );
}

/** The latest cache of every input informer, kept while the controller runs. */
function cachesOf(inputs: readonly ControllerInput[]) {
  // Each value is what its key's `store$` last emitted: for an `Informer<U>`, a `Store<U>`.
  const caches = new Map<ControllerInput, unknown>();
  const cacheOf = <U extends KubeObject>(informer: Informer<U>): Store<U> => {
    const store = caches.get(informer);
    if (!store) throw new TypeError('cacheOf: that informer is not an input of this controller (pass it in `for`, `owns` or `watches`)');
    return store as Store<U>;
  };
  const follow = (): Subscription => {
    const subscription = new Subscription();
    for (const input of new Set(inputs)) subscription.add(input.store$.subscribe((store) => caches.set(input, store)));
    subscription.add(() => caches.clear());
    return subscription;
  };
  return { cacheOf, follow };
}

/**
 * The queue as the controller's slots see it: once `stopped()`, `get()` hands out nothing. A shut-down queue's own
 * `get()` still drains what is queued (client-go's), so without this a slot freed after `stop()` would start the
 * queued keys, after `stop()` had said it had drained. The keys left queued are not reconciled: they stay in the
 * shut-down queue (a controller started again lists, and queues, every object anyway).
 */
function untilStopped(queue: RateLimitingWorkQueue<string>, stopped: () => boolean, room: Room): WorkSource<string> {
  return {
    // Into the room left by abandoned reconciles still settling (room.ts): never more than `concurrency` at once.
    // `stopped()` asked again once room comes: a slot that waited for room across `stop()` takes no key.
    get: () => (stopped() ? EMPTY : room.whenRoom(() => (stopped() ? EMPTY : queue.get()))),
    add: (key, priority) => queue.add(key, priority),
    // Called once the run's held promises have settled (processItems): an abandoned reconcile's key stays in flight.
    done: (key) => queue.done(key),
    priorityOf: (key) => queue.priorityOf(key),
  };
}

/** Every option of `controller()`, from its type (a new one is an error here until listed); the rest are refused. */
const CONTROLLER_OPTION_NAMES = Object.keys({
  name: true,
  for: true,
  owns: true,
  watches: true,
  predicate: true,
  keyFilter: true,
  reconcile: true,
  lowPriorityWhenUnchanged: true,
  concurrency: true,
  rateLimiter: true,
  scheduler: true,
  reportUnobservedErrors: true,
} satisfies Record<keyof ControllerOptions<KubeObject>, true>);

/**
 * A controller in the client-go/controller-runtime mould, as Observables:
 * events become keys, keys go through a rate-limited work queue, and
 * `reconcile(key)` runs with at most `concurrency` keys at once and never the
 * same key twice at once.
 *
 * @throws TypeError when `concurrency` is not a positive integer (named with the controller), or an option has a name it
 *   does not take (`concurency`: the nearest is suggested).
 *
 * ```
 * for events:  -abb----a-a-------
 * (reconcile takes 3 frames, concurrency 1; each letter below: a reconcile starting)
 * reconciles:  -a--b---a--a------   b's second event arrived while b was queued: one reconcile;
 *                                   a's event at 10 arrived while a ran (8 to 11): a runs again at 11
 *
 * initial list l (a..z, low priority), then a real change of q (default priority), one worker:
 * for events:  l--q-----------
 * reconciles:  [a][q][b][c]…[z]   q overtakes the backlog of unchanged objects
 * ```
 */
export function controller<T extends KubeObject, W extends readonly KubeObject[] = readonly KubeObject[]>(
  options: ControllerOptions<T, W>,
): Controller {
  checkOptionNames('controller', options, CONTROLLER_OPTION_NAMES);
  const scheduler = options.scheduler ?? monotonicScheduler;
  const name = options.name ?? options.for.resource.kind.toLowerCase();
  const concurrency = options.concurrency ?? 1;
  // Refused here, as leaderElection refuses a bad timing: not after the sync and leadership, unnamed (a NaN from the env).
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new TypeError(
      `controller ${name}: \`concurrency\` must be a positive integer (keys reconciled at once), got ${String(concurrency)}`,
    );
  const errors$ = new Subject<InformerError>();
  // The first subscriber of the faults: reports one while nothing observes `errors$` (the one that is returned).
  const unobserved = unobservedReporter(`controller ${name}`, () => scheduler.now(), options.reportUnobservedErrors !== false);
  errors$.subscribe((error) => unobserved.report(error));
  const guarded = guardWith(name, errors$);
  const rateLimiter = options.rateLimiter && guardedRateLimiter(options.rateLimiter, guarded);
  const queue = createRateLimitingQueue<string>({ name, scheduler, ...(rateLimiter ? { rateLimiter } : {}) });
  const stop$ = new Subject<void>();
  let stopped = false;
  let counts = NO_OUTCOMES;
  // A slot kept waiting by abandoned reconciles (a promise that never settles stalls a controller of concurrency 1).
  const room = new Room(concurrency, { scheduler, report: (stall) => errors$.next(abandonedRoomError(name, concurrency, stall)) });
  const running = new Set<AbortController>();

  const { keyFilter } = options;
  const enqueue = (keys: Iterable<string>, priority: number) => {
    if (stopped) return;
    for (const key of keys) if (!keyFilter || guarded('keyFilter', key, false, () => keyFilter(key) === true)) queue.add(key, priority);
  };
  const watched: readonly WatchInput<W[number]>[] = options.watches ?? [];
  const inputs: readonly ControllerInput[] = [options.for, ...(options.owns ?? []), ...watched.map((w) => w.informer)];
  const { cacheOf, follow } = cachesOf(inputs);
  const deps: ReconcileDeps<T> = {
    name,
    options,
    queue,
    scheduler,
    cacheOf,
    running,
    started: () => room.started(),
    record: (outcome) => {
      counts = countOutcome(counts, outcome);
    },
  };

  /** A fault around a reconcile, outside the user's function (which ends as an outcome): reported, the key retried. */
  const failed = (key: string, cause: unknown): undefined => {
    errors$.next(new InformerError('Unknown', `controller ${name}: reconciling ${key} failed: ${describeThrown(cause)}`, { key, cause }));
    queue.addRateLimited(key, queue.priorityOf(key) ?? DEFAULT_PRIORITY);
    return undefined;
  };
  // While nobody subscribes to the outcomes, the queue's delayed keys (requeueAfter, backoff) wait without a timer.
  queue.pauseDelays();
  const outcomes$ = new Observable<ReconcileOutcome>((subscriber) => {
    queue.resumeDelays();
    const subscription = follow();
    subscription.add(routeEvents(options, guarded, enqueue));
    subscription.add(
      race(cacheSynced$(...inputs), stop$)
        .pipe(
          take(1), // stop() before the sync: stop$ wins and never completes; the outcomes end with it
          switchMap(() =>
            stopped
              ? EMPTY
              : processItems(
                  untilStopped(queue, () => stopped, room),
                  (key, hold) => reconcileOnce(deps, key, hold),
                  concurrency,
                ).pipe(
                  map((event) =>
                    event.type === 'value' ? event.value : event.type === 'error' ? failed(event.item, event.error.cause) : undefined,
                  ),
                ),
          ),
        )
        .subscribe(
          forward(subscriber, (outcome) => {
            if (outcome) subscriber.next(outcome);
          }),
        ),
    );
    subscription.add(() => queue.pauseDelays());
    return subscription;
  }).pipe(share());

  const metrics = (): ControllerMetrics => ({ name, ...counts, activeWorkers: room.active, maxConcurrentReconciles: concurrency });

  return {
    name,
    queue,
    outcomes$,
    errors$: observedErrors(errors$, unobserved),
    metrics$: outcomes$.pipe(map(metrics)),
    stop: () => {
      stopped = true;
      stop$.next();
      for (const abort of running) abort.abort();
      return queue.shutDownWithDrain();
    },
    metrics,
  };
}
