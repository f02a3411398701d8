/**
 * A running informer against an emulator, with everything it emitted
 * recorded, for the targeted resilience tests.
 */
import type { Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  informer,
  type Informer,
  type InformerError,
  type InformerEvent,
  type InformerOptions,
  type KubeObject,
  type Resource,
  type Store,
} from '../../../src/index.ts';
import type { ApiServer, RequestRecord } from 'rx-informer-emulator';
import { until } from './probes.ts';

let informers = 0;

export interface Running<T extends KubeObject> {
  readonly informer: Informer<T>;
  readonly events: InformerEvent<T>[];
  readonly errors: InformerError[];
  readonly userAgent: string;
  /** The latest store (empty before the first). */
  store(): Store<T> | undefined;
  synced(): boolean;
  /** This informer's requests, in the server's log order. */
  requests(): RequestRecord[];
  watches(): RequestRecord[];
  lists(): RequestRecord[];
  stop(): void;
}

/** Starts an informer (a unique User-Agent tells its requests apart) and records what it emits. */
export function run<T extends KubeObject>(
  api: ApiServer,
  resource: Resource<T>,
  options: InformerOptions<T> = {},
  kubeConfig: KubeConfig = api.kubeConfig,
): Running<T> {
  const userAgent = `rx-informer-resilience-live/${++informers}`;
  const cache = informer(kubeConfig, resource, { ...options, http: { ...options.http, userAgent } });
  const events: InformerEvent<T>[] = [];
  const errors: InformerError[] = [];
  let store: Store<T> | undefined;
  let synced = false;
  const subscriptions: Subscription[] = [
    cache.errors$.subscribe((e) => errors.push(e)),
    cache.events$.subscribe((e) => events.push(e)),
    cache.store$.subscribe((s) => (store = s)),
    cache.synced$.subscribe((s) => (synced = s)),
  ];
  const requests = () => api.requests.filter((r) => r.userAgent === userAgent);
  return {
    informer: cache,
    events,
    errors,
    userAgent,
    store: () => store,
    synced: () => synced,
    requests,
    watches: () => requests().filter((r) => r.watch),
    lists: () => requests().filter((r) => !r.watch),
    stop: () => subscriptions.forEach((s) => s.unsubscribe()),
  };
}

/** Waits until `check` holds; throws, saying what was awaited, after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  if (!(await until(check, timeoutMs))) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** The store's `key@resourceVersion`s, sorted. */
export function contents(store: Store<KubeObject> | undefined): string[] {
  return (store?.list() ?? [])
    .map((o) => `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}@${o.metadata.resourceVersion}`)
    .sort();
}

/** The server's `key@resourceVersion`s for a resource, sorted. */
export function serverContents(api: ApiServer, resource: string, namespace?: string): string[] {
  return api
    .list(resource, namespace)
    .map((o) => `${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name}@${o.metadata?.resourceVersion}`)
    .sort();
}

/** Waits until the informer's store holds exactly what the server has. */
export async function converged(
  api: ApiServer,
  live: Running<KubeObject>,
  resource: string,
  namespace?: string,
  timeoutMs = 5000,
): Promise<void> {
  await waitFor(
    'the store to match the server',
    () => contents(live.store()).join() === serverContents(api, resource, namespace).join(),
    timeoutMs,
  ).catch((error: unknown) => {
    throw new Error(
      `${(error as Error).message}\nstore:  ${contents(live.store()).join(' ')}\nserver: ${serverContents(api, resource, namespace).join(' ')}`,
    );
  });
}

/** A ConfigMap body for the emulator's `create`. */
export function cm(
  name: string,
  namespace = 'default',
  data: Record<string, string> = {},
): { metadata: { name: string; namespace: string }; data: Record<string, string> } {
  return { metadata: { name, namespace }, data };
}
