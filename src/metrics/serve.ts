import type { IncomingMessage, ServerResponse } from 'node:http';
import { probeServer } from './probeServer.ts';
import { Observable, Subscription, asyncScheduler, of, type SchedulerLike } from 'rxjs';
import type { KubeObject } from '../0-model/objects.ts';
import type { Informer } from '../5-informer/informer.ts';
import { readiness, type InformerHealth, type StalenessOptions } from '../5-informer/health.ts';
import { informerMetrics$, type InformerMetrics } from './informerMetrics.ts';
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
  /** More families for `/metrics`, read at each scrape (work queues, controllers, your own). */
  readonly families?: () => readonly MetricFamily[];
  /** The clock that ages health (default `asyncScheduler`); the informers' own scheduler in tests. */
  readonly scheduler?: SchedulerLike;
}

/** Where {@link serve} listens. */
export interface Serving {
  readonly host: string;
  readonly port: number;
  /** `http://host:port`, for logs and tests. */
  readonly url: string;
}

/** Informers to serve: a list, or a factory (whose informers made later are served too). */
export type Served =
  | readonly Informer<KubeObject>[]
  | { informers(): readonly Informer<KubeObject>[]; readonly health$: Observable<readonly InformerHealth[]> };

/**
 * An HTTP server (node:http, no framework) for probes and scrapes, as
 * controller-runtime's manager serves them:
 *
 * - `GET /healthz`: 200 `ok` while the process answers.
 * - `GET /readyz`: 200 when every informer has synced and none is stale (not watching for
 *   longer than `staleAfterMs`, default 120 s; silent longer than `maxSilenceMs`, if set),
 *   else 503; the body has one line per resource either way (its informers together), escaped.
 * - `GET /metrics`: the Prometheus text format: informer metrics (lists, watches, events,
 *   errors, store objects, approximate bytes, last resourceVersion), the `on()` handlers' queue
 *   depth and duration, health gauges, and
 *   `families()`.
 *
 * `/metrics` has one series per label set: informers of one resource are summed, or their worst
 * shown. The server is bounded against slow and hostile clients (`PROBE_SERVER_LIMITS`: headers
 * within 10 s, each answer written within 10 s, no body read, at most 64 connections, the one idle the
 * longest closed to make room for a new one, at most 100 requests on one).
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
    const scheduler = options.scheduler ?? asyncScheduler;
    const subscription = new Subscription();
    const metrics = new Map<Informer<KubeObject>, { latest?: InformerMetrics; subscription: Subscription }>();
    let healths: readonly InformerHealth[] = [];

    const current = () => (Array.isArray(informers) ? informers : (informers as Exclude<Served, readonly unknown[]>).informers());
    const track = () => {
      const now = new Set(current());
      for (const [i, m] of metrics) {
        if (now.has(i)) continue;
        m.subscription.unsubscribe();
        metrics.delete(i);
      }
      for (const i of now) {
        if (metrics.has(i)) continue;
        const entry: { latest?: InformerMetrics; subscription: Subscription } = { subscription: new Subscription() };
        metrics.set(i, entry);
        entry.subscription.add(informerMetrics$(i, scheduler).subscribe((m) => (entry.latest = m)));
      }
    };
    const health$ = Array.isArray(informers)
      ? informers.length === 0
        ? of([])
        : combineHealth(informers)
      : (informers as Exclude<Served, readonly unknown[]>).health$;
    subscription.add(
      health$.subscribe((h) => {
        healths = h;
        track();
      }),
    );
    subscription.add(() => {
      for (const m of metrics.values()) m.subscription.unsubscribe();
      metrics.clear();
    });

    const respond = (res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    const handle = (req: IncomingMessage, res: ServerResponse) => {
      // No route reads a body: one a client sends is left unread and the connection closed with the answer (probeServer).
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' && req.method !== 'HEAD') return respond(res, 405, 'method not allowed\n');
      const now = scheduler.now();
      switch (path) {
        case '/healthz':
        case '/livez':
          return respond(res, 200, 'ok\n');
        case '/readyz': {
          const { ready, lines } = readyzLines(healths, now, options);
          return respond(res, ready ? 200 : 503, `${[...lines, ready ? 'ok' : 'not ready'].join('\n')}\n`);
        }
        case '/metrics': {
          let extra: readonly MetricFamily[] = [];
          let failure = '';
          try {
            extra = options.families?.() ?? [];
          } catch (error) {
            failure = `# families() failed: ${(error instanceof Error ? error.message : String(error)).replace(/[\r\n]/g, ' ')}\n`;
          }
          const snapshots = [...metrics.values()].flatMap((m) => (m.latest ? [m.latest] : []));
          const handlers = [...metrics.keys()].flatMap((i) => {
            // Every Informer has it; an object cast to one (plain JavaScript) may not, and costs no scrape.
            const m = i.handlerMetrics?.();
            return m ? [{ name: resourceName(i.resource), ...m }] : [];
          });
          const text = toPrometheusText([
            ...informerFamilies(snapshots),
            ...handlerFamilies(handlers),
            ...healthFamilies(healths, now),
            ...transportFamilies(transportBytes()),
            ...extra,
          ]);
          return respond(res, 200, failure + text, 'text/plain; version=0.0.4; charset=utf-8');
        }
        default:
          return respond(res, 404, 'not found: /healthz, /readyz, /metrics\n');
      }
    };

    const server = probeServer((req, res) => {
      try {
        handle(req, res);
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
