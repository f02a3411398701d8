import type { ControllerMetrics } from '../controller/controller.ts';
import type { WorkQueueMetrics } from '../workqueue/metrics.ts';
import type { InformerMetrics } from './informerMetrics.ts';
import type { InformerHealth } from '../5-informer/health.ts';
import type { HandlerMetrics } from '../5-informer/handleEvents.ts';
import type { TransportBytes } from '../1-transport/httpTransport.ts';
import { groupByName, mergeHandlers, mergeHealth, mergeMetrics } from './aggregate.ts';
import { WARNING_TYPE } from '../0-model/errors.ts';
import { fnv1a } from '../util/fnv1a.ts';

/** One sample of a metric family. `suffix` marks a summary's `_sum`/`_count`. */
export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly suffix?: '_sum' | '_count';
}

/** A Prometheus metric family. */
export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'summary';
  readonly samples: readonly Sample[];
}

const family = (name: string, help: string, type: MetricFamily['type'], samples: Sample[]): MetricFamily => ({ name, help, type, samples });

/** The names already warned of, per kind: once per process each. */
const warnedNames = new Set<string>();

/**
 * Two controllers (or queues) of one name share their series: `toPrometheusText` keeps the first's and leaves the
 * other's out, so one controller's metrics vanish. controller-runtime refuses a second controller of a name; a
 * controller here is often built twice of one kind by default (the kind, lower-cased), so it warns, once per name,
 * with `process.emitWarning` (type `RxInformerWarning`, code `DuplicateName`).
 */
function warnOfDuplicateNames(what: 'controllers' | 'work queues', names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (!seen.has(name)) {
      seen.add(name);
      continue;
    }
    if (warnedNames.has(`${what} ${name}`)) continue;
    warnedNames.add(`${what} ${name}`);
    const count = names.filter((n) => n === name).length;
    const message =
      `metrics: ${count} ${what} are named ${JSON.stringify(name)}: they share one set of series, and only the first's is exported; ` +
      'give each controller its own `name` (the default is its kind, lower-cased)';
    try {
      process.emitWarning(message, { type: WARNING_TYPE, code: 'DuplicateName' });
    } catch {
      // A replaced emitWarning that throws: the metrics are still exported.
    }
  }
}

/**
 * client-go workqueue metrics, under controller-runtime's names (`name` label = the queue's name). Warns once of
 * two queues of one name (see {@link warnOfDuplicateNames}).
 */
export function workqueueFamilies(queues: readonly WorkQueueMetrics[]): MetricFamily[] {
  warnOfDuplicateNames(
    'work queues',
    queues.map((m) => m.name),
  );
  const by = (pick: (m: WorkQueueMetrics) => number) => queues.map((m) => ({ labels: { name: m.name }, value: pick(m) }));
  const summary = (pick: (m: WorkQueueMetrics) => { count: number; sumSeconds: number }) =>
    queues.flatMap((m): Sample[] => [
      { labels: { name: m.name }, value: pick(m).sumSeconds, suffix: '_sum' },
      { labels: { name: m.name }, value: pick(m).count, suffix: '_count' },
    ]);
  return [
    family('workqueue_depth', 'Current depth of the work queue by priority.', 'gauge', queues.flatMap(depthSamples)),
    family(
      'workqueue_adds_total',
      'Total number of adds handled by the work queue.',
      'counter',
      by((m) => m.addsTotal),
    ),
    family(
      'workqueue_queue_duration_seconds',
      'How long an item stays in the work queue before being requested.',
      'summary',
      summary((m) => m.queueDurationSeconds),
    ),
    family(
      'workqueue_work_duration_seconds',
      'How long processing an item from the work queue takes.',
      'summary',
      summary((m) => m.workDurationSeconds),
    ),
    family(
      'workqueue_unfinished_work_seconds',
      'Seconds of work in progress not yet observed by work_duration.',
      'gauge',
      by((m) => m.unfinishedWorkSeconds),
    ),
    family(
      'workqueue_longest_running_processor_seconds',
      'Seconds the longest running processor has been running.',
      'gauge',
      by((m) => m.longestRunningProcessorSeconds),
    ),
    family(
      'workqueue_retries_total',
      'Total number of retries handled by the work queue.',
      'counter',
      by((m) => m.retriesTotal),
    ),
  ];
}

/** At most this many `priority` values per queue, as controller-runtime (the rest are summed under a placeholder). */
export const MAX_DEPTH_PRIORITIES = 25;

/**
 * A queue's `workqueue_depth`, as controller-runtime's: one sample per priority (`{name, priority}`), so that
 * `sum by (name) (workqueue_depth)` is the depth. The default priority 0 is always there (0 when nothing is queued at
 * it), so an idle queue still has a series; past {@link MAX_DEPTH_PRIORITIES} values, the lowest are summed under
 * `priority="exceeded_cardinality_limit"` (a priority is any number a caller gives: the series must stay bounded).
 */
function depthSamples(m: WorkQueueMetrics): Sample[] {
  const byPriority = m.depthByPriority.some((p) => p.priority === 0)
    ? m.depthByPriority
    : [...m.depthByPriority, { priority: 0, depth: 0 }].sort((a, b) => b.priority - a.priority);
  const kept = byPriority.length > MAX_DEPTH_PRIORITIES ? byPriority.slice(0, MAX_DEPTH_PRIORITIES - 1) : byPriority;
  const samples: Sample[] = kept.map((p) => ({ labels: { name: m.name, priority: String(p.priority) }, value: p.depth }));
  if (kept.length < byPriority.length) {
    const rest = byPriority.slice(kept.length).reduce((sum, p) => sum + p.depth, 0);
    samples.push({ labels: { name: m.name, priority: 'exceeded_cardinality_limit' }, value: rest });
  }
  return samples;
}

/** controller-runtime's reconcile metrics (`controller` label). Warns once of two controllers of one name. */
export function controllerFamilies(controllers: readonly ControllerMetrics[]): MetricFamily[] {
  warnOfDuplicateNames(
    'controllers',
    controllers.map((c) => c.name),
  );
  const results = ['success', 'error', 'requeue', 'requeue_after'] as const;
  return [
    family(
      'controller_runtime_reconcile_total',
      'Total number of reconciliations per controller.',
      'counter',
      controllers.flatMap((c) => results.map((result) => ({ labels: { controller: c.name, result }, value: c.reconcileTotal[result] }))),
    ),
    family(
      'controller_runtime_reconcile_errors_total',
      'Total number of reconciliation errors per controller.',
      'counter',
      controllers.map((c) => ({ labels: { controller: c.name }, value: c.reconcileErrorsTotal })),
    ),
    family(
      'controller_runtime_terminal_reconcile_errors_total',
      'Total number of terminal reconciliation errors per controller.',
      'counter',
      controllers.map((c) => ({ labels: { controller: c.name }, value: c.terminalReconcileErrorsTotal })),
    ),
    family(
      'controller_runtime_reconcile_time_seconds',
      'Length of time per reconciliation per controller.',
      'summary',
      controllers.flatMap((c): Sample[] => [
        { labels: { controller: c.name }, value: c.reconcileTimeSeconds.sumSeconds, suffix: '_sum' },
        { labels: { controller: c.name }, value: c.reconcileTimeSeconds.count, suffix: '_count' },
      ]),
    ),
    family(
      'controller_runtime_active_workers',
      'Number of currently used workers per controller.',
      'gauge',
      controllers.map((c) => ({ labels: { controller: c.name }, value: c.activeWorkers })),
    ),
    family(
      'controller_runtime_max_concurrent_reconciles',
      'Maximum number of concurrent reconciles per controller.',
      'gauge',
      controllers.map((c) => ({ labels: { controller: c.name }, value: c.maxConcurrentReconciles })),
    ),
  ];
}

/**
 * Informer metrics: client-go's historical reflector names where one exists
 * (`reflector_lists_total`, `reflector_watches_total`,
 * `reflector_short_watches_total`, `reflector_last_resource_version`), and
 * `informer_*` for the rest.
 */
export function informerFamilies(snapshots: readonly InformerMetrics[]): MetricFamily[] {
  // Informers of one resource (per namespace, or metadata-only beside full) are one series: summed.
  const informers = groupByName(snapshots, mergeMetrics);
  const by = (pick: (m: InformerMetrics) => number) => informers.map((m) => ({ labels: { name: m.name }, value: pick(m) }));
  return [
    family(
      'reflector_lists_total',
      'Total number of lists (initial and relists) done by the reflector.',
      'counter',
      by((m) => m.listsTotal),
    ),
    family(
      'reflector_watches_total',
      'Total number of watches opened by the reflector.',
      'counter',
      by((m) => m.watchesTotal),
    ),
    family(
      'reflector_short_watches_total',
      'Total number of very short watches.',
      'counter',
      by((m) => m.shortWatchesTotal),
    ),
    family(
      'reflector_last_resource_version',
      'Last resource version seen by the reflector.',
      'gauge',
      by((m) => Number(m.lastResourceVersion) || 0),
    ),
    family(
      'informer_events_total',
      'Events delivered by the informer, by type.',
      'counter',
      informers.flatMap((m) =>
        (['added', 'updated', 'deleted'] as const).map((type) => ({ labels: { name: m.name, type }, value: m.eventsTotal[type] })),
      ),
    ),
    family(
      'informer_errors_total',
      'Faults met by the informer, by reason.',
      'counter',
      informers.flatMap((m) =>
        Object.entries(m.errorsTotal).map(([reason, value]) => ({ labels: { name: m.name, reason }, value: value ?? 0 })),
      ),
    ),
    family(
      'informer_store_objects',
      'Objects in the informer cache.',
      'gauge',
      by((m) => m.storeObjects),
    ),
    family(
      'informer_store_bytes',
      'Approximate bytes of JSON the cached objects make.',
      'gauge',
      by((m) => m.storeBytes),
    ),
    family(
      'informer_sync_duration_seconds',
      'Time from start to the initial list delivered (absent until synced).',
      'gauge',
      informers
        .filter((m) => m.syncDurationSeconds !== undefined)
        .map((m) => ({ labels: { name: m.name }, value: m.syncDurationSeconds! })),
    ),
  ];
}

/** Snapshot field -> metric name of {@link handlerFamilies} (as `WORKQUEUE_METRIC_NAMES` for the work queue's). */
export const HANDLER_METRIC_NAMES = {
  depth: 'informer_handler_queue_depth',
  durationSeconds: 'informer_handler_duration_seconds',
} as const satisfies Record<keyof HandlerMetrics, string>;

/**
 * The `on()` handlers of each informer (`name` label = the resource): events waiting (a gauge, as
 * `workqueue_depth`) and the time from a handler's call until its work is done (a summary, as
 * `workqueue_work_duration_seconds`).
 */
export function handlerFamilies(snapshots: readonly (HandlerMetrics & { readonly name: string })[]): MetricFamily[] {
  const informers = groupByName(snapshots, mergeHandlers);
  return [
    family(
      HANDLER_METRIC_NAMES.depth,
      "Events waiting in the queues of the informer's handlers.",
      'gauge',
      informers.map((m) => ({ labels: { name: m.name }, value: m.depth })),
    ),
    family(
      HANDLER_METRIC_NAMES.durationSeconds,
      "How long the informer's handlers take per event, until their work is done.",
      'summary',
      informers.flatMap((m): Sample[] => [
        { labels: { name: m.name }, value: m.durationSeconds.sumSeconds, suffix: '_sum' },
        { labels: { name: m.name }, value: m.durationSeconds.count, suffix: '_count' },
      ]),
    ),
  ];
}

/**
 * The HTTP transport's body bytes (`transportBytes()`, process-wide): per Content-Encoding, on the wire and
 * decoded. With gzip, decoded minus wire is what compression saved.
 */
export function transportFamilies(bytes: TransportBytes): MetricFamily[] {
  return [
    family('informer_transport_responses_total', 'HTTP responses read by the transport, by Content-Encoding.', 'counter', [
      { labels: { encoding: 'identity' }, value: bytes.identityResponses },
      { labels: { encoding: 'gzip' }, value: bytes.gzipResponses },
    ]),
    family(
      'informer_transport_body_bytes_total',
      'HTTP body bytes read by the transport, by Content-Encoding, as received on the wire and once decoded.',
      'counter',
      [
        { labels: { encoding: 'identity', stage: 'wire' }, value: bytes.identityBytes },
        { labels: { encoding: 'identity', stage: 'decoded' }, value: bytes.identityBytes },
        { labels: { encoding: 'gzip', stage: 'wire' }, value: bytes.gzipWireBytes },
        { labels: { encoding: 'gzip', stage: 'decoded' }, value: bytes.gzipDecodedBytes },
      ],
    ),
  ];
}

/** Informer health at `now` (scheduler ms): watching, synced, failures in a row, seconds since the last event, bookmark and word. */
export function healthFamilies(snapshots: readonly InformerHealth[], now: number): MetricFamily[] {
  // Informers of one resource are one series: the worst of them (watching only if all are, …).
  const healths = groupByName(snapshots, mergeHealth);
  const by = (pick: (h: InformerHealth) => number) => healths.map((h) => ({ labels: { name: h.name }, value: pick(h) }));
  const since = (pick: (h: InformerHealth) => number | undefined) =>
    healths.flatMap((h) => {
      const at = pick(h);
      return at === undefined ? [] : [{ labels: { name: h.name }, value: Math.max(0, now - at) / 1000 }];
    });
  return [
    family(
      'informer_watching',
      '1 while a watch the server has accepted is open (a frame came from it, no failure since), else 0.',
      'gauge',
      by((h) => (h.watching ? 1 : 0)),
    ),
    family(
      'informer_watching_changed_seconds',
      'Seconds since informer_watching last changed.',
      'gauge',
      since((h) => h.since),
    ),
    family(
      'informer_synced',
      '1 once the initial list has been delivered, else 0.',
      'gauge',
      by((h) => (h.synced ? 1 : 0)),
    ),
    family(
      'informer_consecutive_failures',
      'List and watch failures since the last list, event or bookmark.',
      'gauge',
      by((h) => h.consecutiveFailures),
    ),
    family(
      'informer_last_event_seconds',
      'Seconds since the last list or watch event (absent before the first).',
      'gauge',
      since((h) => h.lastEventAt),
    ),
    family(
      'informer_last_bookmark_seconds',
      'Seconds since the last bookmark (absent before the first).',
      'gauge',
      since((h) => h.lastBookmarkAt),
    ),
    family(
      'informer_silent_seconds',
      'Seconds since the server last sent anything (list, event or bookmark).',
      'gauge',
      by((h) => Math.max(0, h.silentMs + now - h.at) / 1000),
    ),
  ];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * A label value: backslash, line feed and double quote escaped, as the format says. A carriage return has no escape in
 * it, and a raw one ends the line for a parser that splits on any line break (not Go's): it is written as the two
 * characters `\r` (an escaped backslash, then `r`), which every parser reads as such. Done here, not by refusing the
 * names in discovery: a label value comes from discovery, from a controller's or a queue's name, from `families()`.
 */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\\\r').replace(/"/g, '\\"');
}

/** HELP text escapes backslash and line feed (a newline must not end the line and forge another), a carriage return as a label's. */
function escapeHelp(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\\\r');
}

/** A comment's text, on one line. */
const oneLine = (value: string) => value.replace(/[\r\n]+/g, ' ');

/**
 * The longest label value written, in characters: far above any real one (a resource's `plural.group` is at most 317), so
 * that a name from a peer (a 1 MiB plural was 19.9 MB of /metrics) cannot make a scrape huge. A longer one is cut and
 * ends `…#` and a hash of the whole (../util/fnv1a.ts, 8 hex digits), so that two long values stay two series.
 */
export const MAX_LABEL_VALUE_CHARS = 1024;

/** A label value within {@link MAX_LABEL_VALUE_CHARS}. */
export function cappedLabel(value: string): string {
  if (value.length <= MAX_LABEL_VALUE_CHARS) return value;
  const tag = `…#${fnv1a(value).toString(16).padStart(8, '0')}`;
  return value.slice(0, MAX_LABEL_VALUE_CHARS - tag.length) + tag;
}

function labelText(labels: Readonly<Record<string, string>>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(cappedLabel(String(v)))}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** A sample's identity within its family: suffix and labels, in name order. */
const seriesKey = (s: Sample) =>
  JSON.stringify([s.suffix ?? '', Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);

/**
 * The Prometheus text exposition format (version 0.0.4), strictly: `# HELP` and `# TYPE` once per family, before
 * its samples, which come together; one sample per series (name and label set); help and label values escaped.
 * Families of one name are joined (the first's help and type; one of another type is left out); a second sample
 * of a series, a family or label name the format does not allow are left out too, each with a `#` comment saying so.
 */
export function toPrometheusText(families: readonly MetricFamily[]): string {
  const joined = new Map<string, { family: MetricFamily; samples: Map<string, Sample> }>();
  const notes: string[] = [];
  for (const f of families) {
    if (!METRIC_NAME.test(f.name)) {
      notes.push(`# left out a family named ${oneLine(JSON.stringify(f.name))}: not a metric name`);
      continue;
    }
    let entry = joined.get(f.name);
    if (entry === undefined) joined.set(f.name, (entry = { family: f, samples: new Map() }));
    else if (entry.family.type !== f.type) {
      notes.push(`# left out a second family ${f.name} of type ${f.type} (it is a ${entry.family.type})`);
      continue;
    }
    let duplicates = 0;
    let badLabels = 0;
    for (const sample of f.samples) {
      if (!Object.keys(sample.labels).every((k) => LABEL_NAME.test(k) && !k.startsWith('__'))) badLabels++;
      else if (entry.samples.has(seriesKey(sample))) duplicates++;
      else entry.samples.set(seriesKey(sample), sample);
    }
    if (duplicates > 0) notes.push(`# left out ${duplicates} repeated series of ${f.name}`);
    if (badLabels > 0) notes.push(`# left out ${badLabels} samples of ${f.name} with a label name the format does not allow`);
  }
  const lines: string[] = [...notes];
  for (const { family: f, samples } of joined.values()) {
    lines.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of samples.values())
      lines.push(`${f.name}${s.suffix ?? ''}${labelText(s.labels)} ${Number.isFinite(s.value) ? s.value : 0}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * The shape prom-client's `Registry.registerMetric` accepts (prom-client
 * ≥ 13), so these metrics join your own registry without rx-informer
 * depending on prom-client:
 *
 * ```ts
 * for (const m of promClientMetrics(() => [...workqueueFamilies([q.metrics()]), ...controllerFamilies([c.metrics()])]))
 *   register.registerMetric(m);
 * ```
 */
export interface PromClientMetric {
  /** Not readonly: a prom-client registry set to OpenMetrics renames a counter (strips `_total`, added again per sample). */
  name: string;
  readonly help: string;
  readonly type: MetricFamily['type'];
  readonly aggregator: 'sum';
  get(): Promise<{
    name: string;
    help: string;
    type: MetricFamily['type'];
    aggregator: 'sum';
    values: { labels: Record<string, string>; value: number; metricName?: string }[];
  }>;
  reset(): void;
}

/**
 * Adapts families to prom-client metrics: `collect` is called at scrape time, once per scrape (prom-client asks every
 * metric's `get()` in one go: the first call collects, the others of that turn of the event loop read the same
 * families), and each family is looked up by name in what it returns. Each answers under its current `name`, which
 * prom-client's OpenMetrics output changes (`workqueue_adds_total` is `workqueue_adds`, `_total` added to each sample:
 * answering with the registered name printed `workqueue_adds_total_total`).
 */
export function promClientMetrics(collect: () => readonly MetricFamily[]): PromClientMetric[] {
  let collected: ReadonlyMap<string, MetricFamily> | undefined;
  const current = (): ReadonlyMap<string, MetricFamily> => {
    if (collected === undefined) {
      collected = new Map(collect().map((f) => [f.name, f]));
      // Fresh at the next scrape: what this turn's get() calls read, and no longer.
      queueMicrotask(() => (collected = undefined));
    }
    return collected;
  };
  return collect().map((template) => {
    const metric: PromClientMetric = {
      name: template.name,
      help: template.help,
      type: template.type,
      aggregator: 'sum',
      reset: () => undefined,
      get: async () => {
        const family = current().get(template.name) ?? template;
        return {
          name: metric.name,
          help: family.help,
          type: family.type,
          aggregator: 'sum',
          values: family.samples.map((s) => ({
            labels: Object.fromEntries(Object.entries(s.labels).map(([k, v]) => [k, cappedLabel(v)])),
            value: s.value,
            ...(s.suffix ? { metricName: `${metric.name}${s.suffix}` } : {}),
          })),
        };
      },
    };
    return metric;
  });
}
