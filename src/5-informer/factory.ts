import {
  BehaviorSubject,
  EMPTY,
  Observable,
  combineLatest,
  filter,
  firstValueFrom,
  ignoreElements,
  isObservable,
  map,
  merge,
  of,
  switchMap,
  take,
  tap,
  throwError,
  timeout,
} from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError, capMessage } from '../0-model/errors.ts';
import { KubeObject } from '../0-model/objects.ts';
import { resourceName, type Resource } from '../0-model/resources.ts';
import { informer, type Informer, type InformerOptions } from './informer.ts';
import { lastErrorOf } from './informerFromSource.ts';
import type { InformerHealth } from './health.ts';
import { checkInformerOptionNames, checkInformerOptions, checkResource } from './checkOptions.ts';
import { checkSharedOptions } from './sharing.ts';

/** Anything with a `synced$`. */
export interface Syncable {
  readonly synced$: Observable<boolean>;
}

/** Whether `each` has a `synced$`, as every informer has. */
const isSyncable = (each: unknown): each is Syncable => typeof each === 'object' && each !== null && 'synced$' in each;

/**
 * Emits `true` once every informer has synced, then completes. Subscribing
 * starts the informers (and keeps them running while subscribed). Takes them one by one,
 * `cacheSynced$(pods, deployments)`, or as an array, `cacheSynced$([pods, deployments])` (as `waitForCacheSync`);
 * anything else that is no informer errors it with a `Config` `InformerError`.
 */
export function cacheSynced$(informers: readonly Syncable[]): Observable<true>;
export function cacheSynced$(...informers: readonly Syncable[]): Observable<true>;
export function cacheSynced$(...given: readonly (Syncable | readonly Syncable[])[]): Observable<true> {
  const first: unknown = given[0];
  const informers: readonly unknown[] = given.length === 1 && Array.isArray(first) ? first : given;
  const bad = informers.findIndex((each) => !isSyncable(each));
  if (bad !== -1) {
    const expected = 'expected informers, as in cacheSynced$(pods, deployments) or cacheSynced$([pods, deployments])';
    return throwError(() => new InformerError('Config', `cacheSynced$: ${expected}; item ${bad} has no synced$`));
  }
  return allSynced(informers as readonly Syncable[]);
}

function allSynced(informers: readonly Syncable[]): Observable<true> {
  if (informers.length === 0) return new Observable<true>((subscriber) => (subscriber.next(true), subscriber.complete()));
  return combineLatest(informers.map((i) => i.synced$)).pipe(
    filter((all) => all.every(Boolean)),
    map((): true => true),
    take(1),
  );
}

/**
 * Resolves once every informer has synced; rejects with a `Timeout`
 * `InformerError` after `timeoutMs` (ms; default: wait forever: a 403 never syncs, so give one where that must not hang)
 * naming each informer that did not sync with its last error (`configmaps (Forbidden: …)`), and with a `Config` one when `informers` is
 * not an array of informers (`waitForCacheSync([pods, deployments])`; `cacheSynced$` is the variadic one).
 *
 * An informer runs while something subscribes to it, and only then: this subscribes while it waits, and
 * when it resolves the informers stop and drop their caches, unless something else keeps them running.
 * So, as client-go's start → wait → read, subscribe first and keep the subscription while you read:
 *
 * ```ts
 * const running = merge(pods.store$, deployments.store$).subscribe();   // or on(), events$, a controller
 * await waitForCacheSync([pods, deployments]);
 * const store = await firstValueFrom(pods.store$);                     // the synced cache
 * // … later: running.unsubscribe() stops them
 * ```
 */
export function waitForCacheSync(informers: readonly Syncable[], options: { readonly timeoutMs?: number } = {}): Promise<true> {
  const misuse = checkSyncables(informers);
  if (misuse) return Promise.reject(misuse);
  const synced = cacheSynced$(...informers);
  if (options.timeoutMs === undefined) return firstValueFrom(synced);
  // Each informer's last fault before the wait too: one refused for minutes retries only every 30 s or so.
  const progress = informers.map((informer) => ({
    informer,
    synced: false,
    lastError: hasState(informer) ? lastErrorOf(informer.state$) : undefined,
  }));
  // Each informer's state while we wait (not its errors$: that would count as observing them and silence their report).
  const watched = merge(
    ...progress.map((p) =>
      hasState(p.informer)
        ? p.informer.state$.pipe(
            tap((state) => {
              p.synced = state.synced;
              if (state.errors.length > 0) p.lastError = state.errors[state.errors.length - 1];
            }),
            ignoreElements(),
          )
        : EMPTY,
    ),
  );
  // Watched first: an informer that fails at once (a fake) has its error seen before the wait's synced$ starts it.
  const bounded = merge(watched, synced).pipe(
    timeout({
      first: options.timeoutMs,
      with: () => {
        throw new InformerError('Timeout', unsyncedMessage(options.timeoutMs!, progress));
      },
    }),
  );
  return firstValueFrom(bounded);
}

/** The most informers a timeout names; the others are counted. */
const MAX_NAMED = 3;
/** The most characters of one informer's last error a timeout quotes. */
const MAX_ERROR_CHARS = 200;

/** An informer's `state$`, when the `Syncable` has one (every informer of this library does). */
const hasState = (each: Syncable): each is Syncable & Pick<Informer<KubeObject>, 'state$'> =>
  'state$' in each && isObservable((each as { state$?: unknown }).state$);

/**
 * Why a wait timed out: each informer that did not sync (at most {@link MAX_NAMED}, then a count), with its last
 * error's reason and message, so that a 403 or a wrong namespace says itself instead of "did not sync".
 */
function unsyncedMessage(
  timeoutMs: number,
  progress: readonly { readonly informer: Syncable; readonly synced: boolean; readonly lastError: InformerError | undefined }[],
): string {
  const unsynced = progress.filter((p) => !p.synced);
  const named = unsynced.slice(0, MAX_NAMED).map(({ informer, lastError }) => {
    const resource = (informer as Partial<Pick<Informer<KubeObject>, 'resource'>>).resource;
    const name = resource === undefined ? `informer ${progress.findIndex((p) => p.informer === informer)}` : resourceName(resource);
    const why =
      lastError === undefined ? 'no error yet' : `${lastError.reason}: ${capMessage(lastError.message, { maxChars: MAX_ERROR_CHARS })}`;
    return `${name} (${why})`;
  });
  const more = unsynced.length > MAX_NAMED ? `; ${unsynced.length - MAX_NAMED} more` : '';
  return `caches did not sync within ${timeoutMs} ms: ${named.join('; ')}${more}`;
}

/** The `Config` error for an argument of `waitForCacheSync` that is not an array of informers; undefined when it is. */
function checkSyncables(informers: unknown): InformerError | undefined {
  const expected =
    'expected an array of informers, as in waitForCacheSync([pods, deployments]) (cacheSynced$(pods, deployments) takes them one by one)';
  if (!Array.isArray(informers))
    return new InformerError('Config', `waitForCacheSync: ${expected}; got ${informers === null ? 'null' : typeof informers}`);
  const bad = informers.findIndex((each: unknown) => !isSyncable(each));
  return bad === -1 ? undefined : new InformerError('Config', `waitForCacheSync: ${expected}; item ${bad} has no synced$`);
}

/** Options shared by every informer of a factory. */
export type FactoryOptions = Omit<
  InformerOptions<KubeObject>,
  'indexers' | 'transform' | 'namespace' | 'namespaces' | 'labelSelector' | 'fieldSelector'
> & {
  /** Default namespace for informers that name none. */
  readonly namespace?: string;
  /** Applied to every object of every informer, before caching (e.g. `stripManagedFields`). */
  readonly transform?: <T extends KubeObject>(object: T) => T;
};

export interface InformerFactory {
  /**
   * The informer for a resource (full or `metadataOnly`), typed or unstructured, namespace(s) and selectors: asking twice
   * returns the same one (and so shares its connection and cache). A typed `customResource({ …, schema })` beside the
   * unstructured one (the dynamic factory's, or `customResource()` without a schema) gets an informer of its own, as
   * client-go's factory keys by type: each validates with its own schema. A second, different schema object for a typed
   * informer already made throws a `Config` `InformerError` (define the schema once, pass the same object): a schema
   * built per call would otherwise open a watch and a cache per call. Any other option a later request states
   * (`delivery`, `resyncPeriod`, `transform`, `indexers`, `http`, …) must be what the informer was made
   * with, else this throws a `Config` `InformerError` naming both; an option left out takes the
   * informer's. For a differently configured informer of the same resource, use a second factory.
   */
  informer<T extends KubeObject>(resource: Resource<T>, options?: InformerOptions<T>): Informer<T>;
  /** Every informer made so far and not forgotten. */
  informers(): readonly Informer<KubeObject>[];
  /**
   * Drops an informer (as `informer()` returned it) from the factory: `informers()` and
   * `waitForCacheSync()` no longer count it, and a later `informer()` for the same resource,
   * namespace and selectors makes a fresh one. It does not stop it: whoever is subscribed keeps
   * it running. For informers whose resource is gone (the dynamic factory forgets those it
   * ends). Returns false, and drops nothing, when the factory does not hold this very informer
   * (forgotten already, or replaced by a fresh one since).
   */
  forget<T>(informer: Informer<T>): boolean;
  /**
   * The health of every informer made and not forgotten, one entry each, whenever one
   * changes (and as informers are made or forgotten). Subscribing starts them.
   */
  readonly health$: Observable<readonly InformerHealth[]>;
  /**
   * Resolves when every informer made so far and not forgotten (or the ones given, as an array) has synced.
   * It keeps them running only while it waits: subscribe to them first (their `store$`, `on()`, a
   * controller) and keep that subscription to read the synced caches afterwards; see the root `waitForCacheSync`.
   */
  waitForCacheSync(informers?: readonly Syncable[], options?: { readonly timeoutMs?: number }): Promise<true>;
}

/**
 * A shared informer factory: one informer (one connection, one cache) per resource, namespace and selectors.
 * @throws TypeError when a default (or, at `informer()`, an option or the resource) has the wrong type or an unknown name, as
 *   `informer()`; a per-informer option (`namespaces`, `labelSelector`, `fieldSelector`) is no default. `indexers`, which
 *   `FactoryOptions` leaves out, is a type error only: from JavaScript it is let through, given to every informer, and
 *   compared as a later request's `indexers` are.
 */
export function informerFactory(kc: KubeConfig, defaults: FactoryOptions = {}): InformerFactory {
  checkInformerOptions('informerFactory', defaults);
  checkInformerOptionNames('informerFactory', defaults, 'factory');
  /** Each informer made and not forgotten, with the options it was made with (defaults applied). */
  const made = new Map<
    string,
    { readonly informer: Informer<KubeObject>; readonly options: InformerOptions<KubeObject>; readonly schema: unknown }
  >();
  const changed = new BehaviorSubject<void>(undefined);
  const informers = () => [...made.values()].map((entry) => entry.informer);
  return {
    informer<T extends KubeObject>(resource: Resource<T>, options: InformerOptions<T> = {}): Informer<T> {
      checkResource('informerFactory.informer', resource);
      checkInformerOptions('informerFactory.informer', options);
      checkInformerOptionNames('informerFactory.informer', options);
      const { key, what, namespace } = identityOf(resource, options, defaults);
      const existing = made.get(key);
      if (existing) {
        if (existing.schema !== resource.schema) throw anotherSchema(what);
        checkSharedOptions(what, existing.options, options as InformerOptions<KubeObject>);
        return existing.informer as unknown as Informer<T>;
      }
      const transform = options.transform ?? (defaults.transform as ((object: T) => T) | undefined);
      const effective: InformerOptions<T> = { ...defaults, ...options, namespace, transform };
      const created = informer<T>(kc, resource, effective);
      const entry = { informer: created as unknown as Informer<KubeObject>, options: effective as InformerOptions<KubeObject> };
      made.set(key, { ...entry, schema: resource.schema });
      changed.next();
      return created;
    },
    informers,
    health$: changed.pipe(switchMap(() => (made.size === 0 ? of([]) : combineLatest(informers().map((i) => i.health$))))),
    forget(informer) {
      for (const [key, held] of made) {
        if (held.informer !== (informer as unknown)) continue;
        made.delete(key);
        changed.next();
        return true;
      }
      return false;
    },
    waitForCacheSync(informers, options) {
      return waitForCacheSync(informers ?? [...made.values()].map((entry) => entry.informer), options);
    },
  };
}

/**
 * The `Config` error for a typed request whose schema is another object than the one its informer was made with. A
 * schema is compared by identity (two zod schemas cannot be compared for what they accept), and a new informer per
 * schema object would open another watch and cache at every call of a helper that builds its schema inside.
 */
function anotherSchema(what: string): InformerError {
  return new InformerError(
    'Config',
    `the factory's informer for ${what} was made with another schema object; a later request for it passes a new one. ` +
      'Define the schema once (const MyKind = kubeObject({ … })) and pass that same object, or use a second factory',
    { phase: 'config' },
  );
}

/**
 * What makes two requests one informer: the resource, full or metadata-only, typed or unstructured, where (one
 * namespace, or a set of them in any order) and the selectors. `key` compares them, `what` names them in an error.
 * Typed or unstructured is part of it as client-go's InformerFor keys by the Go type: an informer validates and types
 * its objects with its resource's schema, so a typed request after an unstructured one (the dynamic factory's, sharing
 * this factory) handed out the unstructured informer as typed, objects that never ran the schema. Unstructured is the
 * shared `KubeObject` schema (the built-in kinds, `customResource()` without a schema, `metadataOnly`), so those still
 * share their informers; which typed schema object is the caller's, and the factory checks it is always the same one.
 */
function identityOf<T extends KubeObject>(
  resource: Resource<T>,
  options: InformerOptions<T>,
  defaults: FactoryOptions,
): { readonly key: string; readonly what: string; readonly namespace: string } {
  const namespace = resource.namespaced ? (options.namespace ?? defaults.namespace ?? '') : '';
  // Metadata-only and full informers of one resource are two informers (two connections, two caches).
  const mode = resource.metadataOnly === true ? 'metadata' : 'full';
  // Several namespaces are one informer, whatever their order.
  const namespaces = resource.namespaced && options.namespaces !== undefined ? [...new Set(options.namespaces)].sort() : undefined;
  const where = namespaces === undefined ? namespace : namespaces.length === 1 ? namespaces[0]! : namespaces;
  const labelSelector = options.labelSelector ?? '';
  const fieldSelector = options.fieldSelector ?? '';
  const schema = (resource.schema as unknown) === KubeObject ? 'unstructured' : 'typed';
  const key = JSON.stringify([resource.group, resource.version, resource.plural, mode, schema, where, labelSelector, fieldSelector]);
  const what = [
    resourceName(resource) + (mode === 'metadata' ? ' (metadata-only)' : ''),
    !resource.namespaced ? '' : where === '' ? 'in all namespaces' : `in ${typeof where === 'string' ? where : where.join(', ')}`,
    labelSelector === '' ? '' : `labelSelector ${labelSelector}`,
    fieldSelector === '' ? '' : `fieldSelector ${fieldSelector}`,
  ]
    .filter(Boolean)
    .join(' ');
  return { key, what, namespace };
}

/** A readable name for an informer, e.g. `pods` or `deployments.apps`. */
export function informerName(i: Pick<Informer<KubeObject>, 'resource'>): string {
  return resourceName(i.resource);
}
