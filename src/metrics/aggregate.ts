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
 * `Infinity`: no cap.
 */
export function resourceLabels(
  names: Iterable<string>,
  max: number | undefined,
): { readonly label: (name: string) => string; readonly others: number; readonly max: number } {
  const cap = max !== undefined && max > 0 ? max : DEFAULT_MAX_RESOURCE_SERIES;
  const own = new Set<string>();
  const past = new Set<string>();
  for (const name of names) {
    if (own.has(name) || past.has(name)) continue;
    if (own.size < cap) own.add(name);
    else past.add(name);
  }
  return { label: (name) => (own.has(name) ? name : OTHER_RESOURCES), others: past.size, max: cap };
}

const definedMax = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
const definedMin = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
/** The later of two resourceVersions when both are numbers (as every kube-apiserver's are), else the first. */
const laterVersion = (a: string, b: string) => (b !== '' && (a === '' || Number(b) > Number(a)) ? b : a);

/** Counters and sizes summed; the latest resourceVersion; sync duration: the slowest, absent until all synced. */
export function mergeMetrics(a: InformerMetrics, b: InformerMetrics): InformerMetrics {
  const errorsTotal: Partial<Record<ErrorReason, number>> = { ...a.errorsTotal };
  for (const [reason, n] of Object.entries(b.errorsTotal) as [ErrorReason, number][]) errorsTotal[reason] = (errorsTotal[reason] ?? 0) + n;
  return {
    name: a.name,
    eventsTotal: {
      added: a.eventsTotal.added + b.eventsTotal.added,
      updated: a.eventsTotal.updated + b.eventsTotal.updated,
      deleted: a.eventsTotal.deleted + b.eventsTotal.deleted,
    },
    listsTotal: a.listsTotal + b.listsTotal,
    watchesTotal: a.watchesTotal + b.watchesTotal,
    shortWatchesTotal: a.shortWatchesTotal + b.shortWatchesTotal,
    errorsTotal,
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
