import { firstValueFrom, Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_MAX_NAMESPACE_WATCHES, resourceName, type Compression, type Encoding } from '../pipeline.ts';
import {
  GroupDiscoveryFailedError,
  ResourceNameError,
  discover,
  dynamicInformerFactory,
  isWatchable,
  resolveResource,
  toResource,
  watchableResources,
  type DiscoveredResource,
  type Discovery,
  type DynamicEvent,
  type DynamicInformerFactory,
} from '../discovery/index.ts';
import { mayServe } from '../discovery/dynamicWatchStep.ts';
import { informerFactory, keyOf, type Informer, type InformerEvent, type KubeObject } from '../index.ts';
import { serve } from '../metrics/index.ts';
import { jsonLine, messageOf } from './format.ts';
import { prettyLine, secretRedaction, toRecord, type SecretRedaction } from './record.ts';
import { isSecretResource } from '../pipeline.ts';
import {
  NARROW_DEBOUNCE_MS,
  initialSession,
  step,
  type NewResource,
  type SessionConfig,
  type SessionEffect,
  type SessionInput,
  type SessionState,
} from './session.ts';
import type { EventSink } from './webhook.ts';
import { encodingOptions, type ByteLimitOption } from './args.ts';
import { credentialSource, discoveryFailed, explain } from './explain.ts';
import { ServedInformers } from './served.ts';
import { didYouMean } from './suggest.ts';
import { waitingOnPlugin } from './pluginWait.ts';
import { defaultNow } from '../util/monotonicNow.ts';

export type { EventRecord } from './record.ts';
export { displayServer, explain } from './explain.ts';

export interface WatchCommand {
  readonly resources: readonly string[];
  readonly all: boolean;
  /**
   * Empty: all namespaces. Several: one informer per namespace and resource; more than
   * `DEFAULT_MAX_NAMESPACE_WATCHES` (16): one informer per resource over all of them (one
   * cluster-wide watch filtered on the client, or one watch per namespace when that is Forbidden).
   */
  readonly namespaces?: readonly string[];
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly output: 'pretty' | 'json';
  /** Times in UTC instead of local time. */
  readonly utc?: boolean;
  /** Print and send Secret values in clear (default: redacted). */
  readonly showSecretValues?: boolean;
  readonly sinks?: readonly EventSink[];
  /** Field patterns for diffs: only these (`--fields`); also leave these out (`--ignore`). */
  readonly fields?: readonly string[];
  readonly ignore?: readonly string[];
  /** Serve /healthz, /readyz and /metrics on this port (`--metrics-port`). */
  readonly metricsPort?: number;
  /** Listen on this address only (`--metrics-address`); default: every interface, as in-cluster scraping needs. */
  readonly metricsAddress?: string;
  /** Byte limits of the transport and of discovery (`--max-list-bytes` …); the library's defaults otherwise. */
  readonly byteLimits?: Readonly<Partial<Record<ByteLimitOption, number>>>;
  /** What the informers and discovery ask the server for (`--compression`); the library's default (gzip) otherwise. */
  readonly compression?: Compression;
  /** The wire encoding of the informers' lists and watches (`--encoding`); the library's default (JSON) otherwise. */
  readonly encoding?: Encoding;
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

/** A running watch. */
export interface Watching {
  /** Resolves once every resource still watched has synced. */
  readonly synced: Promise<void>;
  /** Resolves (never rejects) with one sentence if the watch cannot go on: a 400, or no resource left that may be listed. */
  readonly failed: Promise<string>;
  /** Unsubscribes every informer (sinks are the caller's to close). */
  stop(): void;
}

/**
 * `; did you mean pods?` for a name no resource has, when one resource's name is close to it (its plural, singular,
 * kind, short names, or `plural.group`, as discovery gives them; kubectl gives no hint); else where to look.
 */
function resourceHint(found: Discovery, name: string): string {
  const meant = didYouMean(
    name,
    found.resources.map((r) => [r.plural, r.singular, r.kind, ...r.shortNames, ...(r.group ? [`${r.plural}.${r.group}`] : [])]),
  );
  return meant || NOT_SERVED_HINT;
}

/** The next step when no served name is close: a custom resource is served once its CRD is installed. */
const NOT_SERVED_HINT = ' (a custom resource is served once its CRD is installed; `kubectl api-resources` lists what the server has)';

/** Category members named in a hint, at most (`all` has about a dozen on a stock cluster). */
const MAX_CATEGORY_MEMBERS = 8;

/**
 * Why `name` (which discovery does not know) cannot be watched, and what to do. A group version discovery could not
 * read that may serve it: not "install its CRD" (it may well be installed), but the library's
 * `GroupDiscoveryFailedError`, as a dynamic watch says. A category (kubectl's `get all`): not resolved here (kubectl
 * expands it to a short list its authors chose, not "everything", which `--all` is), but named, with its members and `--all`.
 */
function unknownName(found: Discovery, name: string, unknown: ResourceNameError): string {
  const hiding = found.failures.filter((f) => mayServe(f.groupVersion, name));
  if (hiding.length > 0) return `${new GroupDiscoveryFailedError(name, hiding).message} (try again once it answers)`;
  const wanted = name.trim().toLowerCase();
  const members = watchableResources(found).filter((r) => r.categories.some((c) => c.toLowerCase() === wanted));
  if (members.length > 0 || wanted === 'all') {
    const named = members.slice(0, MAX_CATEGORY_MEMBERS).map((r) => r.plural);
    const more = members.length > MAX_CATEGORY_MEMBERS ? `, and ${members.length - MAX_CATEGORY_MEMBERS} more` : '';
    const list = named.length > 0 ? ` (${named.join(', ')}${more})` : '';
    return `"${name}" is a category of resources${list}, not a resource: name them, or use --all to watch every resource`;
  }
  return `${unknown.message}${resourceHint(found, name)}`;
}

/** Resolves the resources to watch, or says clearly why it cannot (an ambiguous name: which groups serve it). */
export function resolveResources(found: Discovery, command: Pick<WatchCommand, 'resources' | 'all'>): DiscoveredResource[] {
  if (command.all) return watchableResources(found);
  if (command.resources.length === 0) throw new UsageError('name at least one resource (e.g. `pods deployments`) or use --all');
  const chosen: DiscoveredResource[] = [];
  for (const name of command.resources.flatMap((n) => n.split(',')).filter(Boolean)) {
    const resource = resolveResource(found, name);
    if (resource instanceof ResourceNameError)
      throw new UsageError(resource.reason === 'Unknown' ? unknownName(found, name, resource) : resource.message);
    if (!isWatchable(resource))
      throw new UsageError(`${resourceName(resource)} cannot be listed and watched (verbs: ${resource.verbs.join(', ')})`);
    if (!chosen.includes(resource)) chosen.push(resource);
  }
  return chosen;
}

/** Where one informer per resource looks: one namespace, several, or (neither) all. */
interface Scope {
  readonly namespace?: string;
  readonly namespaces?: readonly string[];
  /** `shop`, or `1000 namespaces`. */
  readonly label: string;
}

/** The namespaces asked for, as scopes; `several`: labels say which namespace (`pods in shop`). */
function scopesOf(namespaces: readonly string[] | undefined): {
  readonly scopes: readonly Scope[];
  readonly several: boolean;
  readonly asked: number;
} {
  const asked = namespaces?.length ? [...new Set(namespaces)] : [];
  // Many namespaces: one informer per resource over all of them (not one connection or stream each).
  const scopes: readonly Scope[] =
    asked.length > DEFAULT_MAX_NAMESPACE_WATCHES
      ? [{ namespaces: asked, label: `${asked.length} namespaces` }]
      : asked.length > 0
        ? asked.map((namespace) => ({ namespace, label: namespace }))
        : [{ label: '' }];
  return { scopes, several: asked.length > 1, asked: asked.length };
}

type Watchable = Informer<KubeObject>;

/** What the session knows of a resource in a scope. */
function newResource(d: DiscoveredResource, scope: Scope, several: boolean, informer: Watchable): NewResource<Watchable> {
  const name = resourceName(d);
  const label = d.namespaced && several ? `${name} in ${scope.label}` : name;
  const namespace = d.namespaced && scope.namespace !== undefined ? { namespace: scope.namespace } : {};
  // Past 16 namespaces, the ones its informer reads (a 403 naming one of them is said as such: session.ts).
  const namespaces = d.namespaced && scope.namespaces !== undefined ? { namespaces: scope.namespaces } : {};
  return { name, label, secret: isSecretResource(d), informer, ...namespace, ...namespaces };
}

/** The options of discovery and of the informers' requests: byte limits, compression and encoding, when given. */
function requestOptions(command: WatchCommand) {
  const limits = command.byteLimits ?? {};
  const compression = command.compression !== undefined ? { compression: command.compression } : {};
  const discovery = {
    ...(limits.maxDocumentBytes !== undefined ? { maxDocumentBytes: limits.maxDocumentBytes } : {}),
    ...(limits.maxErrorBodyBytes !== undefined ? { maxErrorBodyBytes: limits.maxErrorBodyBytes } : {}),
    ...compression,
  };
  return { discovery, http: { ...limits, ...compression, ...encodingOptions(command.encoding) } };
}

/** How changes are shown and sent. */
interface ChangeView {
  readonly terminal: Terminal;
  readonly command: WatchCommand;
  readonly redact: SecretRedaction;
}

/** One line per change on stdout, and to every sink. A change that cannot be shown or sent costs one line on stderr, nothing more. */
function showChange(view: ChangeView, w: { readonly name: string; readonly secret: boolean }, event: InformerEvent<KubeObject>): void {
  if (event.isInInitialList) return;
  const { terminal, command } = view;
  const redact = view.redact(w.secret);
  try {
    const at = terminal.now?.() ?? new Date();
    const utc = command.utc === true;
    const r = toRecord(w.name, event, at, {
      utc,
      fields: command.fields,
      ignore: command.ignore,
      ...(redact ? { redact } : {}),
    });
    if (!r) return;
    const line = prettyLine(r, at, utc);
    terminal.out(command.output === 'json' ? jsonLine(r) : line);
    for (const sink of command.sinks ?? []) {
      try {
        sink.accept(r, line);
      } catch (error) {
        terminal.err(`! ${sink.label}: cannot send ${w.name} ${keyOf(event.object)}: ${messageOf(error)}`);
      }
    }
  } catch (error) {
    terminal.err(`! cannot show a change to ${w.name} ${keyOf(event.object)}: ${messageOf(error)}`);
  }
}

/**
 * The session's shell: feeds the informers' streams to {@link step} one input at a time (an input that
 * arrives while effects run, a state replayed on subscription say, waits its turn), and carries out the effects.
 */
class SessionShell {
  readonly synced: Promise<void>;
  readonly failed: Promise<string>;
  private state: SessionState<Watchable> = initialSession();
  /** Inputs waiting their turn, each with the informer it came from (an input of one since replaced is dropped). */
  private readonly queue: { readonly input: SessionInput<Watchable>; readonly from: Watchable | undefined }[] = [];
  private busy = false;
  private stopped = false;
  private readonly subscriptions = new Map<number, Subscription>();
  /** A `narrow` due per resource (session.ts, `narrowSoon`): one timer, restarted by each namespace refused. */
  private readonly narrowing = new Map<number, NodeJS.Timeout>();
  /** What the probe server serves: the informers attached now. */
  readonly served = new ServedInformers();
  private readonly ticker: NodeJS.Timeout | undefined;
  private readonly resolve: { synced: () => void; failed: (sentence: string) => void } = {
    synced: () => undefined,
    failed: () => undefined,
  };

  private readonly config: SessionConfig;
  private readonly view: ChangeView;
  /** With --all: takes a resource out of the dynamic watch of its scope. */
  private readonly exclude: (scope: number, name: string) => void;

  constructor(config: SessionConfig, view: ChangeView, exclude: (scope: number, name: string) => void) {
    this.config = config;
    this.view = view;
    this.exclude = exclude;
    this.synced = new Promise<void>((resolve) => (this.resolve.synced = resolve));
    this.failed = new Promise<string>((resolve) => (this.resolve.failed = resolve));
    this.ticker = config.tty ? setInterval(() => this.send({ type: 'tick' }), 200) : undefined;
  }

  /** `from`: the informer it comes from, when it is about one (it is dropped if that informer has been replaced meanwhile). */
  send(input: SessionInput<Watchable>, from?: Watchable): void {
    this.queue.push({ input, from });
    if (this.busy) return;
    this.busy = true;
    try {
      for (let next = this.queue.shift(); next !== undefined && !this.stopped; next = this.queue.shift()) {
        // Queued before an `attach` replaced its informer (a many-namespace informer narrowed): its 403s are the old informer's.
        if (next.from !== undefined && 'id' in next.input && this.state.resources[next.input.id]?.informer !== next.from) continue;
        const result = step(this.config, this.state, next.input, defaultNow());
        this.state = result.state;
        for (const effect of result.effects) this.run(effect);
      }
    } finally {
      this.busy = false;
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.ticker) clearInterval(this.ticker);
    for (const timer of this.narrowing.values()) clearTimeout(timer);
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
  }

  private run(effect: SessionEffect<Watchable>): void {
    const { terminal } = this.view;
    switch (effect.type) {
      case 'err':
        return terminal.err(effect.line);
      case 'status':
        return terminal.status?.(effect.line);
      case 'attach':
        return this.attach(effect.id, effect.informer);
      case 'detach':
        this.served.detach(effect.id);
        return this.subscriptions.get(effect.id)?.unsubscribe();
      case 'narrowSoon': {
        clearTimeout(this.narrowing.get(effect.id));
        const { id, informer } = effect;
        return void this.narrowing.set(
          id,
          setTimeout(() => this.send({ type: 'narrow', id, informer }), NARROW_DEBOUNCE_MS),
        );
      }
      case 'exclude':
        return this.exclude(effect.scope, effect.name);
      case 'synced':
        return this.resolve.synced();
      case 'failed':
        return this.resolve.failed(effect.sentence);
    }
  }

  /** Subscribes to a resource's informer (in place of its predecessor's): sync progress, problems, one line per change. */
  private attach(id: number, informer: Watchable): void {
    this.subscriptions.get(id)?.unsubscribe();
    const subscription = new Subscription();
    this.subscriptions.set(id, subscription);
    this.served.attach(id, informer);
    const { terminal } = this.view;
    subscription.add(informer.state$.subscribe((s) => this.send({ type: 'state', id, size: s.store.size, synced: s.synced }, informer)));
    subscription.add(
      informer.listProgress$.subscribe(({ pages, objects }) =>
        // A duration's clock (monotonic: a wall-clock step does not hide or repeat the line); `terminal.now` is a test's.
        this.send({ type: 'listProgress', id, pages, objects, at: terminal.now?.().getTime() ?? defaultNow() }, informer),
      ),
    );
    subscription.add(informer.errors$.subscribe((error) => this.send({ type: 'error', id, error }, informer)));
    subscription.add(
      informer.events$.subscribe((event) => {
        this.send({ type: 'event', id }, informer);
        const w = this.state.resources[id];
        if (w) showChange(this.view, w, event);
      }),
    );
  }
}

/**
 * With --all, one dynamic watch per scope. A resource given up is taken out by watching anew without it:
 * discovery replays its latest answer, so the new watch hands over the same informers at once, then the old one lets go.
 */
class DynamicScope {
  private readonly left = new Set<string>();
  private current = new Subscription();

  private readonly follow: (selection: (d: DiscoveredResource) => boolean) => Subscription;
  /** Cluster-scoped resources are watched once, by the first scope's watch. */
  private readonly first: boolean;

  constructor(follow: (selection: (d: DiscoveredResource) => boolean) => Subscription, first: boolean) {
    this.follow = follow;
    this.first = first;
  }

  start(): void {
    const previous = this.current;
    this.current = this.follow((d) => (this.first || d.namespaced) && !this.left.has(resourceName(d)));
    previous.unsubscribe();
  }

  exclude(name: string): void {
    this.left.add(name);
    this.start();
  }

  stop(): void {
    this.current.unsubscribe();
  }
}

/** With --all: the dynamic factory's resources and faults, as the session's inputs. */
function watchDynamically(
  dynamic: DynamicInformerFactory,
  scopes: ReturnType<typeof scopesOf>,
  selectors: Pick<WatchCommand, 'labelSelector' | 'fieldSelector'>,
  shell: SessionShell,
  followed: DynamicScope[],
): Subscription {
  const watching = new Subscription();
  watching.add(dynamic.errors$.subscribe((error) => shell.send({ type: 'factoryError', error })));
  const onEvent = (event: DynamicEvent<KubeObject>, i: number, scope: Scope) => {
    if (event.type === 'started')
      shell.send({ type: 'started', scope: i, resource: newResource(event.resource, scope, scopes.several, event.informer) });
    if (event.type === 'ended') {
      const { label } = newResource(event.resource, scope, scopes.several, event.informer);
      shell.send({ type: 'ended', label, informer: event.informer, message: event.message });
    }
  };
  const options = (scope: Scope) => ({ namespace: scope.namespace, namespaces: scope.namespaces, ...selectors });
  scopes.scopes.forEach((scope, i) => {
    const follow = (selection: (d: DiscoveredResource) => boolean) =>
      dynamic.watch(selection, options(scope)).subscribe((event) => onEvent(event, i, scope));
    followed.push(new DynamicScope(follow, i === 0));
    watching.add(() => followed[i]?.stop());
  });
  for (const scope of followed) scope.start();
  return watching;
}

/**
 * `--metrics-port` (and `--metrics-address`): /healthz, /readyz and /metrics for the resources watched now. Resolves
 * once the port is bound; a port that cannot be bound (in use, an address not of this host) is an error before
 * anything is watched: a pod's probes pointed at it would otherwise fail while the watch ran on.
 */
function serveMetrics(served: ServedInformers, port: number, address: string | undefined, terminal: Terminal): Promise<Subscription> {
  return new Promise((resolve, reject) => {
    const serving = new Subscription();
    let bound = false;
    serving.add(
      serve(served, { port, host: address }).subscribe({
        next: (s) => {
          terminal.err(`serving /healthz, /readyz and /metrics on ${address === undefined ? 'every interface' : s.host}, port ${s.port}`);
          bound = true;
          resolve(serving);
        },
        error: (error: unknown) => {
          const message = `cannot serve metrics on port ${port}${address === undefined ? '' : ` of ${address}`}: ${messageOf(error)}`;
          // Once bound, a later failure is one line and the watch goes on.
          if (bound) terminal.err(`! ${message}`);
          else reject(new Error(`${message} (choose another --metrics-port or --metrics-address)`));
        },
      }),
    );
  });
}

/**
 * Discovery, once (tried again only while an exec plugin is still running: pluginWait.ts): a failure here means there is
 * nothing to watch (a usage error, in words).
 */
async function discoverOnce(
  kc: KubeConfig,
  options: ReturnType<typeof requestOptions>['discovery'],
  server: string,
  terminal: Terminal,
): Promise<Discovery> {
  try {
    return await firstValueFrom(waitingOnPlugin(() => discover(kc, options), terminal.err));
  } catch (error) {
    throw new UsageError(explain(error, server, false, credentialSource(kc)));
  }
}

/**
 * `rx-informer watch`: discovers the resources, starts one informer per
 * resource and namespace (per resource only, beyond 16 namespaces) from one factory, shows sync progress, then prints
 * one line per change (with a compact diff for updates) and hands it to the
 * sinks. Each event is shown in isolation: one that cannot be formatted or
 * sent costs one line on stderr, nothing more. The rules are session.ts's `step`; this is their shell.
 *
 * With --all the informers come from a dynamic factory: a resource served
 * later (a CRD installed while it runs) is watched from then on
 * (`+ watching …`), and one whose CRD is deleted or that is no longer served
 * is let go with one line (`- stopped watching …`) and no more requests.
 */
export async function watchCommand(kc: KubeConfig, command: WatchCommand, terminal: Terminal): Promise<Watching> {
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  const requests = requestOptions(command);
  const discovered = await discoverOnce(kc, requests.discovery, server, terminal);
  // With --all the dynamic factory reports discovery's failures (on errors$), those of its first discovery too.
  if (!command.all) for (const failure of discovered.failures) terminal.err(discoveryFailed(failure.groupVersion, failure.error, server));
  const chosen = resolveResources(discovered, command);
  if (chosen.length === 0) throw new UsageError('no resource to watch');

  const factory = informerFactory(kc, Object.keys(requests.http).length > 0 ? { http: requests.http } : {});
  const scopes = scopesOf(command.namespaces);
  const selectors = { labelSelector: command.labelSelector, fieldSelector: command.fieldSelector };
  const view = { terminal, command, redact: secretRedaction(command.showSecretValues) };
  const followed: DynamicScope[] = [];
  const config = {
    server,
    credential: credentialSource(kc),
    tty: terminal.status !== undefined,
    startedAt: defaultNow(),
    namespaces: scopes.asked,
  };
  const shell = new SessionShell(config, view, (scope, name) => followed[scope]?.exclude(name));

  const watching = new Subscription();
  if (command.metricsPort !== undefined)
    watching.add(await serveMetrics(shell.served, command.metricsPort, command.metricsAddress, terminal));
  if (command.all) {
    watching.add(
      watchDynamically(dynamicInformerFactory(kc, { factory, discovery: requests.discovery }), scopes, selectors, shell, followed),
    );
  } else {
    const informer = (d: DiscoveredResource, scope: Scope) =>
      factory.informer(toResource(d), { namespace: scope.namespace, namespaces: scope.namespaces, ...selectors });
    // A cluster-scoped resource is one informer whatever the namespace: the session watches it once.
    const resources = chosen.flatMap((d) =>
      scopes.scopes.map((scope) => {
        const made = newResource(d, scope, scopes.several, informer(d, scope));
        if (!d.namespaced || scope.namespaces === undefined) return made;
        // One informer over many namespaces: a forbidden one is dropped (session.ts), as one informer per namespace drops it.
        const narrow = (namespaces: readonly string[]) => informer(d, { ...scope, namespaces });
        return { ...made, namespaces: scope.namespaces, narrow };
      }),
    );
    shell.send({ type: 'watch', resources });
  }
  return {
    synced: shell.synced,
    failed: shell.failed,
    stop: () => {
      watching.unsubscribe();
      shell.stop();
    },
  };
}
