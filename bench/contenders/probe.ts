/**
 * The measuring harness every contender process shares. A contender builds
 * its informer, calls `begin()`, and then reports milestones from inside its
 * own callbacks: `synced()` when it holds the N listed objects, `watched()`
 * when it has processed its M watch events, and, in a relist workload,
 * `relistHighWater()` / `relistDone()`. The probe measures time, CPU and heap
 * around those points and sends one {@link RunResult} to the runner over IPC.
 */
import * as http from 'node:http';
import * as inspector from 'node:inspector';
import { PerformanceObserver, constants as perf, type PerformanceEntry } from 'node:perf_hooks';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collect } from './heap.ts';

export const CONTENDERS = [
  'raw',
  'rx',
  'rx-gzip',
  'rx-record',
  'rx-pb',
  'rx-strip',
  'rx-lazy',
  'rx-lazy-strip',
  'rx-meta',
  'rx-100',
  'cn',
  'cn-100',
] as const;
export type ContenderId = (typeof CONTENDERS)[number];
/**
 * A contender as the runner names it: an id, or for the rx-informer contenders
 * an id with `@DIR`, which runs the same contender on another copy of `src/`
 * (DIR holds its `index.ts`), for comparisons within one run; for rx-record,
 * `=PATH` after the id: where it writes its trace (see {@link parseRunName}).
 */
export type RunName = ContenderId | `${ContenderId}@${string}` | `${ContenderId}:${string}` | `rx-record=${string}`;

/**
 * The contender id, the other `src/` directory, the extra Node/V8 flags and
 * (rx-record) the trace's place of a run name: `id[=PATH][@DIR][:flag[:flag…]]`,
 * e.g. `rx@/tmp/base/src`, `raw:--minor-ms` (flags for that run only, to compare
 * V8 settings within one run) or `rx-record=/dev/shm` (PATH a directory: the trace
 * goes to a fresh file in it; anything else, e.g. `/dev/null`, is written to as it is).
 */
export function parseRunName(name: string): {
  readonly id: ContenderId;
  readonly src?: string;
  readonly flags: readonly string[];
  readonly recordTo?: string;
} {
  const [head, ...flags] = name.split(':');
  const at = head!.indexOf('@');
  const [id, recordTo] = (at < 0 ? head! : head!.slice(0, at)).split('=') as [ContenderId, string | undefined];
  if (!CONTENDERS.includes(id)) throw new Error(`unknown contender ${id}; one of ${CONTENDERS.join(', ')}`);
  for (const flag of flags) if (!flag.startsWith('--')) throw new Error(`${name}: ${flag} is not a Node/V8 flag`);
  if (recordTo !== undefined && (id !== 'rx-record' || recordTo === '')) throw new Error(`${name}: only rx-record=PATH takes a path`);
  const to = recordTo === undefined ? {} : { recordTo };
  if (at < 0) return { id, flags, ...to };
  if (!id.startsWith('rx')) throw new Error(`${name}: only rx-informer contenders run on another src/`);
  return { id, src: head!.slice(at + 1), flags, ...to };
}

export interface RunConfig {
  readonly contender: ContenderId;
  /** The runner's name for this run (a contender id, or one with `@DIR`/`:flags`). */
  readonly runName?: string;
  /** Another copy of `src/` to run (an absolute directory holding `index.ts`), for rx-informer contenders. */
  readonly src?: string;
  /** rx-record: where the trace goes (a directory: a fresh file in it; else that file, e.g. `/dev/null`). Default os.tmpdir(). */
  readonly recordTo?: string;
  readonly scenario: string;
  readonly port: number;
  /** Pods in the initial list. */
  readonly pods: number;
  /** Watch events the contender counts before stopping the clock (per informer for cn-100). */
  readonly events: number;
  /** The workload ends the watch with a 410: measure the relist. */
  readonly relist: boolean;
  /** Pods a relist returns. */
  readonly finalCount: number;
  /** Write CPU profiles of the sync, watch and relist phases here. */
  readonly cpuProfileDir?: string;
}

export interface RunResult {
  readonly type: 'result';
  readonly contender: ContenderId;
  readonly scenario: string;
  /** Objects in the cache when the contender said it was synced. */
  readonly syncedObjects: number;
  /** Watch events delivered to (each) subscriber. */
  readonly eventsProcessed: number;
  /** Objects delivered by the relist and cached after it (relist workloads). */
  readonly relistObjects?: number;
  readonly syncMs: number;
  readonly syncCpuMs: number;
  /** Event-loop idle time during sync (waiting for the server or the network). */
  readonly syncIdleMs: number;
  /** The main thread's CPU from subscribing to synced (ms), where Node has it; the rest of {@link syncCpuMs} is V8's helpers and the kernel's. */
  readonly syncMainCpuMs?: number;
  readonly watchMs: number;
  readonly watchCpuMs: number;
  /** Event-loop idle time during the watch phase (waiting for bytes). */
  readonly watchIdleMs: number;
  readonly eventsPerSec: number;
  readonly cpuUsPerEvent: number;
  /** Heap after GC before the informer started (imports done). */
  readonly heapBaselineMB: number;
  /** Heap after GC once synced, and per cached object. */
  readonly heapSyncedMB: number;
  readonly heapPerObjectKB: number;
  /** Heap after GC once the M events were processed. */
  readonly heapEndMB: number;
  /** Relist: the steady heap (= heapEndMB), the highest heapUsed sampled, the live heap (after GC) at the relist's high-water mark, heap after GC once done. */
  readonly relistPeakSampledMB?: number;
  readonly relistPeakLiveMB?: number;
  readonly heapAfterRelistMB?: number;
  readonly relistMs?: number;
  /** Resident set size after GC once the M events were processed (the steady state), and the highest sampled during the relist. */
  readonly rssSteadyMB?: number;
  readonly relistPeakRssMB?: number;
  readonly peakRssMB: number;
  /**
   * Where the watch phase's CPU went: the main thread (JavaScript, and the
   * collector's pauses) and the rest (V8's helper threads: concurrent marking,
   * parallel scavenging, sweeping; libuv), per event in µs.
   */
  readonly mainCpuUsPerEvent?: number;
  readonly helperCpuUsPerEvent?: number;
  /** The watch phase's system (kernel) CPU time per event in µs, every thread: e.g. what writing a trace costs in the kernel. */
  readonly systemUsPerEvent?: number;
  /** The collector during the watch phase, per 1,000 events: scavenges and their pauses, mark-compacts and theirs, incremental marking steps' time. */
  readonly scavengesPer1k?: number;
  readonly scavengeMsPer1k?: number;
  readonly markCompactsPer1k?: number;
  readonly markCompactMsPer1k?: number;
  readonly incrementalMsPer1k?: number;
  /** The same for the sync phase, in total: pauses (ms) and mark-compacts. */
  readonly syncGcPauseMs?: number;
  readonly syncMarkCompacts?: number;
  /** The sum of the names' lengths of every object the contender's subscriber saw (listed, watched, relisted): equal runs saw the same objects. */
  readonly checksum?: number;
  readonly notes?: string;
}

export interface ProgressMessage {
  readonly type: 'phase';
  readonly phase: string;
}

const MB = 1024 * 1024;
const gc = collect;
// V8's heap plus memory it keeps outside it: Node keeps long ASCII strings
// (over ~1 MB, such as a list page's text) as external strings, and lazily
// decoded objects hold their page's text. Array buffers are part of external.
const heapUsed = () => {
  const { heapUsed: used, external } = process.memoryUsage();
  return used + external;
};
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
/** The main thread's CPU time (ms), where Node has it (≥ 23.9). */
export const mainCpuMs = (): number | undefined => {
  const usage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage?.();
  return usage ? (usage.user + usage.system) / 1000 : undefined;
};

/** Collector pauses by kind, from `gc` performance entries (durations are main-thread pauses). */
export class GcTally {
  scavenges = 0;
  scavengeMs = 0;
  markCompacts = 0;
  markCompactMs = 0;
  incrementalMs = 0;
  private readonly observer = new PerformanceObserver((list) => this.add(list.getEntries()));
  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }
  private add(entries: readonly PerformanceEntry[]): void {
    for (const entry of entries) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === perf.NODE_PERFORMANCE_GC_MINOR || kind === perf.NODE_PERFORMANCE_GC_MINOR_MARK_SWEEP) {
        this.scavenges++;
        this.scavengeMs += entry.duration;
      } else if (kind === perf.NODE_PERFORMANCE_GC_MAJOR) {
        this.markCompacts++;
        this.markCompactMs += entry.duration;
      } else if (kind === perf.NODE_PERFORMANCE_GC_INCREMENTAL) this.incrementalMs += entry.duration;
    }
  }
  /** Takes what is pending and stops counting. */
  stop(): this {
    this.add(this.observer.takeRecords());
    this.observer.disconnect();
    return this;
  }
}

export class Probe {
  private readonly config: RunConfig;
  /** The contender's cache size, for the checks. */
  private size: () => number = () => -1;
  private session: inspector.Session | undefined;
  private t0 = 0;
  private cpu0 = 0;
  private baseline = 0;
  private syncMs = 0;
  private syncCpuMs = 0;
  private syncIdleMs = 0;
  private elu0: ReturnType<typeof performance.eventLoopUtilization> | undefined;
  private syncedObjects = 0;
  private heapSynced = 0;
  private watch0 = 0;
  private watchCpu0 = 0;
  private watchSystem0 = 0;
  private watchSystemMs = 0;
  private watchMs = 0;
  private watchCpuMs = 0;
  private watchIdleMs = 0;
  private watchElu0: ReturnType<typeof performance.eventLoopUtilization> | undefined;
  private eventsProcessed = 0;
  private syncMain0: number | undefined;
  private syncMainMs: number | undefined;
  private watchMain0: number | undefined;
  private watchMainMs: number | undefined;
  private syncGc: GcTally | undefined;
  private watchGc: GcTally | undefined;
  private heapEnd = 0;
  private relistStart = 0;
  private peakSampled = 0;
  private peakLive = 0;
  private rssSteady = 0;
  private peakRss = 0;
  private sampler: NodeJS.Timeout | undefined;
  private phase: 'start' | 'sync' | 'watch' | 'relist' | 'done' = 'start';
  notes: string[] = [];
  /** The contender's checksum of what it saw, read when the run finishes (see {@link RunResult.checksum}). */
  checksum: (() => number) | undefined;

  constructor(config: RunConfig) {
    this.config = config;
  }

  /** Call once the contender is built, just before it starts. */
  begin(size: () => number): void {
    this.size = size;
    gc();
    this.baseline = heapUsed();
    this.startProfile();
    this.progress('sync');
    this.phase = 'sync';
    this.syncGc = new GcTally();
    this.cpu0 = cpuMs();
    this.syncMain0 = mainCpuMs();
    this.elu0 = performance.eventLoopUtilization();
    this.t0 = performance.now();
  }

  /** Call (from the contender's callback) the moment it holds the N listed objects. */
  synced(): void {
    if (this.phase !== 'sync') return;
    this.syncMs = performance.now() - this.t0;
    this.syncCpuMs = cpuMs() - this.cpu0;
    this.syncIdleMs = performance.eventLoopUtilization(this.elu0).idle;
    const main = mainCpuMs();
    if (main !== undefined && this.syncMain0 !== undefined) this.syncMainMs = main - this.syncMain0;
    this.syncGc?.stop();
    this.phase = 'watch';
    setImmediate(() => {
      this.stopProfile('sync');
      this.syncedObjects = this.size();
      gc();
      this.heapSynced = heapUsed();
      this.progress('watch');
      this.startProfile();
      this.watchGc = new GcTally();
      this.watchMain0 = mainCpuMs();
      this.watchCpu0 = cpuMs();
      this.watchSystem0 = process.cpuUsage().system / 1000;
      this.watchElu0 = performance.eventLoopUtilization();
      this.watch0 = performance.now();
      // Open the server's gate: the watch stream starts now.
      http
        .get({ host: '127.0.0.1', port: this.config.port, path: '/_bench/go', agent: false }, (response) => response.resume())
        .on('error', (error) => this.fail(error));
    });
  }

  /** Call the moment the contender has processed its M watch events (each subscriber, for fan-out). */
  watched(events: number): void {
    if (this.phase !== 'watch') return;
    this.watchMs = performance.now() - this.watch0;
    this.watchCpuMs = cpuMs() - this.watchCpu0;
    this.watchSystemMs = process.cpuUsage().system / 1000 - this.watchSystem0;
    const main = mainCpuMs();
    if (main !== undefined && this.watchMain0 !== undefined) this.watchMainMs = main - this.watchMain0;
    this.watchGc?.stop();
    this.watchIdleMs = performance.eventLoopUtilization(this.watchElu0).idle;
    this.eventsProcessed = events;
    this.phase = this.config.relist ? 'relist' : 'done';
    setImmediate(() => {
      this.stopProfile('watch');
      gc();
      this.heapEnd = heapUsed();
      this.rssSteady = process.memoryUsage.rss();
      if (!this.config.relist) return this.finish();
      this.progress('relist');
      this.peakSampled = this.heapEnd;
      this.peakRss = this.rssSteady;
      this.sampler = setInterval(() => this.sample(), 5);
      this.startProfile();
      this.relistStart = performance.now();
    });
  }

  /** During a relist: record heapUsed (cheap; call every ~1000 objects). */
  sample(): void {
    const used = heapUsed();
    if (used > this.peakSampled) this.peakSampled = used;
    const rss = process.memoryUsage.rss();
    if (rss > this.peakRss) this.peakRss = rss;
  }

  /**
   * During a relist, at the point where the contender holds the most (old
   * cache plus the new list): sample, then measure the live heap after a full GC. Once.
   */
  relistHighWater(): void {
    if (this.phase !== 'relist' || this.peakLive > 0) return;
    this.sample();
    gc();
    this.peakLive = heapUsed();
  }

  /** The relist is delivered and cached: `objects` is how many it delivered. */
  relistDone(objects: number): void {
    if (this.phase !== 'relist') return;
    this.phase = 'done';
    const relistMs = performance.now() - this.relistStart;
    this.sample();
    clearInterval(this.sampler);
    setImmediate(() => {
      this.stopProfile('relist');
      const cached = this.size();
      if (objects !== cached) this.notes.push(`relist delivered ${objects}, cache holds ${cached}`);
      gc();
      this.finish({
        relistObjects: Math.min(objects, cached),
        relistPeakSampledMB: round(this.peakSampled / MB),
        relistPeakLiveMB: round(Math.max(this.peakLive, this.heapEnd) / MB),
        heapAfterRelistMB: round(heapUsed() / MB),
        relistMs: round(relistMs, 0),
        relistPeakRssMB: round(this.peakRss / MB, 0),
      });
    });
  }

  fail(error: unknown): void {
    process.send?.({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }

  private finish(relist: Partial<RunResult> = {}): void {
    const watchSec = this.watchMs / 1000;
    const result: RunResult = {
      type: 'result',
      contender: this.config.contender,
      scenario: this.config.scenario,
      syncedObjects: this.syncedObjects,
      eventsProcessed: this.eventsProcessed,
      syncMs: round(this.syncMs, 0),
      syncCpuMs: round(this.syncCpuMs, 0),
      syncIdleMs: round(this.syncIdleMs, 0),
      ...(this.syncMainMs === undefined ? {} : { syncMainCpuMs: round(this.syncMainMs, 0) }),
      watchMs: round(this.watchMs, 0),
      watchCpuMs: round(this.watchCpuMs, 0),
      watchIdleMs: round(this.watchIdleMs, 0),
      eventsPerSec: watchSec > 0 ? Math.round(this.eventsProcessed / watchSec) : 0,
      cpuUsPerEvent: this.eventsProcessed > 0 ? round((this.watchCpuMs * 1000) / this.eventsProcessed) : 0,
      heapBaselineMB: round(this.baseline / MB),
      heapSyncedMB: round(this.heapSynced / MB),
      heapPerObjectKB: this.config.pods > 0 ? round((this.heapSynced - this.baseline) / this.config.pods / 1024, 2) : 0,
      heapEndMB: round(this.heapEnd / MB),
      peakRssMB: round(process.resourceUsage().maxRSS / 1024, 0),
      ...this.gcFigures(),
      ...(this.rssSteady > 0 ? { rssSteadyMB: round(this.rssSteady / MB, 0) } : {}),
      ...relist,
      ...(this.checksum ? { checksum: this.checksum() } : {}),
      ...(this.notes.length ? { notes: this.notes.join('; ') } : {}),
    };
    process.send?.(result, () => process.exit(0));
    if (!process.send) {
      console.log(JSON.stringify(result));
      process.exit(0);
    }
  }

  private gcFigures(): Partial<RunResult> {
    const events = this.eventsProcessed;
    const out: Record<string, number> = {};
    if (events > 0 && this.watchMainMs !== undefined) {
      out.mainCpuUsPerEvent = round((this.watchMainMs * 1000) / events);
      out.helperCpuUsPerEvent = round(((this.watchCpuMs - this.watchMainMs) * 1000) / events);
    }
    if (events > 0) out.systemUsPerEvent = round((this.watchSystemMs * 1000) / events, 2);
    const w = this.watchGc;
    if (events > 0 && w) {
      const per1k = 1000 / events;
      out.scavengesPer1k = round(w.scavenges * per1k, 2);
      out.scavengeMsPer1k = round(w.scavengeMs * per1k, 2);
      out.markCompactsPer1k = round(w.markCompacts * per1k, 3);
      out.markCompactMsPer1k = round(w.markCompactMs * per1k, 2);
      out.incrementalMsPer1k = round(w.incrementalMs * per1k, 2);
    }
    const s = this.syncGc;
    if (s) {
      out.syncGcPauseMs = round(s.scavengeMs + s.markCompactMs + s.incrementalMs, 0);
      out.syncMarkCompacts = s.markCompacts;
    }
    return out;
  }

  private progress(phase: string): void {
    const message: ProgressMessage = { type: 'phase', phase };
    process.send?.(message);
  }

  // ── optional CPU profiles, one per phase ─────────────────────────────────
  private startProfile(): void {
    if (!this.config.cpuProfileDir) return;
    if (!this.session) {
      this.session = new inspector.Session();
      this.session.connect();
    }
    this.session.post('Profiler.enable');
    this.session.post('Profiler.setSamplingInterval', { interval: 250 });
    this.session.post('Profiler.start');
  }

  private stopProfile(phase: string): void {
    const session = this.session;
    if (!session || !this.config.cpuProfileDir) return;
    const dir = this.config.cpuProfileDir;
    const run = this.config.runName ?? this.config.contender;
    const name = `${this.config.scenario}-${run.replace(/[^A-Za-z0-9._-]+/g, '_')}-${phase}.cpuprofile`;
    session.post('Profiler.stop', (error, result) => {
      if (error) return this.fail(error);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, name), JSON.stringify(result.profile));
    });
    session.post('Profiler.disable');
  }
}
