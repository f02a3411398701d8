import type { IncomingMessage, ServerResponse } from 'node:http';
import { probeServer } from './probeServer.ts';
import { Observable, Subscription, VirtualTimeScheduler, of, type SchedulerLike } from 'rxjs';
import { monotonicScheduler } from '../util/monotonicNow.ts';
import type { KubeObject } from '../0-model/objects.ts';
import type { Informer } from '../5-informer/informer.ts';
import { readiness, type InformerHealth, type StalenessOptions } from '../5-informer/health.ts';
import { informerMetrics$, type InformerMetrics } from './informerMetrics.ts';
import { OTHER_RESOURCES, resourceLabels } from './aggregate.ts';
import { resourceName } from '../0-model/resources.ts';
import { handlerFamilies, healthFamilies, informerFamilies, toPrometheusText, transportFamilies, type MetricFamily } from './prometheus.ts';
import { transportBytes } from '../1-transport/httpTransport.ts';

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
 * - `GET /healthz`: 200 `ok` while the process answers.
 * - `GET /readyz`: 200 when every informer has synced and none is stale (its requests failing in a row for
 *   longer than `staleAfterMs`, default 120 s: `isStale`; silent longer than `maxSilenceMs`, if set),
 *   else 503; the body has one line per resource either way (its informers together), escaped.
 * - `GET /metrics`: the Prometheus text format: informer metrics (lists, watches, events,
 *   errors, store objects, approximate bytes, last resourceVersion), the `on()` handlers' queue
 *   depth and duration, health gauges, and
 *   `families()`.
 *
 * `/metrics` has one series per label set: informers of one resource are summed, or their worst
 * shown; it is rendered at most once per `METRICS_CACHE_MS` (1 s). The server is bounded against slow
 * and hostile clients (`PROBE_SERVER_LIMITS`: headers within 10 s, one answer at a time on a connection,
 * each written within 10 s, no body read, at most 64 connections, the one idle the longest closed to make
 * room for a new one, at most 100 requests on one).
 *
 * Cold: subscribing starts the server (and the informers: it subscribes their health and
 * metrics) and emits where it listens; unsubscribing closes it. A failure to listen
 * (port taken) is the Observable's error.
 *
 * ```
 * serve(factory, { port: 8080 }):  ----s------------   s: { host, port, url } once listening
 * ```
 */
export function serve(informers: Served, options: ServeOptions = {}): Observable<Serving> {
  return new Observable<Serving>((subscriber) => {
    const scheduler = options.scheduler ?? monotonicScheduler;
    const cacheMs = options.metricsCacheMs ?? (scheduler instanceof VirtualTimeScheduler ? 0 : METRICS_CACHE_MS);
    const subscription = new Subscription();
    const metrics = new LatestMetrics(scheduler);
    let healths: readonly InformerHealth[] = [];
    subscription.add(
      servedHealth$(informers).subscribe((h) => {
        healths = h;
        metrics.track(Array.isArray(informers) ? informers : (informers as Exclude<Served, readonly unknown[]>).informers());
      }),
    );
    subscription.add(() => metrics.close());
    // Its bytes, encoded once: each answer writes the same Buffer.
    let rendered: { readonly body: Buffer; readonly at: number; readonly generation: number } | undefined;
    const metricsBody = (from: Answering): Buffer => {
      const age = from.now - (rendered?.at ?? Number.NaN);
      if (rendered && age >= 0 && age < cacheMs && rendered.generation === metrics.generation) return rendered.body;
      rendered = { body: Buffer.from(renderMetrics(from)), at: from.now, generation: metrics.generation };
      return rendered.body;
    };
    subscription.add(() => (rendered = undefined));

    const server = probeServer((req, res) => {
      try {
        route(req, res, { healths, metrics, metricsBody, now: scheduler.now(), options });
      } catch (error) {
        if (!res.headersSent) respond(res, 500, `${error instanceof Error ? error.message : String(error)}\n`.replace(/[\r]/g, ''));
        else res.destroy();
      }
    });
    server.on('error', (error) => subscriber.error(error));
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

/** The health of what is served: a factory's own, or the list's combined (once each has one). */
function servedHealth$(informers: Served): Observable<readonly InformerHealth[]> {
  if (!Array.isArray(informers)) return (informers as Exclude<Served, readonly unknown[]>).health$;
  return informers.length === 0 ? of([]) : combineHealth(informers);
}

/** The latest metrics of each informer served, one subscription each, following the informers as they come and go. */
class LatestMetrics {
  private readonly scheduler: SchedulerLike;
  private readonly entries = new Map<Informer<KubeObject>, { latest?: InformerMetrics; subscription: Subscription }>();
  /** Counts changes to the informers followed: a `/metrics` rendered before one is not served again. */
  generation = 0;

  constructor(scheduler: SchedulerLike) {
    this.scheduler = scheduler;
  }

  /** Follows these informers: drops those gone, subscribes to those new. */
  track(informers: readonly Informer<KubeObject>[]): void {
    const now = new Set(informers);
    for (const [i, m] of this.entries) {
      if (now.has(i)) continue;
      m.subscription.unsubscribe();
      this.entries.delete(i);
      this.generation++;
    }
    for (const i of now) {
      if (this.entries.has(i)) continue;
      const entry: { latest?: InformerMetrics; subscription: Subscription } = { subscription: new Subscription() };
      this.entries.set(i, entry);
      this.generation++;
      entry.subscription.add(informerMetrics$(i, this.scheduler).subscribe((m) => (entry.latest = m)));
    }
  }

  informers(): IterableIterator<Informer<KubeObject>> {
    return this.entries.keys();
  }

  /** The latest metrics of each informer that has some. */
  snapshots(): InformerMetrics[] {
    return [...this.entries.values()].flatMap((m) => (m.latest ? [m.latest] : []));
  }

  close(): void {
    for (const m of this.entries.values()) m.subscription.unsubscribe();
    this.entries.clear();
  }
}

function respond(res: ServerResponse, status: number, body: string | Buffer, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** What a request is answered from: the health and metrics as they stand, at `now` on the health's clock. */
interface Answering {
  readonly healths: readonly InformerHealth[];
  readonly metrics: LatestMetrics;
  /** `/metrics`' body: {@link renderMetrics}, or its last render within `METRICS_CACHE_MS`. */
  readonly metricsBody: (from: Answering) => Buffer;
  readonly now: number;
  readonly options: ServeOptions;
}

/** Answers one request (see {@link serve}'s routes). */
function route(req: IncomingMessage, res: ServerResponse, from: Answering): void {
  // No route reads a body: one a client sends is left unread and the connection closed with the answer (probeServer).
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') return respond(res, 405, 'method not allowed\n');
  switch (path) {
    case '/healthz':
    case '/livez':
      return respond(res, 200, 'ok\n');
    case '/readyz': {
      const { ready, lines } = readyzLines(from.healths, from.now, from.options);
      return respond(res, ready ? 200 : 503, `${[...lines, ready ? 'ok' : 'not ready'].join('\n')}\n`);
    }
    case '/metrics':
      return respond(res, 200, from.metricsBody(from), 'text/plain; version=0.0.4; charset=utf-8');
    default:
      return respond(res, 404, 'not found: /healthz, /readyz, /metrics\n');
  }
}

/** `/metrics`' body: every family, `families()`' last (a comment in its place when it throws). */
function renderMetrics({ healths, metrics, now, options }: Answering): string {
  let extra: readonly MetricFamily[] = [];
  let failure = '';
  try {
    extra = options.families?.() ?? [];
  } catch (error) {
    failure = `# families() failed: ${(error instanceof Error ? error.message : String(error)).replace(/[\r\n]/g, ' ')}\n`;
  }
  const snapshots = metrics.snapshots();
  const handlers = [...metrics.informers()].flatMap((i) => {
    // Every Informer has it; an object cast to one (plain JavaScript) may not, and costs no scrape.
    const m = i.handlerMetrics?.();
    return m ? [{ name: resourceName(i.resource), ...m }] : [];
  });
  // At most maxResourceSeries names of their own, the same in every family; the rest are one, `_other`.
  const names = [...snapshots, ...healths, ...handlers].map((m) => m.name);
  const { label, others, max } = resourceLabels(names, options.maxResourceSeries);
  const relabel = <T extends { readonly name: string }>(m: T): T => (label(m.name) === m.name ? m : { ...m, name: OTHER_RESOURCES });
  const text = toPrometheusText([
    ...informerFamilies(snapshots.map(relabel)),
    ...handlerFamilies(handlers.map(relabel)),
    ...healthFamilies(healths.map(relabel), now),
    ...transportFamilies(transportBytes()),
    ...extra,
  ]);
  const capped =
    others > 0
      ? `# ${others} resources past maxResourceSeries (${max}) are summed, or their worst shown, under name="${OTHER_RESOURCES}"\n`
      : '';
  return failure + capped + text;
}

function combineHealth(informers: readonly Informer<KubeObject>[]): Observable<readonly InformerHealth[]> {
  return new Observable<readonly InformerHealth[]>((subscriber) => {
    const latest: (InformerHealth | undefined)[] = informers.map(() => undefined);
    const subscription = new Subscription();
    informers.forEach((i, n) =>
      subscription.add(
        i.health$.subscribe((h) => {
          latest[n] = h;
          if (latest.every((x) => x !== undefined)) subscriber.next(latest as InformerHealth[]);
        }),
      ),
    );
    return subscription;
  });
}

/**
 * `/readyz`'s lines: one per resource name (its informers for several namespaces together: ready when all are),
 * each escaped to one line (a name from discovery may hold any character; a newline must not forge a line).
 */
export function readyzLines(
  healths: readonly InformerHealth[],
  now: number,
  options: StalenessOptions,
): { readonly ready: boolean; readonly lines: readonly string[] } {
  const byName = new Map<string, InformerHealth[]>();
  for (const h of healths) byName.set(h.name, [...(byName.get(h.name) ?? []), h]);
  let ready = true;
  const lines = [...byName].map(([name, group]) => {
    const check = readiness(group, now, options);
    ready &&= check.ready;
    return escapeLine(check.ready ? `[+]${name} ok` : `[-]${[...new Set(check.reasons)].join('; ')}`);
  });
  return { ready, lines };
}

/** Control characters (a line feed, a carriage return, …) and backslashes as escapes: one line, nothing forged. */
function escapeLine(line: string): string {
  return line.replace(/[\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\n' ? '\\n' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
