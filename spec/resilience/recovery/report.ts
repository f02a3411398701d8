/**
 * Per-fault-kind summary of recovery runs: latency percentiles against the
 * bound, as a markdown table (the soak prints it; docs/reliability.md keeps one).
 */
import { FAULTS, FAULT_KINDS, type FaultKind } from './faults.ts';
import type { RecoveryResult } from './simulation.ts';

export interface KindSummary {
  readonly kind: FaultKind;
  readonly runs: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Smallest and largest bound met by the runs (429/5xx bounds depend on the backoff level). */
  readonly bounds: readonly [number, number];
  /** Runs with any problem: bound missed, no convergence, divergence, livelock, leak. */
  readonly failed: number;
  readonly divergences: number;
}

/** The nearest-rank percentile of sorted values (Infinity counts as the largest). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function summarize(results: readonly RecoveryResult[]): KindSummary[] {
  return FAULT_KINDS.flatMap((kind) => {
    const runs = results.filter((r) => r.schedule.kind === kind);
    if (runs.length === 0) return [];
    const latencies = runs.map((r) => r.latencyMs).sort((a, b) => a - b);
    const bounds = runs.map((r) => r.boundMs);
    return [
      {
        kind,
        runs: runs.length,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: latencies[latencies.length - 1]!,
        bounds: [Math.min(...bounds), Math.max(...bounds)] as const,
        failed: runs.filter((r) => r.problems.length > 0).length,
        divergences: runs.reduce((n, r) => n + r.divergences, 0),
      },
    ];
  });
}

export function seconds(ms: number): string {
  if (!Number.isFinite(ms)) return 'never';
  return ms < 10_000 ? `${(ms / 1000).toFixed(3)} s` : `${(ms / 1000).toFixed(1)} s`;
}

export function markdownTable(summaries: readonly KindSummary[]): string {
  const row = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
  const lines = [
    row(['fault', 'bound (default options)', 'schedules', 'p50', 'p99', 'max', 'bound met by', 'divergences after convergence']),
    row(['---', '---', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const s of summaries) {
    const [low, high] = s.bounds;
    const bound = low === high ? FAULTS[s.kind].bound : `${FAULTS[s.kind].bound}: ${seconds(low)} – ${seconds(high)}`;
    lines.push(
      row([s.kind, bound, s.runs, seconds(s.p50), seconds(s.p99), seconds(s.max), `${s.runs - s.failed}/${s.runs}`, s.divergences]),
    );
  }
  return lines.join('\n');
}
