import { firstValueFrom, map, merge, Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import type { KubeObject } from '../0-model/objects.ts';
import { resourceName } from '../0-model/resources.ts';
import { discover, findResource, isWatchable, toResource, type DiscoveredResource } from '../1-transport/discovery.ts';
import type { InformerEvent } from '../4-store/informerEvent.ts';
import { informerFactory } from '../5-informer/factory.ts';
import type { Informer } from '../5-informer/informer.ts';
import { diffObjects, formatChanges, type Change } from './diff.ts';
import { WebhookSender } from './webhook.ts';

export interface WatchCommand {
  readonly resources: readonly string[];
  readonly all: boolean;
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly output: 'pretty' | 'json';
  readonly webhook?: string;
}

/** Where the command writes: stdout for events, stderr for progress and problems. */
export interface Terminal {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Rewrites the current status line (a TTY); without it, progress is printed line by line. */
  readonly status?: (line: string) => void;
  readonly now?: () => Date;
}

/** A problem the user can act on; the CLI prints its message, not a stack trace, and exits 1. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** One line per event, for `--output json` and webhooks. */
export interface EventRecord {
  readonly time: string;
  readonly type: 'ADDED' | 'UPDATED' | 'DELETED';
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  readonly resourceVersion?: string;
  readonly diff?: readonly Change[];
  readonly finalStateUnknown?: boolean;
  readonly object?: unknown;
}

/** Says what a connection or discovery failure means in words. */
export function explain(error: unknown, server: string): string {
  if (error instanceof InformerError) {
    switch (error.reason) {
      case 'NetworkError':
        return `cannot reach the API server at ${server}: ${error.message}`;
      case 'Unauthorized':
        return `the API server at ${server} rejected our credentials (401 Unauthorized): check the token or certificate in the kubeconfig`;
      case 'Forbidden':
        return `forbidden (403): ${error.message}`;
      case 'Config':
        return `bad kubeconfig: ${error.message}`;
      default:
        return `${error.reason}: ${error.message}`;
    }
  }
  return error instanceof Error ? error.message : String(error);
}

function record(resource: string, event: InformerEvent<KubeObject>, now: Date): EventRecord | undefined {
  const { metadata } = event.object;
  const base = {
    time: now.toISOString(),
    resource,
    ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
    name: metadata.name,
    ...(metadata.resourceVersion ? { resourceVersion: metadata.resourceVersion } : {}),
  };
  switch (event.type) {
    case 'added':
      return { ...base, type: 'ADDED', object: event.object };
    case 'updated': {
      if (event.resync) return undefined;
      const diff = diffObjects(event.oldObject, event.object);
      return diff.length === 0 ? undefined : { ...base, type: 'UPDATED', diff };
    }
    case 'deleted':
      return { ...base, type: 'DELETED', ...(event.finalStateUnknown ? { finalStateUnknown: true } : {}) };
  }
}

function pretty(r: EventRecord): string {
  const time = r.time.slice(11, 19);
  const key = r.namespace ? `${r.namespace}/${r.name}` : r.name;
  const head = `${time} ${r.type.padEnd(7)} ${r.resource} ${key}`;
  if (r.type === 'UPDATED' && r.diff) return `${head}  ${formatChanges(r.diff)}`;
  if (r.type === 'DELETED' && r.finalStateUnknown) return `${head}  (deletion seen on relist; final state unknown)`;
  return head;
}

/** Resolves the resources to watch, or says clearly why it cannot. */
export function resolveResources(found: readonly DiscoveredResource[], command: Pick<WatchCommand, 'resources' | 'all'>): DiscoveredResource[] {
  if (command.all) return found.filter(isWatchable);
  if (command.resources.length === 0) throw new UsageError('name at least one resource (e.g. `pods deployments`) or use --all');
  const chosen: DiscoveredResource[] = [];
  for (const name of command.resources.flatMap((n) => n.split(',')).filter(Boolean)) {
    const resource = findResource(found, name);
    if (!resource) throw new UsageError(`the server doesn't have a resource type "${name}"`);
    if (!isWatchable(resource)) throw new UsageError(`${resourceName(resource)} cannot be listed and watched (verbs: ${resource.verbs.join(', ')})`);
    if (!chosen.includes(resource)) chosen.push(resource);
  }
  return chosen;
}

/**
 * `rx-informer watch`: discovers the resources, starts one informer per
 * resource from one factory, shows sync progress, then prints one line per
 * change (with a compact diff for updates). Returns a handle to stop it.
 */
export async function watchCommand(kc: KubeConfig, command: WatchCommand, terminal: Terminal): Promise<{ stop: () => Promise<void>; synced: Promise<void> }> {
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  let discovered;
  try {
    discovered = await firstValueFrom(discover(kc));
  } catch (error) {
    throw new UsageError(explain(error, server));
  }
  for (const failure of discovered.failures) terminal.err(`! discovery of ${failure.groupVersion} failed: ${failure.error.message}`);
  const chosen = resolveResources(discovered.resources, command);
  if (chosen.length === 0) throw new UsageError('no resource to watch');

  const webhook = command.webhook ? new WebhookSender(command.webhook, { onFailure: (message) => terminal.err(`! ${message}`) }) : undefined;
  const factory = informerFactory(kc);
  const informers: { name: string; informer: Informer<KubeObject> }[] = chosen.map((d) => ({
    name: resourceName(d),
    informer: factory.informer(toResource(d), {
      namespace: command.namespace,
      labelSelector: command.labelSelector,
      fieldSelector: command.fieldSelector,
    }),
  }));
  const now = terminal.now ?? (() => new Date());
  const subscriptions = new Subscription();
  const started = Date.now();

  // Progress: per resource, objects listed and whether it has synced.
  const progress = new Map(informers.map(({ name }) => [name, { count: 0, synced: false }]));
  let allSynced = false;
  let resolveSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (resolveSynced = resolve));
  const showProgress = () => {
    const done = [...progress.values()].filter((p) => p.synced).length;
    const objects = [...progress.values()].reduce((n, p) => n + p.count, 0);
    const pending = [...progress.entries()].filter(([, p]) => !p.synced).map(([n]) => n);
    return `syncing ${done}/${progress.size} resources, ${objects} objects${pending.length ? ` (waiting for ${pending.slice(0, 4).join(', ')}${pending.length > 4 ? ', …' : ''})` : ''}`;
  };
  const ticker = terminal.status ? setInterval(() => !allSynced && terminal.status?.(showProgress()), 200) : undefined;

  for (const { name, informer } of informers) {
    subscriptions.add(
      informer.state$.subscribe((state) => {
        const entry = progress.get(name)!;
        entry.count = state.store.size;
        if (state.synced && !entry.synced) {
          entry.synced = true;
          if (!terminal.status) terminal.err(`synced ${name}: ${state.store.size} objects`);
          if (!allSynced && [...progress.values()].every((p) => p.synced)) {
            allSynced = true;
            const total = [...progress.values()].reduce((n, p) => n + p.count, 0);
            if (terminal.status) {
              terminal.status('');
              const counts = [...progress.entries()].filter(([, p]) => p.count > 0).map(([n, p]) => `${n} ${p.count}`);
              if (counts.length) terminal.err(`listed: ${counts.join(', ')}`);
            }
            terminal.err(`synced ${progress.size} resources, ${total} objects in ${Date.now() - started} ms; watching for changes (Ctrl-C to stop)`);
            resolveSynced();
          }
        }
      }),
    );
    subscriptions.add(informer.errors$.subscribe((error) => terminal.err(`! ${name}: ${explain(error, server)}`)));
  }

  const events$ = merge(...informers.map(({ name, informer }) => informer.events$.pipe(map((event) => ({ name, event })))));
  subscriptions.add(
    events$.subscribe(({ name, event }) => {
      if (event.isInInitialList) return;
      const r = record(name, event, now());
      if (!r) return;
      terminal.out(command.output === 'json' ? JSON.stringify(r) : pretty(r));
      webhook?.send(r);
    }),
  );

  return {
    synced,
    stop: async () => {
      if (ticker) clearInterval(ticker);
      subscriptions.unsubscribe();
      await webhook?.close();
    },
  };
}
