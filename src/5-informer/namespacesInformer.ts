import { Observable, Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../0-model/objects.ts';
import type { Resource } from '../0-model/resources.ts';
import { http2StreamCapacity, knownProtocol } from '../1-transport/http/agents.ts';
import { httpListWatch } from '../1-transport/httpTransport.ts';
import type { KeepObject } from '../1-transport/lazyJson.ts';
import { filtered, isListWatch, type ListWatch } from '../1-transport/listWatch.ts';
import { namespaceOfKey, rawKey } from '../0-model/keys.ts';
import { listRefused } from '../2-source/listRefused.ts';
import type { ListProgress, SourceEvent } from '../2-source/sourceEvent.ts';
import type { MissedDeletion } from '../3-deltas/deltas.ts';
import type { InformerState } from '../4-store/reduceDeltas.ts';
import type { Store } from '../4-store/store.ts';
import { informerFromSource, reflectorFor, toListWatch, withRandom, type Informer, type InformerOptions } from './informerFromSource.ts';
import { forward } from '../util/forward.ts';
import { keepObjectFaults } from './keepObjectFaults.ts';
import { ConnectionTurns, DEFAULT_HTTP1_CONNECTIONS, http2Turns, isOutOfDescriptors, takingTurns } from './connectionTurns.ts';
import { InformerError } from '../0-model/errors.ts';

/**
 * Above this many namespaces, an informer over several namespaces lists and watches the whole
 * cluster once and drops the other namespaces' objects on the client; at or below it, it lists
 * and watches each namespace. Measured in docs/transport.md ("Many namespaces").
 */
export const DEFAULT_MAX_NAMESPACE_WATCHES = 16;

/**
 * Per KubeConfig and `http.protocol` option (informers that ask for HTTP/1.1 and informers that may use HTTP/2 do not
 * share a transport): the connections (over HTTP/1.1) or streams (over HTTP/2) its per-namespace lists and watches
 * take turns at (see ./connectionTurns.ts). The first informer's scheduler runs its timer, and its `http` options
 * say how many: over HTTP/1.1, and over TLS until the server has answered, 64 connections; over HTTP/2, the
 * fallback's share of what the pool carries (`http2.maxConnections` × the server's `SETTINGS_MAX_CONCURRENT_STREAMS`),
 * asked again at each input, so that it follows the server's SETTINGS.
 */
const turnsOf = new WeakMap<KubeConfig, Map<string, ConnectionTurns>>();

function turnsFor(kc: KubeConfig, options: Pick<InformerOptions<KubeObject>, 'http' | 'scheduler'>): ConnectionTurns {
  let byProtocol = turnsOf.get(kc);
  if (!byProtocol) turnsOf.set(kc, (byProtocol = new Map()));
  const http = options.http;
  const protocol = http?.protocol ?? 'auto';
  let turns = byProtocol.get(protocol);
  if (!turns) {
    const capacity = () =>
      knownProtocol(kc, protocol) === 'h2' ? http2Turns(http2StreamCapacity(kc, http?.http2)) : DEFAULT_HTTP1_CONNECTIONS;
    byProtocol.set(protocol, (turns = new ConnectionTurns({ capacity }, options.scheduler)));
  }
  return turns;
}

/** How an informer over several namespaces reads them, as it starts. */
type Mode = 'cluster-wide' | 'per-namespace';

/**
 * An informer over the objects of several namespaces (`informer(kc, r, { namespaces })`).
 *
 * - **More than `maxNamespaceWatches` namespaces** (default {@link DEFAULT_MAX_NAMESPACE_WATCHES}):
 *   ONE cluster-wide list and watch; an object of another namespace is dropped as soon as its
 *   metadata is read (lazy decoding: not validated, not cached, no event; a watch event of one
 *   becomes a bookmark, so the resourceVersion moves on).
 * - **At most that many, or when the cluster-wide list is Forbidden (403)** (a streaming list too; a 403
 *   after it listed is retried, `listRefused`): one list and watch per namespace (streams of one HTTP/2
 *   connection), merged into one view. Over HTTP/1.1, where a watch
 *   holds a connection for its life, they take turns at 64 connections of the KubeConfig (lists first;
 *   a watch resumes from its resourceVersion in its turn; docs/transport.md); over HTTP/2 too, at three
 *   quarters of the streams its pool carries, when they need more (else every namespace keeps its watch).
 *   The view syncs once every namespace has listed (its first list is all of them at once); afterwards each namespace's
 *   changes (relists included) are its events. Every namespace's faults reach `errors$`
 *   (but for `EMFILE`, which is said once for all of them until they sync).
 *   The 403 that sent it there is not reported (it is what the fallback is for).
 *
 * ```
 * ns a:    --L-----e---          L: a namespace's list, e: its event
 * ns b:    -----L-------e
 * events$: -----(LL)-e--e        (LL): the first list of both, as one replace
 * synced$: f----t-------
 * ```
 */
export function namespacesInformer<T extends KubeObject>(
  source: KubeConfig | ListWatch,
  resource: Resource<T>,
  namespaces: readonly string[],
  options: InformerOptions<T>,
): Informer<T> {
  const wanted = new Set(namespaces);
  const threshold = options.maxNamespaceWatches ?? DEFAULT_MAX_NAMESPACE_WATCHES;
  const wants = (key: string | undefined) => key === undefined || wanted.has(namespaceOfKey(key));
  const target = (namespace: string | undefined) => ({
    resource,
    namespace,
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
  });
  const clusterWide = (): ListWatch => {
    // A ListWatch given instead of a KubeConfig is taken as cluster-wide, and filtered here.
    // What has no key (a Status in an ERROR line) is kept: it is not an object of another namespace.
    // A keepObject of the caller's decides too (its throws reported), after the namespace: what it rejects is left out.
    const faults = options.http?.keepObject !== undefined ? keepObjectFaults(options.http.keepObject) : undefined;
    const keepObject: KeepObject = faults
      ? (skeleton) => wants(rawKey(skeleton)) && faults.keep(skeleton)
      : (skeleton) => wants(rawKey(skeleton));
    const read = filtered(
      toListWatch(source, target(undefined), { ...options.http, lazyDecode: options.http?.lazyDecode ?? true, keepObject }, options.random),
      wants,
    );
    return faults ? faults.reporting(read) : read;
  };
  const initialMode: Mode = isListWatch(source) || namespaces.length > threshold ? 'cluster-wide' : 'per-namespace';
  const inner: InformerOptions<T> = { ...options, namespace: undefined, namespaces: undefined };

  // Its list progress: the cluster-wide list's pages, or the namespaces' lists' summed (docs/api.md, `listProgress$`).
  const sourceOf = (cache: () => Store<T>, onListProgress: (progress: ListProgress) => void) =>
    new Observable<SourceEvent<T>>((subscriber) => {
      const subscription = new Subscription();
      const perNamespace = () =>
        subscription.add(mergedNamespaces(source as KubeConfig, resource, namespaces, target, inner, onListProgress).subscribe(subscriber));
      if (initialMode === 'per-namespace') {
        perNamespace();
        return subscription;
      }
      let listed = false;
      let forbidden = false;
      let wide: Subscription | undefined = undefined;
      const fallBack = () => {
        wide?.unsubscribe();
        perNamespace();
      };
      wide = reflectorFor(
        clusterWide(),
        resource,
        inner,
      )(cache, onListProgress).subscribe(
        forward(subscriber, (event) => {
          if (forbidden) return;
          if (event.type === 'replace') listed = true;
          const error = event.type === 'error' ? event.error : undefined;
          if (error !== undefined && !isListWatch(source) && listRefused(error, listed)) {
            // These credentials may list the namespaces, not the cluster: list each of them
            // (now, or as soon as the subscription that told us so is ours to end).
            forbidden = true;
            if (wide !== undefined) fallBack();
            return;
          }
          subscriber.next(event);
        }),
      );
      subscription.add(wide);
      if (forbidden) fallBack();
      return subscription;
    });
  return informerFromSource(resource, sourceOf, inner);
}

/**
 * The source events of one informer over `namespaces`, each listed and watched on its own: one
 * informer per namespace underneath (its cache is what a relist of it is compared with). Their
 * first lists come out as one `replace` once every namespace has listed; from then on their
 * events (`added`, `updated`, `deleted`) come out as watch events, their faults as faults.
 * Their paged lists' progress goes to `onListProgress`: summed over the namespaces until the first
 * lists are all in (one listed already counts its objects), then each namespace's relist as its own.
 */
function mergedNamespaces<T extends KubeObject>(
  kc: KubeConfig,
  resource: Resource<T>,
  namespaces: readonly string[],
  target: (namespace: string) => Parameters<typeof httpListWatch>[1],
  options: InformerOptions<T>,
  onListProgress: (progress: ListProgress) => void,
): Observable<SourceEvent<T>> {
  return new Observable<SourceEvent<T>>((subscriber) => {
    const subscription = new Subscription();
    // Their faults reach the outer informer's errors$ (and its report while nobody listens), not their own.
    const own: InformerOptions<T> = { ...options, resyncPeriod: 0, indexers: {}, delivery: undefined, reportUnobservedErrors: false };
    // Every request takes a turn: over HTTP/2, while everything fits, it is granted at once and nobody waits.
    const turns = turnsFor(kc, options);
    const informers = [...new Set(namespaces)].map((namespace) => {
      // A keepObject of the caller's: what it rejects is left out, as informer() does (not cached as a skeleton);
      // what it throws is reported.
      const faults = options.http?.keepObject !== undefined ? keepObjectFaults(options.http.keepObject) : undefined;
      // No page asked ahead: the turns count each read's connections (HTTP/1.1) or streams (HTTP/2), one at a time.
      const http = { ...options.http, prefetchPages: false, ...(faults ? { keepObject: faults.keep } : {}) };
      const read = httpListWatch(kc, target(namespace), withRandom(http, options.random));
      const listWatch = takingTurns(faults ? faults.reporting(filtered(read, () => true)) : read, turns);
      return informerFromSource(resource, reflectorFor(listWatch, resource, own), own);
    });
    const latest: (InformerState<T> | undefined)[] = informers.map(() => undefined);
    // No namespace: nothing to list, and nothing to wait for.
    if (informers.length === 0) subscriber.next({ type: 'replace', items: [], resourceVersion: '' });
    let all = false;
    let lastRV = '';
    // Out of file descriptors: every namespace's request fails alike, so it is said once (and once more after the sync).
    let outOfDescriptors = false;
    const report = (error: InformerError) => {
      if (!isOutOfDescriptors(error)) return subscriber.next({ type: 'error', error });
      if (outOfDescriptors) return;
      outOfDescriptors = true;
      subscriber.next({ type: 'error', error: descriptorsError(error, turns.counts.capacity) });
    };
    const forward = (state: InformerState<T>) => {
      for (const error of state.errors) report(error);
      if (state.resourceVersion !== '') lastRV = state.resourceVersion;
      if (!all) return;
      if (state.step === 'watch') return subscriber.next({ type: 'watch', resourceVersion: state.resourceVersion });
      if (state.step === 'bookmark') return subscriber.next({ type: 'bookmark', resourceVersion: state.resourceVersion });
      for (const event of state.events) {
        const resourceVersion = event.object.metadata.resourceVersion ?? lastRV;
        if (event.type === 'added') subscriber.next({ type: 'added', object: event.object, resourceVersion });
        else if (event.type === 'updated') subscriber.next({ type: 'modified', object: event.object, resourceVersion });
        else if (!event.finalStateUnknown) subscriber.next({ type: 'deleted', object: event.object, resourceVersion });
        else {
          // A deletion the namespace's relist noticed: a tombstone for the merged view too, as a single namespace's.
          const missed: MissedDeletion<T> = { type: 'deleted', object: event.object, resourceVersion, finalStateUnknown: true };
          subscriber.next(missed);
        }
      }
    };
    const listing: (ListProgress | undefined)[] = informers.map(() => undefined);
    informers.forEach((informer, i) =>
      subscription.add(
        informer.listProgress$.subscribe((progress) => {
          if (all) return onListProgress(progress);
          listing[i] = progress;
          let pages = 0;
          let objects = 0;
          for (let j = 0; j < informers.length; j++) {
            pages += listing[j]?.pages ?? 0;
            objects += latest[j]?.synced === true ? latest[j]!.store.size : (listing[j]?.objects ?? 0);
          }
          onListProgress({ pages, objects });
        }),
      ),
    );
    informers.forEach((informer, i) => {
      let first = true;
      subscription.add(
        informer.state$.subscribe({
          next: (state) => {
            latest[i] = state;
            // The replayed state's errors and events were delivered before we joined (none: we are its only subscriber).
            if (first) return void (first = false);
            forward(state);
            if (!all && latest.every((s) => s?.synced === true)) {
              all = true;
              outOfDescriptors = false;
              const items = latest.flatMap((s) => s!.store.list());
              subscriber.next({ type: 'replace', items, resourceVersion: lastRV });
            }
          },
          error: (error: unknown) => subscriber.error(error),
        }),
      );
    });
    return subscription;
  });
}

/** One namespace's `EMFILE`, said for all of them: what ran out, what was done about it, what to do. */
function descriptorsError(error: InformerError, capacity: number): InformerError {
  const message =
    'too many open files: this process reached its limit of file descriptors (ulimit -n); ' +
    `the namespaces' lists and watches take turns at fewer connections until it passes (at most ${capacity}, one fewer at each such failure, ` +
    'a step back up after each quiet minute, longer while it recurs; ' +
    `the same failure in other namespaces is not repeated until they sync): ${error.message}`;
  return new InformerError(error.reason, message, { phase: error.phase, cause: error });
}
