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
import { InformerError } from '../0-model/errors.ts';
import { metadataOnly, type PartialObjectMetadata } from '../0-model/metadata.ts';
import type { KubeObject } from '../0-model/objects.ts';
import { customResource, resourceName } from '../0-model/resources.ts';
import {
  GroupDiscoveryFailedError,
  ResourceNameError,
  UnknownResourceError,
  discover,
  discoveryRequestOptions,
  isWatchable,
  resolveResource,
  toResource,
  watchableResources,
  type DiscoveredResource,
  type Discovery,
  type DiscoveryFailure,
  type DiscoveryOptions,
} from './discovery.ts';
import { checkInformerOptions } from '../5-informer/checkOptions.ts';
import { informerFactory, type FactoryOptions, type InformerFactory } from '../5-informer/factory.ts';
import type { Informer, InformerOptions } from '../5-informer/informer.ts';
import { observedErrors, unobservedReporter } from '../5-informer/unobservedErrors.ts';
import { BACKOFF_START } from '../util/backoff.ts';
import { discoveryRetryStep } from './discoveryRetry.ts';
import { discoveryRounds } from './discoveryRounds.ts';
import { CRD_BLIND_REDISCOVERY_MS, discoveryTriggers } from './discoveryTriggers.ts';

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

/** Why a dynamic informer ended. */
export type EndReason =
  /** Its CustomResourceDefinition was deleted. */
  | 'CRDDeleted'
  /** Discovery no longer lists it (or lists another version of it, which starts as a new informer). */
  | 'NotServed';

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

/** Which resources a dynamic watch follows. */
export type Selection =
  /** Every resource that can be listed and watched (one per group, its preferred version), CRDs installed later included. */
  | 'all'
  /** These names (`pods`, `deploy`, `myapples.stable.example.com`, …), each as soon as discovery knows it. */
  | readonly string[]
  /** Every watchable resource the predicate accepts. */
  | ((resource: DiscoveredResource) => boolean);

/** Options of the informers a dynamic watch starts. */
export type DynamicWatchOptions = Pick<
  InformerOptions<KubeObject>,
  'namespace' | 'namespaces' | 'labelSelector' | 'fieldSelector' | 'resyncPeriod'
> & {
  /** Cache PartialObjectMetadata instead of whole objects. */
  readonly metadataOnly?: boolean;
};

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
   * Faults of discovery and of the CRD watch, as values (discovery keeps its last good answer). A discovery
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
    super(error.reason, error.message, {
      status: error.status,
      phase: error.phase,
      retryAfterSeconds: error.retryAfterSeconds,
      statusObject: error.statusObject,
      cause: error.cause ?? error,
      request: error.request,
    });
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
  return {
    ...inner,
    events$: inner.events$.pipe(takeUntil(ended$)),
    store$: inner.store$.pipe(takeUntil(ended$)),
    synced$: inner.synced$.pipe(takeUntil(ended$)),
    errors$: inner.errors$.pipe(takeUntil(ended$)),
    state$: inner.state$.pipe(takeUntil(ended$)),
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
  const factory = options.factory ?? informerFactory(kc, options.factoryOptions);
  const crds = factory.informer(CustomResourceDefinitions);
  const pokes = new Subject<void>();
  const discoveryErrors = new Subject<InformerError>();
  const scheduler = options.scheduler ?? monotonicScheduler;
  const unobserved = unobservedReporter('discovery', () => scheduler.now(), options.reportUnobservedErrors !== false);
  const faults = faultReporter((error) => {
    unobserved.report(error);
    discoveryErrors.next(error);
  });
  const discovery = { ...discoveryRequestOptions(options.factory ? undefined : options.factoryOptions?.http), ...options.discovery };
  // A CRD watch refused its list (403: a tenant's RBAC) is no cache of the factory's user: waitForCacheSync() would
  // wait on it for good. It leaves the factory's count and goes on (its backoff), and discovery runs every 30 s meanwhile.
  const refused = () => factory.forget(crds);
  const discovery$ = followedDiscovery(kc, crds, pokes, faults, refused, { ...options, discovery });
  const errors$ = observedErrors(merge(discoveryErrors, crds.errors$), unobserved);
  const context: WatchContext = { factory, crds, discovery$, pokes, holders: holdersOf(factory) };
  // Typed per mode by the overloads; inside, both kinds of informer are handled alike.
  const watch = (selection: Selection, watchOptions: DynamicWatchOptions = {}) => {
    checkInformerOptions('dynamicInformerFactory.watch', watchOptions);
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
      filter((state) => !state.synced && state.errors.some((error) => error.reason === 'Forbidden')),
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
}

/** One informer a watch runs. */
interface Running {
  readonly resource: DiscoveredResource;
  /** The factory's informer (what is forgotten when it ends). */
  readonly inner: Informer<KubeObject>;
  /** What subscribers get: `inner`, ending with the resource. */
  readonly informer: Informer<KubeObject>;
  readonly ended: ReplaySubject<void>;
  readonly keepAlive: Subscription;
}

/** `watch(selection, options)` of a dynamic factory: see {@link DynamicInformerFactory.watch}. */
function dynamicWatch(
  context: WatchContext,
  selection: Selection,
  watchOptions: DynamicWatchOptions,
): Observable<DynamicEvent<KubeObject>> {
  const { factory, crds, discovery$, pokes, holders } = context;
  const { metadataOnly: metadata, ...informerOptions } = watchOptions;
  return new Observable<DynamicEvent<KubeObject>>((subscriber) => {
    const running = new Map<string, Running>();
    const deleted = deletedCrds();
    const unresolved = new Map<string, string>();
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
    const report = (name: string, error: ResourceNameError) => {
      if (unresolved.get(name) !== error.message) subscriber.next({ type: 'unresolved', name, error });
      unresolved.set(name, error.message);
    };

    subscriptions.add(
      crds.events$.subscribe((e) => {
        const name = e.object.metadata.name;
        if (e.type === 'deleted') {
          deleted.deleted(name);
          end(name, 'CRDDeleted', `customresourcedefinition ${name} was deleted`);
        } else deleted.created(name);
      }),
    );
    subscriptions.add(
      discovery$.subscribe((d) => {
        const want = selected(d, selection, running, report, (name) => unresolved.delete(name));
        for (const [key, why] of noLongerServed(d, running, want)) end(key, 'NotServed', why);
        for (const [key, w] of want) if (!subscriber.closed && !running.has(key) && !deleted.racing(key)) start(key, w);
        deleted.discovered(d);
      }),
    );
    return () => {
      subscriptions.unsubscribe();
      for (const r of running.values()) {
        holders.release(r.inner);
        stop(r);
      }
      running.clear();
    };
  });
}

/**
 * The watchable resources `selection` names in discovery `d`, by name. A name it cannot resolve
 * (or that cannot be listed and watched) goes to `unresolved`; one it resolves, to `resolved`.
 * A name not among what `d` read while a group version that may serve it failed is not "unknown":
 * a `GroupDiscoveryFailedError`, or nothing at all when its informer runs (`running`: it goes on).
 */
function selected(
  d: Discovery,
  selection: Selection,
  running: ReadonlyMap<string, Running>,
  unresolved: (name: string, error: ResourceNameError) => void,
  resolved: (name: string) => void,
): Map<string, DiscoveredResource> {
  const out = new Map<string, DiscoveredResource>();
  if (!Array.isArray(selection)) {
    const accept = typeof selection === 'function' ? selection : () => true;
    for (const r of watchableResources(d)) if (accept(r)) out.set(resourceName(r), r);
    return out;
  }
  for (const name of selection as readonly string[]) {
    const found = resolveResource(d, name);
    if (found instanceof UnknownResourceError) {
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

/** Whether `name` is a resource this watch runs, of a group version in `failures` (one discovery could not read). */
function runsHidden(name: string, running: ReadonlyMap<string, Running>, failures: readonly DiscoveryFailure[]): boolean {
  const unread = new Set(failures.map((f) => f.groupVersion));
  const hidden = [...running.values()].map((r) => r.resource).filter((r) => unread.has(groupVersionOf(r)));
  return hidden.length > 0 && !(resolveResource({ all: hidden }, name) instanceof ResourceNameError);
}

function groupVersionOf(r: Pick<DiscoveredResource, 'group' | 'version'>): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/**
 * The CRDs one watch saw deleted (by name, `<plural>.<group>`, a resource's {@link resourceName}) that a discovery may
 * still list: one that raced the deletion (started before it) must not start them anew. A name leaves when its CRD is
 * created again, or when a discovery no longer lists it having read its group (none of `failures` may serve it):
 * discoveries are emitted in the order they were started (`discoveryRounds`: one round at a time), so every later
 * one started after that one read the group without it, and cannot list it unless the CRD is created again (an event
 * that starts it anyway). So the set holds only names the last discovery still served (or could not read): before,
 * every CRD name deleted and never created again stayed for the life of the watch.
 */
export function deletedCrds() {
  const names = new Set<string>();
  return {
    deleted: (name: string) => void names.add(name),
    created: (name: string) => void names.delete(name),
    /** Whether discovery listing `name` may have raced its deletion: not to be started. */
    racing: (name: string) => names.has(name),
    /** After discovery `d`: forget the names it read the group of and did not list. */
    discovered(d: Pick<Discovery, 'all' | 'failures'>) {
      if (names.size === 0) return;
      const served = new Set(d.all.map((r) => resourceName(r)));
      for (const name of names) if (!served.has(name) && !d.failures.some((f) => mayServe(f.groupVersion, name))) names.delete(name);
    },
    get size() {
      return names.size;
    },
  };
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
  running: ReadonlyMap<string, Running>,
  want: ReadonlyMap<string, DiscoveredResource>,
): [string, string][] {
  const unread = new Set(d.failures.map((f) => f.groupVersion));
  const ends: [string, string][] = [];
  for (const [key, r] of running) {
    if (unread.has(groupVersionOf(r.resource))) continue;
    const w = want.get(key);
    if (!w) ends.push([key, `${key} is no longer served`]);
    else if (w.version !== r.resource.version || w.namespaced !== r.resource.namespaced) {
      ends.push([key, `${key} is now served as ${w.group}/${w.version}`]);
    }
  }
  return ends;
}
