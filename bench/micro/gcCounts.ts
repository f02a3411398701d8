import { PerformanceObserver, constants } from 'node:perf_hooks';

/** The collector's runs since the call, as its `gc` performance entries report them (read the fields when needed). */
export interface GcCounts {
  markCompacts: number;
  scavenges: number;
}

/** Starts counting the collector's runs (for the micro benchmarks' reports). */
export function countCollections(): GcCounts {
  const counts: GcCounts = { markCompacts: 0, scavenges: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.markCompacts++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.scavenges++;
    }
  }).observe({ entryTypes: ['gc'] });
  return counts;
}
