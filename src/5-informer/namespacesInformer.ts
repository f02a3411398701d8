import { Observable, Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../0-model/objects.ts';
import type { Resource } from '../0-model/resources.ts';
import { http2StreamCapacity, knownProtocol } from '../1-transport/http/agents.ts';
import { httpListWatch } from '../1-transport/httpTransport.ts';
import type { KeepObject } from '../1-transport/lazyJson.ts';
import { filtered, isListWatch, type ListWatch } from '../1-transport/listWatch.ts';
import { namespaceOfKey, rawKey } from '../0-model/keys.ts';
import type { ListProgress, SourceEvent } from '../2-source/sourceEvent.ts';
import type { Store } from '../4-store/store.ts';
import { informerFromSource, reflectorFor, toListWatch, withRandom, type Informer, type InformerOptions } from './informerFromSource.ts';
import { forward } from '../util/forward.ts';
import { keepObjectFaults } from './keepObjectFaults.ts';
import { ConnectionTurns, DEFAULT_HTTP1_CONNECTIONS, http2Turns, takingTurns } from './connectionTurns.ts';
import { initialMergeState, namespacesMergeStep, type NamespacesMergeConfig, type NamespacesMergeInput } from './namespacesMergeStep.ts';
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
  // How it reads them as it starts (a refused cluster-wide list then falls back: namespacesMergeStep).
  const initialMode = isListWatch(source) || namespaces.length > threshold ? 'wide' : 'perNamespace';
  const inner: InformerOptions<T> = { ...options, namespace: undefined, namespaces: undefined };

  // Its list progress: the cluster-wide list's pages, or the namespaces' lists' summed (docs/api.md, `listProgress$`).
  const config: NamespacesMergeConfig = { members: new Set(namespaces).size, fallsBack: !isListWatch(source) };
  const sourceOf = (cache: () => Store<T>, onListProgress: (progress: ListProgress) => void) =>
    new Observable<SourceEvent<T>>((subscriber) => {
      const subscription = new Subscription();
      let state = initialMergeState<T>(config, initialMode);
      let turns: ConnectionTurns | undefined = undefined;
      let wide: Subscription | undefined = undefined;
      // The fallback asked for while the cluster-wide subscription was being made: carried out once it is ours to end.
      let fallBackPending = false;
      const perNamespace = () => {
        turns = turnsFor(source as KubeConfig, inner);
        const informers = namespaceInformers(source as KubeConfig, resource, namespaces, target, inner, turns);
        informers.forEach((informer, member) =>
          subscription.add(informer.listProgress$.subscribe((progress) => run({ type: 'progress', member, progress }))),
        );
        informers.forEach((informer, member) => {
          let replayed = true;
          subscription.add(
            informer.state$.subscribe({
              next: (state) => {
                const input = { type: 'state', member, state, replayed } as const;
                replayed = false;
                run(input);
              },
              error: (error: unknown) => subscriber.error(error),
            }),
          );
        });
      };
      const run = (input: NamespacesMergeInput<T>) => {
        const [next, effects] = namespacesMergeStep(config, state, input);
        state = next;
        for (const effect of effects) {
          switch (effect.type) {
            case 'emit':
              subscriber.next(effect.event);
              break;
            case 'outOfDescriptors':
              subscriber.next({ type: 'error', error: descriptorsError(effect.error, turns?.counts.capacity ?? 0) });
              break;
            case 'progress':
              onListProgress(effect.progress);
              break;
            case 'fallBack':
              if (wide === undefined) fallBackPending = true;
              else {
                wide.unsubscribe();
                perNamespace();
              }
          }
        }
      };
      run({ type: 'start' });
      if (state.mode === 'perNamespace') {
        perNamespace();
        return subscription;
      }
      wide = reflectorFor(
        clusterWide(),
        resource,
        inner,
      )(cache, onListProgress).subscribe(forward(subscriber, (event) => run({ type: 'wide', event })));
      subscription.add(wide);
      if (fallBackPending) {
        wide.unsubscribe();
        perNamespace();
      }
      return subscription;
    });
  return informerFromSource(resource, sourceOf, inner);
}

/**
 * One informer per namespace underneath an informer over several (its cache is what a relist of that namespace is
 * compared with); `namespacesMergeStep` merges them.
 */
function namespaceInformers<T extends KubeObject>(
  kc: KubeConfig,
  resource: Resource<T>,
  namespaces: readonly string[],
  target: (namespace: string) => Parameters<typeof httpListWatch>[1],
  options: InformerOptions<T>,
  turns: ConnectionTurns,
): Informer<T>[] {
  // Their faults reach the outer informer's errors$ (and its report while nobody listens), not their own.
  const own: InformerOptions<T> = { ...options, resyncPeriod: 0, indexers: {}, delivery: undefined, reportUnobservedErrors: false };
  // Every request takes a turn: over HTTP/2, while everything fits, it is granted at once and nobody waits.
  return [...new Set(namespaces)].map((namespace) => {
    // A keepObject of the caller's: what it rejects is left out, as informer() does (not cached as a skeleton);
    // what it throws is reported.
    const faults = options.http?.keepObject !== undefined ? keepObjectFaults(options.http.keepObject) : undefined;
    // No page asked ahead: the turns count each read's connections (HTTP/1.1) or streams (HTTP/2), one at a time.
    const http = { ...options.http, prefetchPages: false, ...(faults ? { keepObject: faults.keep } : {}) };
    const read = httpListWatch(kc, target(namespace), withRandom(http, options.random));
    const listWatch = takingTurns(faults ? faults.reporting(filtered(read, () => true)) : read, turns);
    return informerFromSource(resource, reflectorFor(listWatch, resource, own), own);
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
