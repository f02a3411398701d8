import { firstValueFrom, Subscription } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  DEFAULT_MAX_NAMESPACE_WATCHES,
  DiscoveryError,
  InformerError,
  ResourceNameError,
  discover,
  dynamicInformerFactory,
  informerFactory,
  isWatchable,
  keyOf,
  resolveResource,
  resourceName,
  toResource,
  watchableResources,
  type DiscoveredResource,
  type Discovery,
  type Compression,
  type DynamicEvent,
  type ErrorReason,
  type Informer,
  type KubeObject,
} from '../index.ts';
import { serve } from '../metrics/index.ts';
import { count, jsonLine, messageOf } from './format.ts';
import { prettyLine, toRecord } from './record.ts';
import { isSecretResource, secretRedactor } from './redact.ts';
import type { EventSink } from './webhook.ts';
import { BYTE_LIMIT_FLAGS, type ByteLimitOption } from './args.ts';

export type { EventRecord } from './record.ts';

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
  /** Byte limits of the transport and of discovery (`--max-list-bytes` …); the library's defaults otherwise. */
  readonly byteLimits?: Readonly<Partial<Record<ByteLimitOption, number>>>;
  /** What the informers and discovery ask the server for (`--compression`); the library's default (gzip) otherwise. */
  readonly compression?: Compression;
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

/** How often a long list's progress is shown, at most. */
const LIST_PROGRESS_MS = 5_000;

/** Before a resource has synced, these mean retrying cannot help: kubectl gives up on them too. */
const PERMANENT: ReadonlySet<ErrorReason> = new Set<ErrorReason>(['BadRequest', 'Forbidden', 'NotFound']);

/** Says what a connection or discovery failure means in words (one line, no control characters), and how long the server asked us to wait. */
export function explain(error: unknown, server: string, secret = false): string {
  const sentence = explainReason(error, displayServer(server), secret);
  const wait = error instanceof InformerError ? error.retryAfterSeconds : undefined;
  // The informer waits at least this long before its next attempt: a 5-minute silence should not look like a hang.
  return wait !== undefined && wait > 0 ? `${sentence} (the server asked to wait ${Math.ceil(wait)} s before retrying)` : sentence;
}

function explainReason(error: unknown, server: string, secret: boolean): string {
  if (error instanceof InformerError) {
    // A parser's message may quote the text it choked on: for Secrets, that is Secret data.
    if (secret && (error.reason === 'MalformedLine' || error.reason === 'ValidationFailed'))
      return `${error.reason} (details withheld: they may quote Secret data)`;
    switch (error.reason) {
      case 'NetworkError':
        return networkFailure(messageOf(error), server);
      case 'Unauthorized':
        return `the API server at ${server} rejected our credentials (401 Unauthorized): check the token or certificate in the kubeconfig`;
      case 'Forbidden':
        return `forbidden (403): ${messageOf(error)}`;
      case 'NotFound':
        return `not found (404): ${messageOf(error)}`;
      case 'BadRequest':
        return `the server rejected the request (400 Bad Request): ${messageOf(error)}`;
      case 'Config':
        // client-node's words for an http:// server: say what to change.
        if (/HTTP protocol is not allowed when skipTLSVerify/.test(error.message)) {
          const fix = 'which the Kubernetes client refuses unless the cluster sets insecure-skip-tls-verify: true';
          return `bad kubeconfig: the server ${server} is plain http://, ${fix}`;
        }
        return `bad kubeconfig: ${messageOf(error)}`;
      case 'ResponseTooLarge':
      case 'ListTooLong':
      case 'MalformedLine':
        return `${error.reason}: ${messageOf(error)}${raiseWith(error.message)}`;
      default:
        return `${error.reason}: ${messageOf(error)}`;
    }
  }
  return messageOf(error);
}

const FLAG_OF = Object.fromEntries(Object.entries(BYTE_LIMIT_FLAGS).map(([flag, option]) => [option, flag])) as Record<
  ByteLimitOption,
  string
>;

/** The flag that raises the limit a message names (`… (option maxListBytes)` → ` (raise it with --max-list-bytes, e.g. 512Mi)`). */
function raiseWith(message: string): string {
  const option = /\boption (max\w+Bytes)\b/.exec(message)?.[1];
  const flag = option === undefined ? undefined : FLAG_OF[option as ByteLimitOption];
  const example = flag === 'max-list-total-bytes' ? '2Gi' : '512Mi';
  return flag === undefined ? '' : ` (raise the limit with --${flag} SIZE, e.g. --${flag} ${example})`;
}

/** A certificate the transport or Node refused: the server answered, we did not trust it. */
const CERTIFICATE =
  /is not trusted by|is not valid now|does not name the host|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|certificate/i;
/** Any other failure of the TLS handshake (a protocol or cipher mismatch, a plain-HTTP server on an https:// URL). */
const TLS = /\bTLS\b|\bSSL\b|ERR_SSL_|EPROTO|handshake/i;

/** A connection failure in words: a certificate or TLS problem is said to be one, not "cannot reach". */
function networkFailure(message: string, server: string): string {
  if (CERTIFICATE.test(message)) return `cannot trust the API server at ${server} (TLS certificate): ${tlsAdvice(message)}`;
  if (TLS.test(message)) return `the TLS handshake with the API server at ${server} failed: ${message}`;
  return `cannot reach the API server at ${server}: ${message}`;
}

/** Node's hint for an unknown CA (`try running Node.js with --use-system-ca`) points the wrong way for a cluster: its CA is in the kubeconfig. */
function tlsAdvice(message: string): string {
  const hinted = /;? ?if the root CA is installed locally, try running Node\.js with --use-system-ca/;
  const certificate = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|certificate/i;
  // The transport already words its TLS verification failures (tlsFailure); only a raw Node message gets advice here.
  if (/is not trusted by|is not valid now|does not name the host/.test(message)) return message;
  if (!hinted.test(message) && !certificate.test(message)) return message;
  const advice =
    "the server's certificate is not signed by the certificate authority the kubeconfig names: " +
    'check certificate-authority or certificate-authority-data';
  return `${message.replace(hinted, '')} (${advice})`;
}

/** One group version discovery could not read (with --all, `following`: what is watched of it goes on, the dynamic factory keeps it). */
function discoveryFailed(groupVersion: string, error: unknown, server: string, following = false): string {
  const after = following ? ' (what is watched of it goes on; resources it adds wait until discovery reads it)' : '';
  return `! discovery of ${groupVersion} failed: ${explain(error, server)}${after}`;
}

/**
 * The kubeconfig's server URL as messages show it: scheme, host, port and path;
 * never its userinfo (`https://user:password@…`), query or fragment.
 */
export function displayServer(server: string): string {
  if (server.startsWith('(')) return server;
  try {
    const url = new URL(server);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return "(the kubeconfig's server, which is not a valid URL)";
  }
}

/** Resolves the resources to watch, or says clearly why it cannot (an ambiguous name: which groups serve it). */
export function resolveResources(found: Discovery, command: Pick<WatchCommand, 'resources' | 'all'>): DiscoveredResource[] {
  if (command.all) return watchableResources(found);
  if (command.resources.length === 0) throw new UsageError('name at least one resource (e.g. `pods deployments`) or use --all');
  const chosen: DiscoveredResource[] = [];
  for (const name of command.resources.flatMap((n) => n.split(',')).filter(Boolean)) {
    const resource = resolveResource(found, name);
    if (resource instanceof ResourceNameError) throw new UsageError(resource.message);
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

interface Watched {
  /** The resource's name, as records show it. */
  readonly name: string;
  /** What progress and problems call it: `pods`, or `pods in shop` when several namespaces are watched. */
  readonly label: string;
  readonly secret: boolean;
  /** The informer, and what this command subscribed to it (both replaced when a dynamic watch hands over a new one). */
  informer: Informer<KubeObject>;
  subscription: Subscription;
  count: number;
  synced: boolean;
  /**
   * With --all: what was seen of a resource being removed (a watch that ended at once, a 404) since its last event.
   * Each is reported from its second time on: the first may only mean its CRD is being deleted, which ends it with one line of its own.
   */
  readonly hints: Set<ErrorReason>;
  /** With --all: takes the resource out of its dynamic watch, so that nothing keeps its informer running. */
  readonly drop?: () => void;
}

/**
 * `rx-informer watch`: discovers the resources, starts one informer per
 * resource and namespace (per resource only, beyond 16 namespaces) from one factory, shows sync progress, then prints
 * one line per change (with a compact diff for updates) and hands it to the
 * sinks. Each event is shown in isolation: one that cannot be formatted or
 * sent costs one line on stderr, nothing more.
 *
 * With --all the informers come from a dynamic factory: a resource served
 * later (a CRD installed while it runs) is watched from then on
 * (`+ watching …`), and one whose CRD is deleted or that is no longer served
 * is let go with one line (`- stopped watching …`) and no more requests.
 */
export async function watchCommand(kc: KubeConfig, command: WatchCommand, terminal: Terminal): Promise<Watching> {
  const server = kc.getCurrentCluster()?.server ?? '(no server)';
  let discovered: Discovery;
  const limits = command.byteLimits ?? {};
  const compression = command.compression !== undefined ? { compression: command.compression } : {};
  const discoveryOptions = {
    ...(limits.maxDocumentBytes !== undefined ? { maxDocumentBytes: limits.maxDocumentBytes } : {}),
    ...(limits.maxErrorBodyBytes !== undefined ? { maxErrorBodyBytes: limits.maxErrorBodyBytes } : {}),
    ...compression,
  };
  try {
    discovered = await firstValueFrom(discover(kc, discoveryOptions));
  } catch (error) {
    throw new UsageError(explain(error, server));
  }
  // With --all the dynamic factory reports discovery's failures (on errors$), those of its first discovery too.
  if (!command.all) for (const failure of discovered.failures) terminal.err(discoveryFailed(failure.groupVersion, failure.error, server));
  const chosen = resolveResources(discovered, command);
  if (chosen.length === 0) throw new UsageError('no resource to watch');

  const utc = command.utc === true;
  const redact = command.showSecretValues ? undefined : secretRedactor();
  const http = { ...limits, ...compression };
  const factory = informerFactory(kc, Object.keys(http).length > 0 ? { http } : {});
  const asked = command.namespaces?.length ? [...new Set(command.namespaces)] : [];
  // Many namespaces: one informer per resource over all of them (not one connection or stream each).
  const scopes: readonly Scope[] =
    asked.length > DEFAULT_MAX_NAMESPACE_WATCHES
      ? [{ namespaces: asked, label: `${asked.length} namespaces` }]
      : asked.length > 0
        ? asked.map((namespace) => ({ namespace, label: namespace }))
        : [{ label: '' }];
  const selectors = { labelSelector: command.labelSelector, fieldSelector: command.fieldSelector };
  const labelOf = (d: DiscoveredResource, scope: Scope) =>
    d.namespaced && asked.length > 1 ? `${resourceName(d)} in ${scope.label}` : resourceName(d);
  /** Every resource watched so far (with --all, ended ones too). */
  const watched: Watched[] = [];

  const now = terminal.now ?? (() => new Date());
  const started = Date.now();
  let allSynced = false;
  let resolveSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => (resolveSynced = resolve));
  let resolveFailed: (sentence: string) => void = () => undefined;
  const failed = new Promise<string>((resolve) => (resolveFailed = resolve));
  /** The resources watched now. */
  const live = new Set<Watched>();

  const showProgress = () => {
    const all = [...live];
    const pending = all.filter((w) => !w.synced).map((w) => w.label);
    const objects = all.reduce((n, w) => n + w.count, 0);
    const waiting = pending.length ? ` (waiting for ${pending.slice(0, 4).join(', ')}${pending.length > 4 ? ', …' : ''})` : '';
    return `syncing ${all.length - pending.length}/${count(all.length, 'resource')}, ${count(objects, 'object')}${waiting}`;
  };
  const ticker = terminal.status ? setInterval(() => !allSynced && terminal.status?.(showProgress()), 200) : undefined;

  const checkAllSynced = () => {
    if (allSynced || live.size === 0 || ![...live].every((w) => w.synced)) return;
    allSynced = true;
    const total = [...live].reduce((n, w) => n + w.count, 0);
    if (terminal.status) {
      terminal.status('');
      const counts = [...live].filter((w) => w.count > 0).map((w) => `${w.label} ${w.count}`);
      if (counts.length) terminal.err(`listed: ${counts.join(', ')}`);
    }
    terminal.err(
      `synced ${count(live.size, 'resource')}, ${count(total, 'object')} in ${Date.now() - started} ms; watching for changes (Ctrl-C to stop)`,
    );
    resolveSynced();
  };

  /** A resource that may not be listed is left out; the watch ends only when none is left. */
  const giveUp = (w: Watched, error: InformerError) => {
    w.subscription.unsubscribe();
    live.delete(w);
    w.drop?.();
    if (error.reason === 'BadRequest') return resolveFailed(`cannot watch ${w.label}: ${explain(error, server, w.secret)}`);
    if (live.size === 0) {
      if (watched.length === 1) return resolveFailed(`cannot watch ${w.label}: ${explain(error, server, w.secret)}`);
      terminal.err(`! not watching ${w.label}: ${explain(error, server, w.secret)}`);
      return resolveFailed(`none of the ${count(watched.length, 'resource')} can be watched`);
    }
    terminal.err(`! not watching ${w.label}: ${explain(error, server, w.secret)}`);
    checkAllSynced();
  };

  const sinks = command.sinks ?? [];
  const show = (w: Watched, event: Parameters<typeof toRecord>[1]) => {
    if (event.isInInitialList) return;
    try {
      const at = now();
      const r = toRecord(w.name, event, at, {
        utc,
        fields: command.fields,
        ignore: command.ignore,
        ...(redact && w.secret ? { redact } : {}),
      });
      if (!r) return;
      const line = prettyLine(r, at, utc);
      terminal.out(command.output === 'json' ? jsonLine(r) : line);
      for (const sink of sinks) {
        try {
          sink.accept(r, line);
        } catch (error) {
          terminal.err(`! ${sink.label}: cannot send ${w.name} ${keyOf(event.object)}: ${messageOf(error)}`);
        }
      }
    } catch (error) {
      terminal.err(`! cannot show a change to ${w.name} ${keyOf(event.object)}: ${messageOf(error)}`);
    }
  };

  /** Subscribes to a resource's informer: sync progress, problems, one line per change. */
  const attach = (w: Watched) => {
    const subscription = new Subscription();
    w.subscription = subscription;
    subscription.add(
      w.informer.state$.subscribe((state) => {
        w.count = state.store.size;
        if (state.synced && !w.synced) {
          w.synced = true;
          // A resource that comes after the first sync has its own line, on a terminal too.
          if (!terminal.status || allSynced) terminal.err(`synced ${w.label}: ${count(state.store.size, 'object')}`);
          checkAllSynced();
        }
      }),
    );
    // A long list (the first or a relist): "listing pods: 120,000 objects so far", at most every LIST_PROGRESS_MS.
    let shownAt = 0;
    subscription.add(
      w.informer.listProgress$.subscribe(({ pages, objects }) => {
        const now = (terminal.now?.() ?? new Date()).getTime();
        if (pages === 1) shownAt = now;
        if (now - shownAt < LIST_PROGRESS_MS) return;
        shownAt = now;
        terminal.err(`listing ${w.label}: ${objects.toLocaleString('en-US')} objects so far`);
      }),
    );
    subscription.add(
      w.informer.errors$.subscribe((error) => {
        if (!w.synced && error.phase === 'list' && PERMANENT.has(error.reason)) return giveUp(w, error);
        if (w.drop && (error.reason === 'NotFound' || error.reason === 'VeryShortWatch') && !w.hints.has(error.reason))
          return void w.hints.add(error.reason);
        terminal.err(`! ${w.label}: ${explain(error, server, w.secret)}`);
      }),
    );
    subscription.add(
      w.informer.events$.subscribe((event) => {
        w.hints.clear();
        show(w, event);
      }),
    );
  };

  const watching = new Subscription();
  if (command.metricsPort !== undefined) {
    watching.add(
      serve(factory, { port: command.metricsPort }).subscribe({
        next: (s) => terminal.err(`serving /healthz, /readyz and /metrics on port ${s.port}`),
        error: (error: unknown) => terminal.err(`! cannot serve metrics on port ${command.metricsPort}: ${messageOf(error)}`),
      }),
    );
  }
  if (!command.all) {
    for (const d of chosen) {
      for (const scope of scopes) {
        const informer = factory.informer(toResource(d), { namespace: scope.namespace, namespaces: scope.namespaces, ...selectors });
        // A cluster-scoped resource is one informer whatever the namespace.
        if (watched.some((w) => w.informer === informer)) continue;
        watched.push({
          name: resourceName(d),
          label: labelOf(d, scope),
          secret: isSecretResource(d),
          informer,
          subscription: new Subscription(),
          count: 0,
          synced: false,
          hints: new Set(),
        });
      }
    }
    for (const w of watched) live.add(w);
    for (const w of watched) attach(w);
  } else {
    const dynamic = dynamicInformerFactory(kc, { factory, discovery: discoveryOptions });
    /** The resources each dynamic watch runs now, by label. */
    const byLabel = new Map<string, Watched>();
    const reported = new Set<string>();
    watching.add(
      dynamic.errors$.subscribe((error) => {
        // One group version: its resources are watched as before. The factory reports each discovery fault once while it lasts.
        if (error instanceof DiscoveryError && error.groupVersion !== undefined)
          return terminal.err(discoveryFailed(error.groupVersion, error, server, true));
        if (error instanceof DiscoveryError)
          return terminal.err(`! discovery failed; resources installed or removed from now on may go unnoticed: ${explain(error, server)}`);
        // The CRD watch retries (a 410 is routine): say it once per kind of fault.
        if (error.reason === 'Expired' || error.reason === 'Gone' || reported.has(error.reason)) return;
        reported.add(error.reason);
        terminal.err(
          `! cannot watch CustomResourceDefinitions; resources installed or removed from now on may go unnoticed: ${explain(error, server)}`,
        );
      }),
    );
    scopes.forEach((scope, i) => {
      // Cluster-scoped resources are watched once, by the first namespace's watch.
      const left = new Set<string>();
      const selection = (d: DiscoveredResource) => (i === 0 || d.namespaced) && !left.has(resourceName(d));
      let current: Subscription | undefined;
      const subscribe = () => {
        const previous = current;
        // Discovery replays its latest answer: the new watch hands over the same informers at once, then the old one lets go.
        current = dynamic
          .watch(selection, { namespace: scope.namespace, namespaces: scope.namespaces, ...selectors })
          .subscribe((event) => onDynamic(event, scope, drop));
        watching.add(current);
        if (previous) {
          previous.unsubscribe();
          watching.remove(previous);
        }
      };
      const drop = (name: string) => {
        left.add(name);
        subscribe();
      };
      subscribe();
    });

    function onDynamic(event: DynamicEvent<KubeObject>, scope: Scope, drop: (name: string) => void): void {
      if (event.type === 'unresolved') return;
      const name = resourceName(event.resource);
      const label = labelOf(event.resource, scope);
      const w = byLabel.get(label);
      if (event.type === 'started') {
        if (w) {
          // The same resource from a dynamic watch that replaced its predecessor: carry on with the new informer.
          w.subscription.unsubscribe();
          w.informer = event.informer;
          attach(w);
          return;
        }
        const added: Watched = {
          name,
          label,
          secret: isSecretResource(event.resource),
          informer: event.informer,
          subscription: new Subscription(),
          count: 0,
          synced: false,
          hints: new Set(),
          drop: () => {
            byLabel.delete(label);
            drop(name);
          },
        };
        watched.push(added);
        live.add(added);
        byLabel.set(label, added);
        if (allSynced) terminal.err(`+ watching ${label} (new resource)`);
        attach(added);
        return;
      }
      if (!w || w.informer !== event.informer) return;
      w.subscription.unsubscribe();
      live.delete(w);
      byLabel.delete(label);
      terminal.err(`- stopped watching ${label}: ${event.message}`);
      checkAllSynced();
    }
  }

  return {
    synced,
    failed,
    stop: () => {
      if (ticker) clearInterval(ticker);
      watching.unsubscribe();
      for (const w of watched) w.subscription.unsubscribe();
    },
  };
}
