import type { IncomingMessage, ServerResponse } from 'node:http';
import { probeServer } from './probeServer.ts';
import { Observable, Subscription, VirtualTimeScheduler, type SchedulerLike } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import type { KubeObject } from '../0-model/objects.ts';
import type { Informer } from '../5-informer/informer.ts';
import { readiness, type InformerHealth, type StalenessOptions } from '../5-informer/health.ts';
import { informerMetrics$, type InformerMetrics } from './informerMetrics.ts';
import {
  OTHER_RESOURCES,
  ResourceSeries,
  groupByName,
  mergeHandlers,
  mergeMetrics,
  withLeftHandlers,
  withLeftMetrics,
} from './aggregate.ts';
import type { LeftCounters } from './aggregate.ts';
import { resourceName } from '../0-model/resources.ts';
import { InformerError, describeThrown } from '../0-model/errors.ts';
import { unobservedReporter } from '../5-informer/unobservedErrors.ts';
import type { HandlerMetrics } from '../5-informer/handleEvents.ts';
import {
  cappedLabel,
  handlerFamilies,
  healthFamilies,
  informerFamilies,
  toPrometheusText,
  transportFamilies,
  type MetricFamily,
} from './prometheus.ts';
import { transportBytes } from '../1-transport/httpTransport.ts';
import { checkOptionNames } from '../util/optionNames.ts';

/** What {@link serve} serves, and where. */
export interface ServeOptions extends StalenessOptions {
  /** TCP port; 0 (default) picks a free one (see `Serving.port`). */
  readonly port?: number;
  /**
   * Address to listen on. Default: every interface (the kubelet probes, and Prometheus scrapes, the pod's
   * IP). `127.0.0.1` serves this machine only (the CLI's `--metrics-address`).
   */
  readonly host?: string;
  /** More families for `/metrics`, read at each render of it, at most once a second (work queues, controllers, your own). */
  readonly families?: () => readonly MetricFamily[];
  /**
   * Resources with series of their own on `/metrics` (the `name` label): the first this many served keep theirs,
   * the rest are summed, or their worst shown, under `name="_other"`, with a `#` comment saying how many. Default
   * 200 (`DEFAULT_MAX_RESOURCE_SERIES`): a cluster's CustomResourceDefinitions (`--all`, the dynamic factory)
   * must not grow the series without bound. `Infinity`: no cap.
   */
  readonly maxResourceSeries?: number;
  /** The clock that ages health (default `monotonicScheduler`: a monotonic clock, src/util/monotonicNow.ts); the informers' own scheduler in tests. */
  readonly scheduler?: SchedulerLike;
  /**
   * How long (ms, on `scheduler`) a rendered `/metrics` is served again ({@link METRICS_CACHE_MS}). Default 1 000, but 0
   * when `scheduler` is a virtual one (a `TestScheduler`): a test's clock may stand still between two scrapes, and the
   * second must see what changed. 0: every scrape renders.
   */
  readonly metricsCacheMs?: number;
}

/** Every option of {@link serve}, from its type (a new one is an error here until listed): `prot: 9090` served elsewhere. */
const SERVE_OPTION_NAMES = Object.keys({
  port: true,
  host: true,
  families: true,
  maxResourceSeries: true,
  scheduler: true,
  metricsCacheMs: true,
  staleAfterMs: true,
  maxSilenceMs: true,
} satisfies Record<keyof ServeOptions, true>);

/** Where {@link serve} listens. */
export interface Serving {
  readonly host: string;
  readonly port: number;
  /** `http://host:port`, for logs and tests. */
  readonly url: string;
}

/**
 * How long (ms, on the health's clock: `ServeOptions.scheduler`) a rendered `/metrics` is served again: scrapes
 * within it of a render get that render's text, so 64 scrapers at once cost one render, and a scrape sees a change
 * made at `t` from `t + METRICS_CACHE_MS` on at the latest. A clock that goes back renders afresh, and so does an
 * informer served or forgotten (rare: a resource discovered or gone), at once. Prometheus
 * scrapes every 15–60 s; an age on it (`informer_silent_seconds`, …) may be this much behind.
 */
export const METRICS_CACHE_MS = 1_000;

/** Informers to serve: a list, or a factory (whose informers made later are served too). */
export type Served =
  | readonly Informer<KubeObject>[]
  | { informers(): readonly Informer<KubeObject>[]; readonly health$: Observable<readonly InformerHealth[]> };

/**
 * An HTTP server (node:http, no framework) for probes and scrapes, as
 * controller-runtime's manager serves them:
 *
 * - `GET /healthz`, `GET /livez`: 200 `ok` while the process answers.
 * - `GET /readyz`: 200 when every informer has synced and none is stale (its requests failing in a row for
 *   longer than `staleAfterMs`, default 120 s: `isStale`; silent longer than `maxSilenceMs`, if set),
 *   else 503; the body has one line per resource either way (its informers together), escaped. An informer whose
 *   streams err is kept, stopped (`[-]pods: stopped: <why>`): the server goes on.
 * - `GET /metrics`: the Prometheus text format: informer metrics (lists, watches, events,
 *   errors, store objects, approximate bytes, last resourceVersion), the `on()` handlers' queue
 *   depth and duration, health gauges, and
 *   `families()`.
 * - Another method: 405 with `Allow: GET, HEAD`; another path: 404.
 *
 * `/metrics` has one series per label set: informers of one resource are summed, or their worst
 * shown, and one that leaves the served set leaves its counters on its series (a counter never goes down); it is
 * rendered at most once per `METRICS_CACHE_MS` (1 s). The server is bounded against slow
 * and hostile clients (`PROBE_SERVER_LIMITS`: headers within 10 s, one answer at a time on a connection,
 * each written within 10 s, no body read, at most 64 connections, the one idle the longest closed to make
 * room for a new one, at most 100 requests on one).
 *
 * Cold: subscribing starts the server (and the informers: it subscribes their health and
 * metrics) and emits where it listens; unsubscribing closes it. A failure to listen
 * (port taken) is the Observable's error; a failed accept (EMFILE, ENFILE: out of file descriptors for a while) is
 * not: Node's server listens on, so serve() warns (`process.emitWarning`, type `RxInformerWarning`, code
 * `NetworkError`, at most once per 5 minutes) and goes on.
 *
 * ```
 * serve(factory, { port: 8080 }):  ----s------------   s: { host, port, url } once listening
 * ```
 */
export function serve(informers: Served, options: ServeOptions = {}): Observable<Serving> {
  checkOptionNames('serve', options, SERVE_OPTION_NAMES);
  return new Observable<Serving>((subscriber) => {
    const scheduler = options.scheduler ?? monotonicScheduler;
    const cacheMs = options.metricsCacheMs ?? (scheduler instanceof VirtualTimeScheduler ? 0 : METRICS_CACHE_MS);
    const subscription = new Subscription();
    const following = new Following(scheduler, options.maxResourceSeries);
    subscription.add(() => following.close());
    // A factory's health$ says when its set of informers changes. Should it fail (an informer's health$ erred: that
    // one is reported stopped on /readyz), the set is read again at each request instead, and the server goes on.
    let readAtRequests = false;
    const factory = Array.isArray(informers) ? undefined : (informers as Exclude<Served, readonly unknown[]>);
    if (factory === undefined) following.track(informers as readonly Informer<KubeObject>[]);
    else
      subscription.add(
        factory.health$.subscribe({
          next: () => following.track(factory.informers()),
          error: () => {
            readAtRequests = true;
            following.track(factory.informers());
          },
        }),
      );
    // Its bytes, encoded once: each answer writes the same Buffer.
    let rendered: { readonly body: Buffer; readonly at: number; readonly generation: number } | undefined;
    const metricsBody = (from: Answering): Buffer => {
      const age = from.now - (rendered?.at ?? Number.NaN);
      if (rendered && age >= 0 && age < cacheMs && rendered.generation === following.generation) return rendered.body;
      rendered = { body: Buffer.from(renderMetrics(from)), at: from.now, generation: following.generation };
      return rendered.body;
    };
    subscription.add(() => (rendered = undefined));

    const server = probeServer((req, res) => {
      try {
        if (readAtRequests && factory) following.track(factory.informers());
        route(req, res, { following, metricsBody, now: scheduler.now(), options });
      } catch (error) {
        if (!res.headersSent) respond(res, 500, `${error instanceof Error ? error.message : String(error)}\n`.replace(/[\r]/g, ''));
        else res.destroy();
      }
    });
    // A failed accept (EMFILE, ENFILE: Node's net server emits it and listens on) is transient: a warning, rate
    // limited as an informer's unobserved faults, and the server goes on. Any other error (port taken) is serve()'s.
    const acceptFaults = unobservedReporter('serve()', () => scheduler.now(), true);
    server.on('error', (error: NodeJS.ErrnoException) => {
      if (error.syscall !== 'accept') return subscriber.error(error);
      acceptFaults.report(new InformerError('NetworkError', `accept failed, the server listens on: ${error.code ?? error.message}`));
    });
    server.listen(options.port ?? 0, options.host, () => {
      const address = server.address();
      if (address === null || typeof address === 'string')
        return subscriber.error(new Error(`unexpected listening address ${String(address)}`));
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      subscriber.next({ host: address.address, port: address.port, url: `http://${host}:${address.port}` });
    });
    subscription.add(() => {
      server.close();
      server.closeAllConnections();
    });
    return subscription;
  });
}

/** An informer's health as served: `stopped` says why its health$ ended in an error (it is not ready again). */
export type ServedHealth = InformerHealth & { readonly stopped?: string };

/** One informer served: its label on /metrics, its latest metrics and health, one subscription each. */
interface Followed {
  readonly name: string;
  readonly label: string;
  metrics?: InformerMetrics;
  health?: ServedHealth;
  readonly subscription: Subscription;
}

/**
 * The informers served, followed as they come and go: their latest metrics and health, their labels on /metrics
 * (`ResourceSeries`: given once, what a leaving informer counted kept on its label). An informer whose streams err
 * (its state$ ends: a bug, a plain-JavaScript informer) is kept, stopped, with what it last said: the server goes on.
 */
class Following {
  private readonly scheduler: SchedulerLike;
  private readonly entries = new Map<Informer<KubeObject>, Followed>();
  readonly series: ResourceSeries;
  /** Counts changes to the informers followed: a `/metrics` rendered before one is not served again. */
  generation = 0;

  constructor(scheduler: SchedulerLike, maxResourceSeries: number | undefined) {
    this.scheduler = scheduler;
    this.series = new ResourceSeries(maxResourceSeries);
  }

  /** Follows these informers: drops those gone (their counters left on their label), subscribes to those new. */
  track(informers: readonly Informer<KubeObject>[]): void {
    const now = new Set(informers);
    for (const [i, f] of this.entries) {
      if (now.has(i)) continue;
      f.subscription.unsubscribe();
      this.entries.delete(i);
      this.series.leave(f.name, leftCounters(f.metrics, handlerMetricsOf(i)));
      this.generation++;
    }
    for (const i of now) {
      if (this.entries.has(i)) continue;
      const name = resourceName(i.resource);
      const f: Followed = { name, label: this.series.join(name), subscription: new Subscription() };
      this.entries.set(i, f);
      this.generation++;
      const stop = (error: unknown) => this.stop(f, error);
      f.subscription.add(i.health$.subscribe({ next: (h) => (f.health = f.health?.stopped ? f.health : h), error: stop }));
      f.subscription.add(informerMetrics$(i, this.scheduler).subscribe({ next: (m) => (f.metrics = m), error: stop }));
    }
  }

  /** An informer's streams erred: stopped, not watching, its last metrics kept. */
  private stop(f: Followed, error: unknown): void {
    if (f.health?.stopped !== undefined) return;
    const reason = error instanceof InformerError ? `${error.reason}: ${error.message}` : describeThrown(error);
    const at = this.scheduler.now();
    const last = f.health ?? healthOfNone(f.name, at);
    f.health = { ...last, watching: false, since: last.watching ? at : last.since, stopped: reason };
    this.generation++;
  }

  /** Each informer with its label and latest metrics and health. */
  followed(): IterableIterator<[Informer<KubeObject>, Followed]> {
    return this.entries.entries();
  }

  healths(): ServedHealth[] {
    return [...this.entries.values()].flatMap((f) => (f.health ? [f.health] : []));
  }

  close(): void {
    for (const f of this.entries.values()) f.subscription.unsubscribe();
    this.entries.clear();
  }
}

/** Every Informer has `handlerMetrics`; an object cast to one (plain JavaScript) may not, and costs no scrape. */
const handlerMetricsOf = (i: Informer<KubeObject>): HandlerMetrics | undefined => i.handlerMetrics?.();

function leftCounters(m: InformerMetrics | undefined, h: HandlerMetrics | undefined): LeftCounters | undefined {
  if (m === undefined && h === undefined) return undefined;
  return {
    eventsTotal: m?.eventsTotal ?? { added: 0, updated: 0, deleted: 0 },
    listsTotal: m?.listsTotal ?? 0,
    watchesTotal: m?.watchesTotal ?? 0,
    shortWatchesTotal: m?.shortWatchesTotal ?? 0,
    errorsTotal: m?.errorsTotal ?? {},
    handlerSeconds: h?.durationSeconds ?? { count: 0, sumSeconds: 0 },
  };
}

/** The health of an informer that erred before it said anything. */
function healthOfNone(name: string, at: number): InformerHealth {
  return {
    name,
    watching: false,
    since: at,
    synced: false,
    lastEventAt: undefined,
    lastBookmarkAt: undefined,
    eventAgeMs: undefined,
    bookmarkAgeMs: undefined,
    silentMs: 0,
    consecutiveFailures: 0,
    failingSince: undefined,
    lastFailure: undefined,
    resourceVersion: '',
    at,
  };
}

function respond(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  type = 'text/plain; charset=utf-8',
  more: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body), ...more });
  res.end(body);
}

/** What a request is answered from: the informers followed as they stand, at `now` on the health's clock. */
interface Answering {
  readonly following: Following;
  /** `/metrics`' body: {@link renderMetrics}, or its last render within `METRICS_CACHE_MS`. */
  readonly metricsBody: (from: Answering) => Buffer;
  readonly now: number;
  readonly options: ServeOptions;
}

/** The paths served (the 404's body lists them). */
const ROUTES = ['/healthz', '/livez', '/readyz', '/metrics'] as const;

/** Answers one request (see {@link serve}'s routes). */
function route(req: IncomingMessage, res: ServerResponse, from: Answering): void {
  // No route reads a body: one a client sends is left unread and the connection closed with the answer (probeServer).
  const path = (req.url ?? '/').split('?')[0];
  // RFC 9110 §15.5.6: a 405 names the methods the resource has.
  if (req.method !== 'GET' && req.method !== 'HEAD') return respond(res, 405, 'method not allowed\n', undefined, { Allow: 'GET, HEAD' });
  switch (path) {
    case '/healthz':
    case '/livez':
      return respond(res, 200, 'ok\n');
    case '/readyz': {
      const { ready, lines } = readyzLines(from.following.healths(), from.now, from.options);
      return respond(res, ready ? 200 : 503, `${[...lines, ready ? 'ok' : 'not ready'].join('\n')}\n`);
    }
    case '/metrics':
      return respond(res, 200, from.metricsBody(from), 'text/plain; version=0.0.4; charset=utf-8');
    default:
      return respond(res, 404, `not found: ${ROUTES.join(', ')}\n`);
  }
}

/** `/metrics`' body: every family, `families()`' last (a comment in its place when it throws). */
function renderMetrics({ following, now, options }: Answering): string {
  let extra: readonly MetricFamily[] = [];
  let failure = '';
  try {
    extra = options.families?.() ?? [];
  } catch (error) {
    failure = `# families() failed: ${(error instanceof Error ? error.message : String(error)).replace(/[\r\n]/g, ' ')}\n`;
  }
  // Each informer under its label (at most maxResourceSeries names of their own, the same in every family; the rest
  // are one, `_other`), and each label's sums with what the informers gone from it counted.
  const snapshots: InformerMetrics[] = [];
  const handlers: (HandlerMetrics & { readonly name: string })[] = [];
  const healths: InformerHealth[] = [];
  for (const [i, f] of following.followed()) {
    if (f.metrics) snapshots.push(f.label === f.metrics.name ? f.metrics : { ...f.metrics, name: f.label });
    const h = handlerMetricsOf(i);
    if (h) handlers.push({ name: f.label, ...h });
    if (f.health) healths.push(f.label === f.health.name ? f.health : { ...f.health, name: f.label });
  }
  const series = following.series;
  const text = toPrometheusText([
    ...informerFamilies(groupByName(snapshots, mergeMetrics).map((m) => withLeftMetrics(m, series.offsetOf(m.name)))),
    ...handlerFamilies(groupByName(handlers, mergeHandlers).map((h) => withLeftHandlers(h, series.offsetOf(h.name)))),
    ...healthFamilies(healths, now),
    ...transportFamilies(transportBytes()),
    ...extra,
  ]);
  const capped =
    series.others > 0
      ? `# ${series.others} resources past maxResourceSeries (${series.max}) are summed, or their worst shown, under name="${OTHER_RESOURCES}"\n`
      : '';
  return failure + capped + text;
}

/**
 * The most bytes (UTF-8) of resource lines in a `/readyz` answer: ~5,000 resources' lines of ~50 characters. The names
 * come from a cluster (the dynamic factory's CRDs; a namespace per informer), so their count is the peer's; past this the
 * lines not shown are counted in one last line. (The kubelet reads only a probe body's first 10 KiB anyway.)
 */
export const MAX_READYZ_BYTES = 256 * 1024;

/**
 * `/readyz`'s lines: one per resource name (its informers for several namespaces together: ready when all are),
 * each escaped to one line (a name from discovery may hold any character; a newline must not forge a line) and then
 * cut as a `/metrics` label value is ({@link cappedLabel}: at most 1,024 characters, a hash of the whole at the end).
 * At most {@link MAX_READYZ_BYTES} of them: past it, the lines not ready are kept before those ready, and one more line
 * counts those left out. `ready` judges every resource, shown or not.
 */
export function readyzLines(
  healths: readonly ServedHealth[],
  now: number,
  options: StalenessOptions,
): { readonly ready: boolean; readonly lines: readonly string[] } {
  const byName = new Map<string, ServedHealth[]>();
  for (const h of healths) {
    const group = byName.get(h.name);
    if (group) group.push(h);
    else byName.set(h.name, [h]);
  }
  let ready = true;
  const judged = [...byName].map(([name, group]) => {
    const check = readiness(group, now, options);
    // An informer whose streams erred is never ready again: it says so, and why.
    const stopped = group.flatMap((h) => (h.stopped === undefined ? [] : [`${h.name}: stopped: ${h.stopped}`]));
    const reasons = [...stopped, ...check.reasons];
    ready &&= reasons.length === 0;
    const line = cappedLabel(escapeLine(reasons.length === 0 ? `[+]${name} ok` : `[-]${[...new Set(reasons)].join('; ')}`));
    return { ok: reasons.length === 0, line, bytes: Buffer.byteLength(line) + 1 };
  });
  let total = 0;
  for (const j of judged) total += j.bytes;
  if (total <= MAX_READYZ_BYTES) return { ready, lines: judged.map((j) => j.line) };
  // Over the budget: what is wrong first (in order), then what is well, while they fit.
  const shown = new Set<(typeof judged)[number]>();
  let used = 0;
  for (const j of [...judged.filter((x) => !x.ok), ...judged.filter((x) => x.ok)]) {
    if (used + j.bytes > MAX_READYZ_BYTES) break;
    shown.add(j);
    used += j.bytes;
  }
  const left = judged.filter((j) => !shown.has(j));
  const leftNotReady = left.filter((j) => !j.ok).length;
  const tail =
    `[${leftNotReady > 0 ? '-' : '+'}]${left.length} more resources not shown (${leftNotReady} of them not ready): ` +
    `/readyz is at most ${MAX_READYZ_BYTES} bytes`;
  return { ready, lines: [...judged.filter((j) => shown.has(j)).map((j) => j.line), tail] };
}

/** Control characters (a line feed, a carriage return, …) and backslashes as escapes: one line, nothing forged. */
function escapeLine(line: string): string {
  return line.replace(/[\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\n' ? '\\n' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
