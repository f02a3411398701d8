import type { ErrorReason } from '../0-model/errors.ts';
import type { InformerHealth } from '../5-informer/health.ts';
import type { HandlerMetrics } from '../5-informer/handleEvents.ts';
import type { InformerMetrics } from './informerMetrics.ts';

/**
 * One entry per resource name. Several informers of one resource (one per namespace, as `watch pods -n a,b` makes;
 * a metadata-only one beside a full one, as the dynamic factory's CustomResourceDefinition watch) would otherwise
 * be series with the same label set, which a scraper keeps one of. They are summed, or the worst of them is shown:
 * see docs/operations.md, "One series per resource".
 */
export function groupByName<T extends { readonly name: string }>(entries: readonly T[], merge: (a: T, b: T) => T): T[] {
  const byName = new Map<string, T>();
  for (const entry of entries) {
    const seen = byName.get(entry.name);
    byName.set(entry.name, seen === undefined ? entry : merge(seen, entry));
  }
  return [...byName.values()];
}

/** The default of `ServeOptions.maxResourceSeries`: resources with series of their own on `/metrics`. */
export const DEFAULT_MAX_RESOURCE_SERIES = 200;

/**
 * The `name` label value of the resources past the cap, summed (or their worst shown) as one: a value no resource's
 * name can take (a plural is a DNS-1035 label, lowercase letters, digits and `-`; a group, a DNS subdomain), so a
 * resource called `other` keeps a series of its own beside it.
 */
export const OTHER_RESOURCES = '_other';

/**
 * The `name` label of each resource when at most `max` may have series of their own: the first `max` distinct names
 * in the order given keep theirs (the informers served first: a resource keeps its series while it is served), the
 * rest are {@link OTHER_RESOURCES}. The number of resources a cluster can make `/metrics` show a series for (one per
 * CustomResourceDefinition with `--all` or the dynamic factory) is so bounded. `max` not a positive number: the default;
 * `Infinity`: no cap. ({@link ResourceSeries} for names that come and go.)
 */
export function resourceLabels(
  names: Iterable<string>,
  max: number | undefined,
): { readonly label: (name: string) => string; readonly others: number; readonly max: number } {
  const series = new ResourceSeries(max);
  for (const name of names) series.join(name);
  return { label: (name) => series.label(name), others: series.others, max: series.max };
}

/** The counters an informer leaves behind on its label when it stops being served. */
export type LeftCounters = Pick<InformerMetrics, 'eventsTotal' | 'listsTotal' | 'watchesTotal' | 'shortWatchesTotal' | 'errorsTotal'> & {
  /** Its handlers' `durationSeconds` (a summary's `_count` and `_sum`: counters too). */
  readonly handlerSeconds: { readonly count: number; readonly sumSeconds: number };
};

/**
 * The `name` label of each resource served, as informers come and go (serve()'s), and what those gone left: a label
 * summed over several informers (a resource's namespaces, `_other`) is a counter, and Prometheus reads any drop of it
 * as a reset (rate() and increase() count the whole total again). So a label is given once, when the first informer
 * of its resource joins, and kept while one is served (a resource under `_other` is never moved out of it, whoever
 * leaves); an informer that leaves adds its counters to its label's offset, added to the label's sums while the label
 * has informers served. A resource whose last informer left frees its own label (a new resource may have it: a new
 * series) and its offset.
 */
export class ResourceSeries {
  readonly max: number;
  /** Informers served per resource with series of their own, and per resource under `_other`. */
  private readonly own = new Map<string, number>();
  private readonly past = new Map<string, number>();
  private readonly offsets = new Map<string, LeftCounters>();

  constructor(max: number | undefined) {
    this.max = max !== undefined && max > 0 ? max : DEFAULT_MAX_RESOURCE_SERIES;
  }

  /** Resources under `_other` now. */
  get others(): number {
    return this.past.size;
  }

  /** An informer of `name` joins: its label (the one its resource has, or a new one while there is room). */
  join(name: string): string {
    const counts = this.own.has(name) || (!this.past.has(name) && this.own.size < this.max) ? this.own : this.past;
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return this.label(name);
  }

  label(name: string): string {
    return this.own.has(name) ? name : OTHER_RESOURCES;
  }

  /** An informer of `name` leaves, with what it counted: kept in its label's offset while the label has informers. */
  leave(name: string, left: LeftCounters | undefined): void {
    const counts = this.own.has(name) ? this.own : this.past;
    const label = this.label(name);
    const n = (counts.get(name) ?? 0) - 1;
    if (n > 0) counts.set(name, n);
    else counts.delete(name);
    if (label === OTHER_RESOURCES ? this.past.size === 0 : n <= 0) this.offsets.delete(label);
    else if (left) this.offsets.set(label, addCounters(this.offsets.get(label), left));
  }

  /** What informers gone from `label` counted, while it has informers served. */
  offsetOf(label: string): LeftCounters | undefined {
    return this.offsets.get(label);
  }
}

type Counters = Pick<InformerMetrics, 'eventsTotal' | 'listsTotal' | 'watchesTotal' | 'shortWatchesTotal' | 'errorsTotal'>;

/** The informer counters of two, summed: one rule for merging informers' metrics and carrying those gone. */
function sumCounters(a: Counters, b: Counters): Counters {
  return {
    eventsTotal: {
      added: a.eventsTotal.added + b.eventsTotal.added,
      updated: a.eventsTotal.updated + b.eventsTotal.updated,
      deleted: a.eventsTotal.deleted + b.eventsTotal.deleted,
    },
    listsTotal: a.listsTotal + b.listsTotal,
    watchesTotal: a.watchesTotal + b.watchesTotal,
    shortWatchesTotal: a.shortWatchesTotal + b.shortWatchesTotal,
    errorsTotal: addErrors(a.errorsTotal, b.errorsTotal),
  };
}

function addCounters(a: LeftCounters | undefined, b: LeftCounters): LeftCounters {
  if (a === undefined) return b;
  return {
    ...sumCounters(a, b),
    handlerSeconds: {
      count: a.handlerSeconds.count + b.handlerSeconds.count,
      sumSeconds: a.handlerSeconds.sumSeconds + b.handlerSeconds.sumSeconds,
    },
  };
}

function addErrors(
  a: Readonly<Partial<Record<ErrorReason, number>>>,
  b: Readonly<Partial<Record<ErrorReason, number>>>,
): Partial<Record<ErrorReason, number>> {
  const sum: Partial<Record<ErrorReason, number>> = { ...a };
  for (const [reason, n] of Object.entries(b) as [ErrorReason, number][]) sum[reason] = (sum[reason] ?? 0) + n;
  return sum;
}

/** A label's informer metrics (summed) with what the informers gone from it counted. */
export function withLeftMetrics(m: InformerMetrics, left: LeftCounters | undefined): InformerMetrics {
  if (left === undefined) return m;
  const sum = addCounters({ ...m, handlerSeconds: { count: 0, sumSeconds: 0 } }, left);
  return {
    ...m,
    eventsTotal: sum.eventsTotal,
    listsTotal: sum.listsTotal,
    watchesTotal: sum.watchesTotal,
    shortWatchesTotal: sum.shortWatchesTotal,
    errorsTotal: sum.errorsTotal,
  };
}

/** A label's handler metrics (summed) with the durations the informers gone from it counted. */
export function withLeftHandlers<H extends HandlerMetrics>(h: H, left: LeftCounters | undefined): H {
  if (left === undefined) return h;
  return {
    ...h,
    durationSeconds: {
      count: h.durationSeconds.count + left.handlerSeconds.count,
      sumSeconds: h.durationSeconds.sumSeconds + left.handlerSeconds.sumSeconds,
    },
  };
}

const definedMax = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
const definedMin = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
/** The later of two resourceVersions when both are numbers (as every kube-apiserver's are), else the first. */
const laterVersion = (a: string, b: string) => (b !== '' && (a === '' || Number(b) > Number(a)) ? b : a);

/** Counters and sizes summed; the latest resourceVersion; sync duration: the slowest, absent until all synced. */
export function mergeMetrics(a: InformerMetrics, b: InformerMetrics): InformerMetrics {
  const counters = sumCounters(a, b);
  return {
    name: a.name,
    ...counters,
    storeObjects: a.storeObjects + b.storeObjects,
    storeBytes: a.storeBytes + b.storeBytes,
    lastResourceVersion: laterVersion(a.lastResourceVersion, b.lastResourceVersion),
    syncDurationSeconds:
      a.syncDurationSeconds === undefined || b.syncDurationSeconds === undefined
        ? undefined
        : Math.max(a.syncDurationSeconds, b.syncDurationSeconds),
  };
}

/** Queue depths and durations summed. */
export function mergeHandlers<H extends HandlerMetrics & { readonly name: string }>(a: H, b: H): H {
  return {
    ...a,
    depth: a.depth + b.depth,
    durationSeconds: {
      count: a.durationSeconds.count + b.durationSeconds.count,
      sumSeconds: a.durationSeconds.sumSeconds + b.durationSeconds.sumSeconds,
    },
  };
}

/**
 * The worst of two: watching and synced only if both are; the longer run of failures (and its last reason), the
 * earlier failing-since, the longer silence; the latest event, bookmark and change of `watching`.
 */
export function mergeHealth(a: InformerHealth, b: InformerHealth): InformerHealth {
  const at = Math.max(a.at, b.at);
  const lastEventAt = definedMax(a.lastEventAt, b.lastEventAt);
  const lastBookmarkAt = definedMax(a.lastBookmarkAt, b.lastBookmarkAt);
  const worse = b.consecutiveFailures > a.consecutiveFailures ? b : a;
  return {
    name: a.name,
    watching: a.watching && b.watching,
    since: Math.max(a.since, b.since),
    synced: a.synced && b.synced,
    lastEventAt,
    lastBookmarkAt,
    eventAgeMs: lastEventAt === undefined ? undefined : at - lastEventAt,
    bookmarkAgeMs: lastBookmarkAt === undefined ? undefined : at - lastBookmarkAt,
    silentMs: Math.max(a.silentMs + at - a.at, b.silentMs + at - b.at),
    consecutiveFailures: worse.consecutiveFailures,
    failingSince: definedMin(a.failingSince, b.failingSince),
    lastFailure: worse.lastFailure ?? a.lastFailure ?? b.lastFailure,
    resourceVersion: laterVersion(a.resourceVersion, b.resourceVersion),
    at,
  };
}
