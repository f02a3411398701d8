import {
  EMPTY,
  Observable,
  defer,
  ReplaySubject,
  Subject,
  Subscription,
  catchError,
  distinctUntilChanged,
  filter,
  ignoreElements,
  map,
  merge,
  mergeMap,
  of,
  shareReplay,
  take,
  takeUntil,
  tap,
  type SchedulerLike,
} from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError, describeThrown, type InformerErrorDetails } from '../0-model/errors.ts';
import { metadataOnly, type PartialObjectMetadata } from '../0-model/metadata.ts';
import type { KubeObject } from '../0-model/objects.ts';
import { customResource, resourceName } from '../0-model/resources.ts';
import { listRefused } from '../2-source/listRefused.ts';
import {
  ResourceNameError,
  discover,
  DISCOVERY_OPTION_NAMES,
  discoveryRequestOptions,
  toResource,
  type DiscoveredResource,
  type Discovery,
  type DiscoveryOptions,
} from './discovery.ts';
import { checkInformerOptions } from '../5-informer/checkOptions.ts';
import { checkOptionNames } from '../util/optionNames.ts';
import { checkHttpOptionNames } from '../1-transport/http/optionNames.ts';
import { informerFactory, type FactoryOptions, type InformerFactory } from '../5-informer/factory.ts';
import type { Informer, InformerOptions } from '../5-informer/informer.ts';
import { sameRunAs } from '../5-informer/informerFromSource.ts';
import { observedErrors, unobservedReporter } from '../5-informer/unobservedErrors.ts';
import { BACKOFF_START } from '../util/backoff.ts';
import { discoveryRetryStep } from './discoveryRetry.ts';
import { discoveryRounds } from './discoveryRounds.ts';
import { CRD_BLIND_REDISCOVERY_MS, discoveryTriggers } from './discoveryTriggers.ts';
import {
  dynamicWatchStep,
  initialDynamicWatch,
  type DynamicWatchEffect,
  type DynamicWatchInput,
  type EndReason,
  type Selection,
} from './dynamicWatchStep.ts';

/** CustomResourceDefinitions, watched metadata-only: a CRD's name is `<plural>.<group>`, which is all discovery needs to hear. */
const CustomResourceDefinitions = metadataOnly(
  customResource({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
  }),
);

export type { EndReason, Selection } from './dynamicWatchStep.ts';
export { deletedCrds } from './dynamicWatchStep.ts';

/**
 * What a dynamic watch reports: an informer `started` (subscribe to it
 * here), an informer `ended` (dropped from the factory first, its streams
 * complete right after, and it makes no more requests), or a name that
 * discovery cannot resolve yet.
 */
export type DynamicEvent<T> =
  | { readonly type: 'started'; readonly resource: DiscoveredResource; readonly informer: Informer<T> }
  | {
      readonly type: 'ended';
      readonly resource: DiscoveredResource;
      readonly informer: Informer<T>;
      readonly reason: EndReason;
      readonly message: string;
    }
  | {
      /**
       * A name discovery cannot resolve: `Unknown` (a resource that cannot be listed and watched too, said in its
       * message), `Ambiguous`, or `GroupDiscoveryFailed` (not among what discovery read while a group version that
       * may serve it could not be read; never reported for a name whose informer runs: that goes on). Once per
       * message while it stays unresolved: again when the message changes (another reason, other group versions or
       * candidates named), or after it resolved.
       */
      readonly type: 'unresolved';
      readonly name: string;
      readonly error: ResourceNameError;
    };

/** Options of the informers a dynamic watch starts. */
export type DynamicWatchOptions = Pick<
  InformerOptions<KubeObject>,
  'namespace' | 'namespaces' | 'labelSelector' | 'fieldSelector' | 'resyncPeriod'
> & {
  /** Cache PartialObjectMetadata instead of whole objects. */
  readonly metadataOnly?: boolean;
};

/** Every option of a dynamic watch, from its type (a new one is an error here until listed). */
const WATCH_OPTION_NAMES = Object.keys({
  namespace: true,
  namespaces: true,
  labelSelector: true,
  fieldSelector: true,
  resyncPeriod: true,
  metadataOnly: true,
} satisfies Record<keyof DynamicWatchOptions, true>);

export interface DynamicInformerFactoryOptions {
  /** The factory informers come from (shared with typed informers). Default: `informerFactory(kc, factoryOptions)`. */
  readonly factory?: InformerFactory;
  /** Options of the default factory. */
  readonly factoryOptions?: FactoryOptions;
  /**
   * Discovery's requests and bounds. Its request options (timeouts, byte limits, `protocol`, `http2`,
   * `http1IdleTimeoutMs`, `compression`, `userAgent`) default to those of `factoryOptions.http`, so that discovery
   * talks to the server as the default factory's informers do; those given here win.
   */
  readonly discovery?: DiscoveryOptions;
  /** Discover again this long after the last CRD created or deleted, or a 404 an informer met (ms). Default 250. */
  readonly debounceMs?: number;
  /**
   * However often CRDs change, discover again at most this long after the first change that waits (ms): a debounce
   * alone fires only after a quiet spell. Default 4 × `debounceMs` (1 s).
   */
  readonly debounceMaxMs?: number;
  /**
   * A CRD update that can change discovery (its spec, `metadata.generation`; any update of a CRD discovery does not
   * serve yet) causes at most one discovery this often (ms); other updates (annotations, labels, status) none.
   * Default 5,000.
   */
  readonly updateIntervalMs?: number;
  readonly scheduler?: SchedulerLike;
  /**
   * While nothing subscribes to `errors$`, report discovery's faults with `process.emitWarning` (type
   * `RxInformerWarning`, as an informer's; `discovery: ServiceUnavailable: … (GET /apis/x.io/v1)`). Default true;
   * `false`: not. The informers report their own faults by the factory's option (`factoryOptions`).
   */
  readonly reportUnobservedErrors?: boolean;
}

/** Every option of `dynamicInformerFactory()`, from its type (a new one is an error here until listed). */
const FACTORY_OPTION_NAMES = Object.keys({
  factory: true,
  factoryOptions: true,
  discovery: true,
  debounceMs: true,
  debounceMaxMs: true,
  updateIntervalMs: true,
  scheduler: true,
  reportUnobservedErrors: true,
} satisfies Record<keyof DynamicInformerFactoryOptions, true>);

export interface DynamicInformerFactory {
  /**
   * Discovery now, and again after a CustomResourceDefinition is created or
   * deleted, or updated in a way that can change discovery (at most once per
   * `updateIntervalMs`), after an informer meets a 404, and after a discovery that failed
   * or could not read a group version, with the reflector's backoff (at
   * least its Retry-After) until one reads everything; emits when what is
   * served changed, and after a CRD was created or deleted. Replays the
   * latest. While subscribed, it watches CRDs.
   */
  readonly discovery$: Observable<Discovery>;
  /**
   * Faults of discovery, of the CRD watch and of a watch's selection predicate (a `HandlerError` naming the resource
   * it threw for: nothing changes for that resource, the watch goes on), as values (discovery keeps its last good answer). A discovery
   * fault is a {@link DiscoveryError}: of one group version (`groupVersion`; its running informers go on,
   * resources it adds wait for a discovery that reads it: one runs after the backoff) or of `/api`/`/apis` (no
   * `groupVersion`; nothing changes until a discovery succeeds, tried again after the backoff). Each is reported
   * once when it appears and again only when its reason changes or it comes back after a discovery that read that
   * group version (or all of discovery) fine:
   * a discovery repeated after each CRD change does not repeat a fault that lasts. While nothing subscribes, a
   * discovery fault is reported with `process.emitWarning` (see {@link DynamicInformerFactoryOptions.reportUnobservedErrors}).
   */
  readonly errors$: Observable<InformerError>;
  /** The shared factory. An informer a watch ends is dropped from it (`factory.forget`). */
  readonly factory: InformerFactory;
  /**
   * Unstructured informers for what `selection` names, started and ended as
   * resources come and go. While subscribed, the informers it started run
   * (one list/watch each); unsubscribing stops them all.
   *
   * ```ts
   * dynamic.watch('all', { metadataOnly: true }).pipe(
   *   mergeMap((e) => (e.type === 'started' ? e.informer.events$.pipe(map((event) => ({ resource: e.resource, event }))) : EMPTY)),
   * ).subscribe(({ resource, event }) => console.log(resourceName(resource), event.type, keyOf(event.object)));
   * ```
   */
  watch(
    selection: Selection,
    options: DynamicWatchOptions & { readonly metadataOnly: true },
  ): Observable<DynamicEvent<PartialObjectMetadata>>;
  watch(selection: Selection, options?: DynamicWatchOptions): Observable<DynamicEvent<KubeObject>>;
}

/**
 * A discovery fault on {@link DynamicInformerFactory.errors$}: the request's own error (reason, status,
 * message), and which group version it was for.
 */
export class DiscoveryError extends InformerError {
  /** `apps/v1`, `v1`; undefined when discovery as a whole failed (`/api` or `/apis`). */
  readonly groupVersion: string | undefined;
  constructor(error: InformerError, groupVersion?: string) {
    // Each of its fields (a new one of InformerErrorDetails is a type error here until kept, as in LeaseError.of):
    // `explain()` reads `execPlugin` and `unreachable` (audit56: an --all session blamed the network for a slow plugin).
    const kept = {
      status: error.status,
      phase: error.phase,
      retryAfterSeconds: error.retryAfterSeconds,
      key: error.key,
      resourceVersion: error.resourceVersion,
      issues: error.issues,
      statusObject: error.statusObject,
      unreachable: error.unreachable,
      request: error.request,
      execPlugin: error.execPlugin,
    } satisfies Record<keyof Omit<InformerErrorDetails, 'cause'>, unknown>;
    super(error.reason, error.message, { ...kept, cause: error.cause ?? error });
    this.name = 'DiscoveryError';
    this.groupVersion = groupVersion;
  }
}

/** Reports each discovery fault once while it lasts (see `errors$`): group version ('' for all of discovery) → reason reported. */
function faultReporter(report: (error: DiscoveryError) => void) {
  const reported = new Map<string, string>();
  const fault = (groupVersion: string, error: InformerError) => {
    if (reported.get(groupVersion) === error.reason) return;
    reported.set(groupVersion, error.reason);
    report(new DiscoveryError(error, groupVersion || undefined));
  };
  return {
    failed: (error: InformerError) => fault('', error),
    found: (d: Discovery) => {
      const failing = new Map(d.failures.map((f) => [f.groupVersion, f.error]));
      for (const groupVersion of [...reported.keys()]) if (!failing.has(groupVersion)) reported.delete(groupVersion);
      for (const [groupVersion, error] of failing) fault(groupVersion, error);
    },
  };
}

/**
 * What is served, as far as informers and name resolution care: every field of every resource (a CRD update that adds
 * a short name, a singular or a category makes a watch by that name resolve), and which group versions discovery
 * could not read (a name they may serve is `GroupDiscoveryFailed`, not `Unknown`). Changes to anything else (the
 * faults' messages) do not re-emit discovery.
 */
export function signature(d: Pick<Discovery, 'all' | 'failures'>): string {
  return JSON.stringify([
    d.all.map((r) => [r.group, r.version, r.plural, r.singular, r.kind, r.namespaced, r.preferred, r.verbs, r.shortNames, r.categories]),
    d.failures.map((f) => f.groupVersion),
  ]);
}

function asInformerError(error: unknown): InformerError {
  return error instanceof InformerError
    ? error
    : new InformerError('Unknown', error instanceof Error ? error.message : String(error), { cause: error });
}

/**
 * An informer whose streams complete when `ended$` emits (and whose handlers
 * are then removed), so that nothing keeps a removed resource's list/watch alive.
 */
function endingWith<T>(inner: Informer<T>, ended$: Observable<void>): Informer<T> {
  const state$ = inner.state$.pipe(takeUntil(ended$));
  // Its last fault and step counts are the inner informer's (waitForCacheSync, serve()'s /metrics read them).
  sameRunAs(state$, inner.state$);
  return {
    ...inner,
    events$: inner.events$.pipe(takeUntil(ended$)),
    store$: inner.store$.pipe(takeUntil(ended$)),
    synced$: inner.synced$.pipe(takeUntil(ended$)),
    errors$: inner.errors$.pipe(takeUntil(ended$)),
    state$,
    health$: inner.health$.pipe(takeUntil(ended$)),
    on(handler, ...rest: readonly unknown[]) {
      // Every argument on: the inner on() refuses a second one (client-node's on('add', cb)).
      const subscription = (inner.on as (...args: readonly unknown[]) => Subscription)(handler, ...rest);
      subscription.add(ended$.subscribe(() => subscription.unsubscribe()));
      return subscription;
    },
  };
}

/**
 * client-go's DynamicSharedInformerFactory with discovery kept current:
 * informers by name for kinds unknown at build time, and a `watch('all')`
 * that starts informers for CRDs installed later and ends, with one
 * `ended` event, those whose CRD is deleted.
 */
export function dynamicInformerFactory(kc: KubeConfig, options: DynamicInformerFactoryOptions = {}): DynamicInformerFactory {
  checkOptionNames('dynamicInformerFactory', options, FACTORY_OPTION_NAMES);
  checkHttpOptionNames('dynamicInformerFactory', options.discovery, 'discovery.', DISCOVERY_OPTION_NAMES);
  const factory = options.factory ?? informerFactory(kc, options.factoryOptions);
  const crds = factory.informer(CustomResourceDefinitions);
  const pokes = new Subject<void>();
  const discoveryErrors = new Subject<InformerError>();
  const scheduler = options.scheduler ?? monotonicScheduler;
  const unobserved = unobservedReporter('discovery', () => scheduler.now(), options.reportUnobservedErrors !== false);
  const report = (error: InformerError) => {
    unobserved.report(error);
    discoveryErrors.next(error);
  };
  const faults = faultReporter(report);
  const discovery = { ...discoveryRequestOptions(options.factory ? undefined : options.factoryOptions?.http), ...options.discovery };
  // A CRD watch refused its list (403: a tenant's RBAC) is no cache of the factory's user: waitForCacheSync() would
  // wait on it for good. It leaves the factory's count and goes on (its backoff), and discovery runs every 30 s meanwhile.
  // A 401 does not: an expired credential the next request renews, failing every informer of it alike (client-go retries it).
  const refused = () => factory.forget(crds);
  const discovery$ = followedDiscovery(kc, crds, pokes, faults, refused, { ...options, discovery });
  const errors$ = observedErrors(merge(discoveryErrors, crds.errors$), unobserved);
  const context: WatchContext = { factory, crds, discovery$, pokes, holders: holdersOf(factory), report };
  // Typed per mode by the overloads; inside, both kinds of informer are handled alike.
  const watch = (selection: Selection, watchOptions: DynamicWatchOptions = {}) => {
    checkInformerOptions('dynamicInformerFactory.watch', watchOptions);
    checkOptionNames('dynamicInformerFactory.watch', watchOptions, WATCH_OPTION_NAMES);
    return dynamicWatch(context, selection, watchOptions);
  };
  return { discovery$, errors$, factory, watch: watch as DynamicInformerFactory['watch'] };
}

/**
 * Discovery now, once more when the CRD watch has its list (a CRD created in between is then
 * seen), then after a CRD change or poke as `discoveryTriggers` says, and after a discovery with a fault once
 * the backoff has passed (`discoveryRetryStep`): emitted when what is served changed, or after a
 * CRD was created or deleted. Faults go to `faults`; the last good answer stays.
 */
function followedDiscovery(
  kc: KubeConfig,
  crds: Informer<PartialObjectMetadata>,
  pokes: Observable<void>,
  faults: ReturnType<typeof faultReporter>,
  refused: () => void,
  options: DynamicInformerFactoryOptions,
): Observable<Discovery> {
  const scheduler = options.scheduler ?? monotonicScheduler;
  // The default factory's `random` (a seeded one makes the rediscovery's jitter reproducible, as the informers').
  const random = options.factoryOptions?.random ?? Math.random;
  /**
   * CRDs created or deleted so far. A discovery started after one is emitted even when it
   * serves what the last one emitted did: a CRD deleted and created again before any
   * discovery without it was emitted must still start again (the watches ended it).
   */
  let crdTurnover = 0;
  /** The CRD names (`<plural>.<group>`) the last discovery served: a status update of another may be its establishing. */
  let served: ReadonlySet<string> = new Set();
  const crdChanges$ = crds.events$.pipe(
    filter((e) => !e.isInInitialList),
    tap((e) => {
      if (e.type !== 'updated') crdTurnover++;
    }),
  );
  const changes$ = discoveryTriggers(crdChanges$, pokes, (name) => served.has(name), options, scheduler);
  return defer(() => {
    /** The retry's backoff (see `discoveryRetryStep`), for this subscription: it goes on across CRD changes. */
    let backoff = BACKOFF_START;
    /** One discovery: what it found (undefined: it failed) and its faults. */
    const once = (): Observable<{ found: Discovery | undefined; turnover: number; errors: readonly InformerError[] }> =>
      defer(() => {
        const turnover = crdTurnover;
        return discover(kc, options.discovery).pipe(
          tap((found) => {
            served = new Set(found.all.filter((r) => r.group !== '').map((r) => `${r.plural}.${r.group}`));
            faults.found(found);
          }),
          map((found) => ({ found, turnover, errors: found.failures.map((f) => f.error) })),
          catchError((error: unknown) => {
            const failed = asInformerError(error);
            faults.failed(failed);
            return of({ found: undefined, turnover, errors: [failed] });
          }),
        );
      });
    // One round at a time, none cancelled by a trigger; after a fault another once the backoff has passed (unless a
    // CRD change or a poke comes first): see `discoveryRounds`.
    // Until the CRD watch has its list, no CRD event can say discovery is stale: another round by itself, 30 s on.
    let crdsSynced = false;
    const retryInMs = ({ errors }: { readonly errors: readonly InformerError[] }) => {
      const retry = discoveryRetryStep(backoff, errors, scheduler.now(), random);
      backoff = retry.state;
      return crdsSynced ? retry.retryInMs : Math.min(retry.retryInMs ?? Infinity, CRD_BLIND_REDISCOVERY_MS);
    };
    const synced$ = crds.synced$.pipe(
      filter(Boolean),
      take(1),
      tap(() => (crdsSynced = true)),
    );
    // Read from its steps, not `errors$` (which would count as a subscriber who handles its faults).
    const refused$ = crds.state$.pipe(
      filter((state) => state.errors.some((error) => listRefused(error, state.synced))),
      take(1),
      tap(refused),
      ignoreElements(),
    );
    const triggers$ = merge(of(undefined), synced$, changes$, refused$);
    return discoveryRounds(triggers$, once, retryInMs, scheduler).pipe(
      mergeMap(({ found, turnover }) => (found ? of({ found, turnover }) : EMPTY)),
    );
  }).pipe(
    distinctUntilChanged((a, b) => a.turnover === b.turnover && signature(a.found) === signature(b.found)),
    map(({ found }) => found),
    shareReplay({ bufferSize: 1, refCount: true }),
  );
}

/** The holders of each factory's informers: one home per factory, whichever dynamic factories share it. */
const holdersByFactory = new WeakMap<InformerFactory, Holders>();

type Holders = ReturnType<typeof newHolders>;

/**
 * The factory informers the watches run: how many watches hold each, and whether one
 * ended it since it was last started. An informer leaves the factory (`factory.forget`)
 * when its CRD is deleted, or once the last watch holding it lets go after one ended it as
 * `NotServed` (another watch, by name or pinned to a version, may still run what one ends
 * because its selection no longer wants it or discovery now prefers another version).
 * The count is the factory's, not one dynamic factory's: two over one `factory` option
 * (audit28) counted apart, and one forgot an informer the other still ran (whose next
 * `factory.informer()` then opened a second list and watch).
 */
function holdersOf(factory: InformerFactory): Holders {
  let holders = holdersByFactory.get(factory);
  if (!holders) holdersByFactory.set(factory, (holders = newHolders(factory)));
  return holders;
}

function newHolders(factory: InformerFactory) {
  const holders = new Map<Informer<KubeObject>, { count: number; ended: boolean }>();
  return {
    hold(inner: Informer<KubeObject>) {
      const h = holders.get(inner);
      if (!h) return void holders.set(inner, { count: 1, ended: false });
      h.count++;
      h.ended = false; // served again, as far as this watch can tell
    },
    release(inner: Informer<KubeObject>, reason?: EndReason) {
      const h = holders.get(inner) ?? { count: 1, ended: false };
      h.count--;
      if (reason) h.ended = true;
      if (h.count <= 0) holders.delete(inner);
      if (reason === 'CRDDeleted' || (h.count <= 0 && h.ended)) factory.forget(inner);
    },
  };
}

/** What every watch of one dynamic factory shares. */
interface WatchContext {
  readonly factory: InformerFactory;
  readonly crds: Informer<PartialObjectMetadata>;
  readonly discovery$: Observable<Discovery>;
  /** Asks for a discovery now (an informer met a 404). */
  readonly pokes: Subject<void>;
  readonly holders: ReturnType<typeof holdersOf>;
  /** Reports a fault of a watch's own (its selection's predicate threw) on `errors$`, as discovery's. */
  readonly report: (error: InformerError) => void;
}

/** An informer a watch runs: the step's `running` says which, by key; these are their handles. */
interface Running {
  readonly resource: DiscoveredResource;
  /** The factory's informer (what is forgotten when it ends). */
  readonly inner: Informer<KubeObject>;
  /** What subscribers get: `inner`, ending with the resource. */
  readonly informer: Informer<KubeObject>;
  readonly ended: ReplaySubject<void>;
  readonly keepAlive: Subscription;
}

/**
 * `watch(selection, options)` of a dynamic factory: see {@link DynamicInformerFactory.watch}. What to start, end and
 * report is `dynamicWatchStep`'s to decide (dynamicWatchStep.ts); this shell starts the informers, holds and releases
 * them in the factory (`holdersOf`) and emits the events, in the effects' order.
 */
function dynamicWatch(
  context: WatchContext,
  selection: Selection,
  watchOptions: DynamicWatchOptions,
): Observable<DynamicEvent<KubeObject>> {
  const { factory, crds, discovery$, pokes, holders, report } = context;
  const { metadataOnly: metadata, ...informerOptions } = watchOptions;
  return new Observable<DynamicEvent<KubeObject>>((subscriber) => {
    let state = initialDynamicWatch(selection);
    /** The informers started, by key: a key the step runs has none only once the watch ended (see `perform`). */
    const running = new Map<string, Running>();
    const subscriptions = new Subscription();

    const stop = (r: Running) => {
      r.keepAlive.unsubscribe();
      r.ended.next();
      r.ended.complete();
    };
    const end = (key: string, reason: EndReason, message: string) => {
      const r = running.get(key);
      if (!r) return;
      running.delete(key);
      // Out of the factory (see `holdersOf`) before anyone hears of it: waitForCacheSync() no longer waits on
      // it, and a CRD created again gets a fresh informer (with the scope and version discovery reports then).
      holders.release(r.inner, reason);
      subscriber.next({ type: 'ended', resource: r.resource, informer: r.informer, reason, message });
      stop(r);
    };
    const start = (key: string, d: DiscoveredResource) => {
      const base = toResource(d);
      let inner: Informer<KubeObject>;
      try {
        inner = metadata
          ? (factory.informer(metadataOnly(base), informerOptions) as unknown as Informer<KubeObject>)
          : factory.informer(base, informerOptions);
      } catch (error) {
        // Options that conflict with the shared factory's informer (see `informerFactory`): the watch cannot be what was asked.
        return subscriber.error(error);
      }
      holders.hold(inner);
      const ended = new ReplaySubject<void>(1);
      // Runs the informer while the watch lasts; a 404 means the resource may be gone: ask discovery now. Read from
      // its steps, not `errors$`: a subscriber there counts as one who handles its faults, and then no fault nobody
      // else hears would be reported (src/5-informer/unobservedErrors.ts).
      const keepAlive = inner.state$.subscribe((state) => {
        if (state.errors.some((error) => error.reason === 'NotFound')) pokes.next();
      });
      const r: Running = { resource: d, inner, informer: endingWith(inner, ended), ended, keepAlive };
      running.set(key, r);
      subscriber.next({ type: 'started', resource: d, informer: r.informer });
    };
    /**
     * One effect. A subscriber that lets go during an event (or an informer that cannot start) ends the watch
     * mid-turn: its teardown released what ran, and the turn's later effects find nothing to end and start nothing.
     */
    const perform = (effect: DynamicWatchEffect) => {
      switch (effect.type) {
        case 'unresolved':
          return subscriber.next({ type: 'unresolved', name: effect.name, error: effect.error });
        case 'end':
          return end(effect.key, effect.reason, effect.message);
        case 'start':
          if (!subscriber.closed) start(effect.key, effect.resource);
          return;
        case 'selectionThrew':
          return report(
            new InformerError(
              'HandlerError',
              `the watch's selection threw for ${resourceName(effect.resource)}: ${describeThrown(effect.thrown)}`,
              { phase: 'handler', cause: effect.thrown },
            ),
          );
        case 'release': {
          const r = running.get(effect.key);
          if (!r) return;
          running.delete(effect.key);
          holders.release(r.inner);
          return stop(r);
        }
      }
    };
    const input = (i: DynamicWatchInput) => {
      const next = dynamicWatchStep(state, i);
      state = next.state;
      for (const effect of next.effects) perform(effect);
    };

    subscriptions.add(
      crds.events$.subscribe((e) => {
        const name = e.object.metadata.name;
        input(e.type === 'deleted' ? { type: 'crdDeleted', name } : { type: 'crdCreated', name });
      }),
    );
    subscriptions.add(discovery$.subscribe((discovery) => input({ type: 'discovery', discovery })));
    return () => {
      subscriptions.unsubscribe();
      input({ type: 'teardown' });
    };
  });
}
