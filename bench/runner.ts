/**
 * The benchmark runner: starts the workload server (its own process) per
 * scenario, runs every contender in its own child process, alternating,
 * for several repetitions, takes medians, checks the targets, and writes a
 * markdown table and a JSON file.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CONTENDERS,
  parseRunName,
  type ContenderId,
  type ProgressMessage,
  type RunConfig,
  type RunName,
  type RunResult,
} from './contenders/probe.ts';
import type { ServerCounters, ServerReady, WorkloadConfig } from './workload/server.ts';

const here = dirname(fileURLToPath(import.meta.url));

export const LABELS: Record<ContenderId, string> = {
  raw: '(d) raw limit: node:http + JSON.parse + Map',
  rx: '(a) rx-informer',
  'rx-gzip': '(a-gz) rx-informer, compression gzip',
  'rx-record': '(a-rec) rx-informer, ListWatch recorded to a file',
  'rx-pb': '(a″-pb) rx-informer, lazyDecode over protobuf',
  'rx-strip': '(a′) rx-informer + stripManagedFields',
  'rx-lazy': '(a″) rx-informer, lazyDecode',
  'rx-lazy-strip': '(a‴) rx-informer, lazyDecode + stripManagedFields',
  'rx-meta': '(e) rx-informer, metadataOnly + stripManagedFields',
  'rx-100': '(b) rx-informer, 100 subscribers',
  cn: '(c) client-node makeInformer',
  'cn-100': '(c′) 100 client-node informers',
};

/** A run name's label: the contender's, and the other src/ it runs on. */
export function label(name: RunName): string {
  const { id, src, flags, recordTo } = parseRunName(name);
  return `${LABELS[id]}${recordTo ? ` (${recordTo})` : ''}${src ? ` on ${src}` : ''}${flags.length ? ` with ${flags.join(' ')}` : ''}`;
}

/** What a scenario is for, so targets can find it whatever its size. */
export type Role = 'watch' | 'relist' | 'large' | 'huge' | 'meta';

export interface Scenario {
  readonly name: string;
  readonly role: Role;
  readonly pods: number;
  readonly events: number;
  readonly relist: boolean;
  readonly contenders: readonly RunName[];
  /** Events counted by cn-100 (per informer); its 100 streams are otherwise too much data. */
  readonly fanOutEvents?: number;
  /** The workload server generates list items as it serves them (large stores), instead of holding them serialized. */
  readonly generate?: boolean;
}

export interface BenchOptions {
  /** Pods of the large scenario (store-size independence, sync at scale). */
  readonly pods: number;
  /** Pods of the relist scenario. */
  readonly relistPods: number;
  /** Pods of the watch scenario (the small store). */
  readonly smallPods: number;
  /** Pods of the huge scenario (full objects; run only when named: `--scenario huge`). */
  readonly hugePods?: number;
  /** Pods of the metadata-only scenario (run only when named: `--scenario meta`). */
  readonly metaPods?: number;
  /** Watch events of the watch and large scenarios. */
  readonly events: number;
  /** Watch events before the 410 in the relist scenario. */
  readonly relistEvents: number;
  /** Watch events each of the 100 client-node informers counts. */
  readonly fanOutEvents: number;
  readonly reps: number;
  /** Contenders to run; `rx@DIR` runs contender rx on another copy of src/ as well (see {@link RunName}). */
  readonly only?: readonly RunName[];
  readonly scenarios?: readonly string[];
  /** Give up on one contender run after this long. */
  readonly runTimeoutMs: number;
  readonly jsonPath?: string;
  readonly mdPath?: string;
  readonly cpuProfileDir?: string;
  readonly seed: number;
  /** One scenario only: the small store, every contender, with the relist (for the smoke test). */
  readonly combined?: boolean;
  /** Extra Node/V8 flags for every contender process (e.g. `--max-semi-space-size=64`). */
  readonly nodeFlags?: readonly string[];
  /** The workload server gzips lists for requests that accept gzip (rx-gzip; client-node asks for it too). */
  readonly gzip?: boolean;
  /** The workload server paces every response body to this many Mbit/s (one link shared by all), to play a network. */
  readonly linkMbit?: number;
  /** Pin the workload server to the last core and the contender to the others (taskset), so they do not fight over cores. Default: when taskset exists and there are ≥ 2 cores. */
  readonly pin?: boolean;
  readonly log: (line: string) => void;
}

export const FULL: Omit<BenchOptions, 'log'> = {
  pods: 100_000,
  relistPods: 50_000,
  smallPods: 1_000,
  events: 100_000,
  relistEvents: 20_000,
  fanOutEvents: 2_000,
  reps: 3,
  runTimeoutMs: 300_000,
  seed: 6,
};

export const QUICK: Omit<BenchOptions, 'log'> = {
  ...FULL,
  pods: 10_000,
  relistPods: 5_000,
  events: 10_000,
  relistEvents: 2_000,
  fanOutEvents: 300,
  reps: 1,
  runTimeoutMs: 120_000,
};

export const SMOKE: Omit<BenchOptions, 'log'> = {
  ...FULL,
  pods: 200,
  relistPods: 200,
  smallPods: 200,
  events: 1_000,
  relistEvents: 1_000,
  fanOutEvents: 100,
  reps: 1,
  runTimeoutMs: 60_000,
  combined: true,
};

const ALL: readonly ContenderId[] = CONTENDERS;

export function scenarios(options: Omit<BenchOptions, 'log'>): Scenario[] {
  const k = (n: number) => (n % 1000 === 0 ? `${n / 1000}k` : String(n));
  if (options.combined) {
    const smoke: Scenario = {
      name: `smoke-${k(options.smallPods)}`,
      role: 'watch',
      pods: options.smallPods,
      events: options.events,
      relist: true,
      contenders: ALL,
      fanOutEvents: options.fanOutEvents,
    };
    return [{ ...smoke, contenders: pick(ALL, options.only, true) }];
  }
  const list: Scenario[] = [
    {
      name: `watch-${k(options.smallPods)}`,
      role: 'watch',
      pods: options.smallPods,
      events: options.events,
      relist: false,
      contenders: ALL,
      fanOutEvents: options.fanOutEvents,
    },
    {
      name: `relist-${k(options.relistPods)}`,
      role: 'relist',
      pods: options.relistPods,
      events: options.relistEvents,
      relist: true,
      contenders: ['raw', 'rx', 'rx-gzip', 'rx-record', 'rx-pb', 'rx-strip', 'rx-lazy', 'rx-meta', 'cn'],
    },
    {
      name: `large-${k(options.pods)}`,
      role: 'large',
      pods: options.pods,
      events: options.events,
      relist: false,
      contenders: ['raw', 'rx', 'rx-gzip', 'rx-record', 'rx-pb', 'rx-strip', 'rx-lazy', 'rx-lazy-strip', 'rx-meta', 'cn'],
    },
  ];
  // Hundreds of thousands of objects: minutes per run, so only when asked for by name or role.
  const huge = options.hugePods ?? 200_000;
  const meta = options.metaPods ?? 500_000;
  const big: Scenario[] = [
    {
      name: `huge-${k(huge)}`,
      role: 'huge',
      pods: huge,
      events: options.events,
      relist: false,
      contenders: ['raw', 'rx', 'rx-lazy', 'rx-pb', 'rx-meta', 'cn'],
      generate: true,
    },
    {
      name: `meta-${k(meta)}`,
      role: 'meta',
      pods: meta,
      events: options.events,
      relist: true,
      contenders: ['raw', 'rx-meta', 'cn'],
      generate: true,
    },
  ];
  for (const s of big) if (options.scenarios?.includes(s.name) || options.scenarios?.includes(s.role)) list.push(s);
  return list
    .filter((s) => !options.scenarios || options.scenarios.includes(s.name) || options.scenarios.includes(s.role))
    .map((s) => ({ ...s, contenders: pick(s.contenders, options.only) }))
    .filter((s) => s.contenders.length > 0);
}

/** The runs of a scenario whose contenders are `available`: all of them, or those of `only` (variants included), in its order. */
function pick(available: readonly RunName[], only: readonly RunName[] | undefined, everything = false): RunName[] {
  // rx-gzip (compression), rx-record (a recorded ListWatch) and rx-pb (protobuf) run only when named (or in the smoke
  // run, which runs everything): each measures a setting.
  const named = ['rx-gzip', 'rx-record', 'rx-pb'];
  if (!only) return everything ? [...available] : available.filter((name) => !named.includes(name));
  return only.filter((name) => available.includes(parseRunName(name).id));
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  readonly os: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

/** What code was measured: the commit, uncommitted changes under src/, and a hash of src/ (to notice edits during a run). */
export interface SourceState {
  readonly commit: string;
  readonly dirty: readonly string[];
  readonly srcHash: string;
}

export function sourceState(): SourceState {
  const repo = join(here, '..');
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) hash.update(path).update(readFileSync(path));
    }
  };
  walk(join(repo, 'src'));
  return {
    commit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    dirty: git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean),
    srcHash: hash.digest('hex').slice(0, 12),
  };
}

export interface RunRecord extends Omit<Partial<RunResult>, 'contender'> {
  readonly contender: RunName;
  readonly rep: number;
  readonly ok: boolean;
  readonly error?: string;
  readonly server?: ServerCounters;
  /** Bytes the server wrote to this contender (lists and watches), in MB. */
  readonly wireMB?: number;
  /** Of which the lists (the sync, and the relist), in MB. */
  readonly listWireMB?: number;
  /** Problems the sanity checks found. */
  readonly problems: readonly string[];
}

export interface ScenarioReport {
  readonly scenario: Scenario;
  readonly workload: Omit<ServerReady, 'type' | 'port'>;
  readonly runs: readonly RunRecord[];
  readonly medians: Partial<Record<RunName, Record<string, number | string>>>;
}

export interface Target {
  readonly name: string;
  readonly measured: number | undefined;
  readonly threshold: string;
  readonly pass: boolean | undefined;
  readonly detail: string;
}

export interface BenchReport {
  readonly machine: Machine;
  readonly date: string;
  readonly source: SourceState;
  /** src/ changed while the bench ran: the figures mix versions. */
  readonly sourceChangedDuringRun: boolean;
  readonly options: Omit<BenchOptions, 'log'>;
  readonly scenarios: readonly ScenarioReport[];
  readonly targets: readonly Target[];
  readonly durationSec: number;
}

// ── processes ──────────────────────────────────────────────────────────────

/** CPU sets for the server and the contenders, or undefined when not pinning. */
function cpuSets(pin: boolean | undefined): { server: string; contender: string } | undefined {
  const cores = os.cpus().length;
  if (pin === false || cores < 2) return undefined;
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return { server: String(cores - 1), contender: cores === 2 ? '0' : `0-${cores - 2}` };
}

/** Forks a TypeScript entry point with IPC, optionally through `taskset`. */
function forkTs(
  entry: string,
  args: readonly string[],
  nodeFlags: readonly string[],
  cpus: string | undefined,
  stdio: 'inherit' | 'pipe',
): ChildProcess {
  const node = [...nodeFlags, entry, ...args];
  const [command, argv] = cpus ? ['taskset', ['-c', cpus, process.execPath, ...node]] : [process.execPath, node];
  return spawn(command, argv, { stdio: ['ignore', 'inherit', stdio, 'ipc'] });
}

interface ServerHandle {
  readonly ready: ServerReady;
  reset(maxEvents?: number): Promise<ServerCounters>;
  close(): Promise<void>;
}

async function startServer(config: WorkloadConfig, cpus: string | undefined): Promise<ServerHandle> {
  const child = forkTs(join(here, 'workload', 'server.ts'), [JSON.stringify(config)], ['--max-old-space-size=8192'], cpus, 'inherit');
  const ready = await new Promise<ServerReady>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ServerReady));
    child.once('exit', (code) => reject(new Error(`the workload server exited (${code}) before it was ready`)));
  });
  let pending: ((counters: ServerCounters) => void) | undefined;
  child.on('message', (message: { type: string; counters?: ServerCounters }) => {
    if (message.type === 'reset-ok' && message.counters) pending?.(message.counters);
  });
  return {
    ready,
    reset: (maxEvents?: number) =>
      new Promise<ServerCounters>((resolve) => {
        pending = resolve;
        child.send({ type: 'reset', ...(maxEvents === undefined ? {} : { maxEvents }) });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send({ type: 'close' });
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

function runChild(
  config: RunConfig,
  timeoutMs: number,
  cpus: string | undefined,
  nodeFlags: readonly string[],
): Promise<{ result?: RunResult; error?: string }> {
  return new Promise((resolve) => {
    const child = forkTs(
      join(here, 'child.ts'),
      [JSON.stringify(config)],
      ['--expose-gc', '--max-old-space-size=12288', ...nodeFlags],
      cpus,
      'pipe',
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    let phase = 'start';
    let result: RunResult | undefined;
    let error: string | undefined;
    const timer = setTimeout(() => {
      error = `timed out after ${timeoutMs} ms in phase ${phase}`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('message', (message: RunResult | ProgressMessage | { type: 'error'; message: string }) => {
      if (message.type === 'result') result = message;
      else if (message.type === 'phase') phase = message.phase;
      else if (message.type === 'error') {
        error = message.message;
        child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (!result && !error)
        error = `exited (${code ?? signal}) in phase ${phase}${stderr ? `: ${stderr.trim().split('\n').slice(-5).join(' | ')}` : ''}`;
      resolve(result ? { result } : { error: error ?? 'unknown' });
    });
  });
}

// ── statistics ─────────────────────────────────────────────────────────────

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function medianOf(runs: readonly RunRecord[]): Record<string, number | string> {
  const ok = runs.filter((r) => r.ok);
  const out: Record<string, number | string> = { runs: ok.length };
  if (ok.length === 0) return out;
  for (const key of Object.keys(ok[0]!)) {
    const values = ok.map((r) => (r as unknown as Record<string, unknown>)[key]).filter((v): v is number => typeof v === 'number');
    if (values.length === ok.length && key !== 'rep') out[key] = Math.round(median(values) * 100) / 100;
  }
  return out;
}

function check(run: RunResult, scenario: Scenario, finalCount: number, events: number): string[] {
  const problems: string[] = [];
  if (run.syncedObjects !== scenario.pods) problems.push(`synced ${run.syncedObjects} objects, expected ${scenario.pods}`);
  if (run.eventsProcessed !== events) problems.push(`processed ${run.eventsProcessed} events, expected ${events}`);
  if (scenario.relist && run.contender !== 'cn-100' && run.relistObjects !== finalCount)
    problems.push(`relist cached ${run.relistObjects ?? 'nothing'}, expected ${finalCount}`);
  if (!(run.eventsPerSec > 0) || !(run.syncMs > 0) || !(run.heapPerObjectKB > 0) || !(run.peakRssMB > 0))
    problems.push('a figure is not positive');
  if (run.notes) problems.push(run.notes);
  return problems;
}

// ── the run ────────────────────────────────────────────────────────────────

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const started = performance.now();
  const log = options.log;
  const source = sourceState();
  const pinning = cpuSets(options.pin);
  if (pinning) log(`pinning: workload server on CPU ${pinning.server}, contenders on CPU ${pinning.contender}`);
  log(
    `measuring src/ at ${source.commit}${source.dirty.length ? ` + ${source.dirty.length} uncommitted file(s)` : ''} (hash ${source.srcHash})`,
  );
  const reports: ScenarioReport[] = [];
  for (const scenario of scenarios(options)) {
    log(
      `▶ ${scenario.name}: ${scenario.pods} pods, ${scenario.events} events${scenario.relist ? ', then a 410 and a relist' : ''}; ${scenario.contenders.join(', ')} × ${options.reps}`,
    );
    const server = await startServer(
      {
        pods: scenario.pods,
        events: scenario.events,
        relist: scenario.relist,
        seed: options.seed,
        generate: !!scenario.generate,
        ...(options.linkMbit ? { linkMbit: options.linkMbit } : {}),
        ...(options.gzip ? { gzip: true } : {}),
        // Protobuf answers (encoded once at startup) only when a contender asks for them: other runs cost nothing more.
        ...(scenario.contenders.some((name) => parseRunName(name).id === 'rx-pb') ? { protobuf: true } : {}),
      },
      pinning?.server,
    );
    const { type: _type, port, ...workload } = server.ready;
    log(
      `  workload server on :${port}: ${(workload.listBytes / 1e6).toFixed(1)} MB list, ${(workload.watchBytes / 1e6).toFixed(1)} MB of watch events, ${workload.meanPodBytes} B/pod, ready in ${workload.setupMs} ms`,
    );
    const runs: RunRecord[] = [];
    try {
      for (let rep = 0; rep < options.reps; rep++) {
        // Alternate, rotating the order each repetition.
        const order = scenario.contenders.map((_, i) => scenario.contenders[(i + rep) % scenario.contenders.length]!);
        for (const contender of order) {
          const events =
            parseRunName(contender).id === 'cn-100' ? Math.min(scenario.events, scenario.fanOutEvents ?? scenario.events) : scenario.events;
          await server.reset(events);
          const { id, src, flags, recordTo } = parseRunName(contender);
          const config: RunConfig = {
            contender: id,
            runName: contender,
            ...(src ? { src: resolve(src) } : {}),
            ...(recordTo ? { recordTo } : {}),
            scenario: scenario.name,
            port,
            pods: scenario.pods,
            events,
            relist: scenario.relist && id !== 'cn-100',
            finalCount: workload.finalCount,
            ...(options.cpuProfileDir ? { cpuProfileDir: options.cpuProfileDir } : {}),
          };
          const { result, error } = await runChild(config, options.runTimeoutMs, pinning?.contender, [
            ...(options.nodeFlags ?? []),
            ...flags,
          ]);
          const counters = await server.reset();
          const problems = result ? check(result, scenario, workload.finalCount, events) : [error ?? 'failed'];
          const mb = (bytes: number) => Math.round(bytes / 1e4) / 100;
          const wire = { wireMB: mb(counters.listBytesWritten + counters.watchBytesWritten), listWireMB: mb(counters.listBytesWritten) };
          const record: RunRecord = {
            ...(result ?? {}),
            contender,
            rep,
            ok: !!result && problems.length === 0,
            server: counters,
            ...wire,
            problems,
            ...(error ? { error } : {}),
          };
          runs.push(record);
          log(
            result
              ? `  ${contender.padEnd(8)} rep ${rep + 1}: sync ${result.syncMs} ms (CPU ${result.syncCpuMs}), ${result.eventsPerSec} ev/s, ${result.cpuUsPerEvent} µs CPU/ev, ${result.heapPerObjectKB} KB/obj, RSS ${result.peakRssMB} MB` +
                  (result.mainCpuUsPerEvent !== undefined
                    ? ` (main ${result.mainCpuUsPerEvent}, helpers ${result.helperCpuUsPerEvent}; system ${result.systemUsPerEvent})`
                    : '') +
                  (result.scavengesPer1k !== undefined
                    ? `; per 1k events: ${result.scavengesPer1k} scavenges ${result.scavengeMsPer1k} ms, ${result.markCompactsPer1k} mark-compacts ${result.markCompactMsPer1k} ms, incremental ${result.incrementalMsPer1k} ms`
                    : '') +
                  (result.relistPeakLiveMB !== undefined
                    ? `, relist live peak ${result.relistPeakLiveMB} MB / steady ${result.heapEndMB} MB`
                    : '') +
                  `; wire ${wire.wireMB} MB` +
                  (result.checksum !== undefined ? `, checksum ${result.checksum}` : '') +
                  (counters.protobufRequests > 0
                    ? ` (protobuf: ${counters.protobufRequests} requests, ${mb(counters.protobufBytesWritten)} MB)`
                    : '') +
                  (problems.length ? `  ✗ ${problems.join('; ')}` : '')
              : `  ${contender.padEnd(8)} rep ${rep + 1}: ✗ ${error}`,
          );
        }
      }
    } finally {
      await server.close();
    }
    const medians: ScenarioReport['medians'] = {};
    for (const contender of scenario.contenders) medians[contender] = medianOf(runs.filter((r) => r.contender === contender));
    reports.push({ scenario, workload, runs, medians });
    // Written after every scenario, so a long run stopped part-way keeps what it measured.
    write(reports, false);
  }
  return write(reports, true);

  function write(done: readonly ScenarioReport[], last: boolean): BenchReport {
    const { log: _log, ...rest } = options;
    const sourceChangedDuringRun = sourceState().srcHash !== source.srcHash;
    if (sourceChangedDuringRun && last) log('⚠ src/ changed during the run: the figures mix versions');
    const report: BenchReport = {
      machine: machine(),
      date: new Date().toISOString(),
      source,
      sourceChangedDuringRun,
      options: { ...rest, pin: !!pinning },
      scenarios: done,
      targets: targets(done),
      durationSec: Math.round((performance.now() - started) / 1000),
    };
    if (options.jsonPath) {
      mkdirSync(dirname(options.jsonPath), { recursive: true });
      writeFileSync(options.jsonPath, JSON.stringify(report, null, 2) + '\n');
    }
    if (options.mdPath) {
      mkdirSync(dirname(options.mdPath), { recursive: true });
      writeFileSync(options.mdPath, markdown(report));
    }
    return report;
  }
}

// ── targets ────────────────────────────────────────────────────────────────

export function targets(reports: readonly ScenarioReport[]): Target[] {
  const byRole = (role: Role) => reports.find((r) => r.scenario.role === role);
  const get = (role: Role, contender: ContenderId, key: string): number | undefined => {
    const value = byRole(role)?.medians[contender]?.[key];
    return typeof value === 'number' && (byRole(role)?.medians[contender]?.runs ?? 0) !== 0 ? value : undefined;
  };
  const out: Target[] = [];
  /** A figure to read, with no threshold. */
  const info = (name: string, a: number | undefined, b: number | undefined, detail: string) => {
    const measured = a !== undefined && b !== undefined && b > 0 ? Math.round((a / b) * 100) / 100 : undefined;
    out.push({ name, measured, threshold: 'info', pass: undefined, detail });
  };
  const ratio = (name: string, a: number | undefined, b: number | undefined, op: '≥' | '≤', limit: number, detail: string) => {
    const measured = a !== undefined && b !== undefined && b > 0 ? Math.round((a / b) * 100) / 100 : undefined;
    out.push({
      name,
      measured,
      threshold: `${op} ${limit}`,
      pass: measured === undefined ? undefined : op === '≥' ? measured >= limit : measured <= limit,
      detail,
    });
  };
  const watch = byRole('watch')?.scenario.name ?? 'watch';
  const relist = byRole('relist');
  const large = byRole('large');
  // Wall-clock events/s decide; the CPU-time ratio (less sensitive to a busy machine) is shown beside it.
  const cpuRatio = (role: Role, a: ContenderId, b: ContenderId) => {
    const ca = get(role, a, 'cpuUsPerEvent');
    const cb = get(role, b, 'cpuUsPerEvent');
    return ca && cb ? `; by CPU time per event ${(cb / ca).toFixed(2)}× (${ca} vs ${cb} µs)` : '';
  };
  ratio(
    'watch throughput (a) / (d)',
    get('watch', 'rx', 'eventsPerSec'),
    get('watch', 'raw', 'eventsPerSec'),
    '≥',
    0.9,
    `${watch}: events/s${cpuRatio('watch', 'rx', 'raw')}`,
  );
  ratio(
    'watch throughput (a) / (c)',
    get('watch', 'rx', 'eventsPerSec'),
    get('watch', 'cn', 'eventsPerSec'),
    '≥',
    1.2,
    `${watch}: events/s${cpuRatio('watch', 'rx', 'cn')}`,
  );
  // Sync against the raw limit (issue #22): eager ≤ 1.0×, lazy ≤ 0.7×, metadata-only ≤ 0.3×, at the relist's size and the large one.
  for (const s of [relist, large]) {
    if (!s) continue;
    const role = s.scenario.role;
    // The sync's CPU time (less sensitive to a busy machine) beside its wall-clock time.
    const syncCpu = (a: ContenderId) => {
      const ca = get(role, a, 'syncCpuMs');
      const cb = get(role, 'raw', 'syncCpuMs');
      return ca && cb ? `; by CPU time ${(ca / cb).toFixed(2)}× (${ca} vs ${cb} ms)` : '';
    };
    ratio(
      `sync of ${s.scenario.pods} pods (a) / (d)`,
      get(role, 'rx', 'syncMs'),
      get(role, 'raw', 'syncMs'),
      '≤',
      1,
      `${s.scenario.name}: ms to N synced${syncCpu('rx')}`,
    );
    ratio(
      `sync of ${s.scenario.pods} pods, lazyDecode (a″) / (d)`,
      get(role, 'rx-lazy', 'syncMs'),
      get(role, 'raw', 'syncMs'),
      '≤',
      0.7,
      `${s.scenario.name}: ms to N synced${syncCpu('rx-lazy')}`,
    );
    ratio(
      `sync of ${s.scenario.pods} pods, metadataOnly (e) / (d)`,
      get(role, 'rx-meta', 'syncMs'),
      get(role, 'raw', 'syncMs'),
      '≤',
      0.3,
      `${s.scenario.name}: ms to N synced${syncCpu('rx-meta')}`,
    );
    // Issue #36: lazy decoding over protobuf (rx-pb, run only when named).
    ratio(
      `sync of ${s.scenario.pods} pods, lazyDecode over protobuf (a″-pb) / (d)`,
      get(role, 'rx-pb', 'syncMs'),
      get(role, 'raw', 'syncMs'),
      '≤',
      0.25,
      `${s.scenario.name}: ms to N synced${syncCpu('rx-pb')}`,
    );
  }
  if (large) {
    ratio(
      `events/s at ${large.scenario.pods} cached, (a) / (c)`,
      get('large', 'rx', 'eventsPerSec'),
      get('large', 'cn', 'eventsPerSec'),
      '≥',
      1.2,
      `${large.scenario.name}: events/s${cpuRatio('large', 'rx', 'cn')}`,
    );
    ratio(
      `events/s at ${large.scenario.pods} cached, lazyDecode (a″) / (c)`,
      get('large', 'rx-lazy', 'eventsPerSec'),
      get('large', 'cn', 'eventsPerSec'),
      '≥',
      1.5,
      `${large.scenario.name}: events/s${cpuRatio('large', 'rx-lazy', 'cn')}`,
    );
    ratio(
      `events/s at ${large.scenario.pods} cached, lazyDecode over protobuf (a″-pb) / (c)`,
      get('large', 'rx-pb', 'eventsPerSec'),
      get('large', 'cn', 'eventsPerSec'),
      '≥',
      2,
      `${large.scenario.name}: events/s${cpuRatio('large', 'rx-pb', 'cn')}`,
    );
    ratio(
      'bytes on the wire, protobuf (a″-pb) / JSON (a″)',
      get('large', 'rx-pb', 'wireMB'),
      get('large', 'rx-lazy', 'wireMB'),
      '≤',
      0.7,
      `${large.scenario.name}: list and watch bytes the server wrote`,
    );
  }
  const heapRole: Role = large ? 'large' : relist ? 'relist' : 'watch';
  const heapName = byRole(heapRole)?.scenario.name ?? heapRole;
  ratio(
    'heap per cached object (a) / (d)',
    get(heapRole, 'rx', 'heapPerObjectKB'),
    get(heapRole, 'raw', 'heapPerObjectKB'),
    '≤',
    1,
    `${heapName}: heap after sync and GC, per object`,
  );
  ratio(
    'heap per cached object, managedFields stripped (a′) / (d)',
    get(heapRole, 'rx-strip', 'heapPerObjectKB'),
    get(heapRole, 'raw', 'heapPerObjectKB'),
    '≤',
    0.6,
    `${heapName}: (d) keeps managedFields`,
  );
  ratio(
    'fan-out: (b) 100 subscribers / (a) 1 subscriber',
    get('watch', 'rx-100', 'eventsPerSec'),
    get('watch', 'rx', 'eventsPerSec'),
    '≥',
    0.8,
    `${watch}: events/s${cpuRatio('watch', 'rx-100', 'rx')}`,
  );
  if (large) {
    const ca = get('large', 'rx', 'cpuUsPerEvent');
    const cb = get('watch', 'rx', 'cpuUsPerEvent');
    ratio(
      `store-size independence: (a) events/s at ${large.scenario.pods} / at ${byRole('watch')?.scenario.pods ?? '?'} cached`,
      get('large', 'rx', 'eventsPerSec'),
      get('watch', 'rx', 'eventsPerSec'),
      '≥',
      0.85,
      `${large.scenario.name} vs ${watch}${ca && cb ? `; by CPU time per event ${(cb / ca).toFixed(2)}× (${ca} vs ${cb} µs); (d) gets ${((get('large', 'raw', 'eventsPerSec') ?? 0) / (get('watch', 'raw', 'eventsPerSec') ?? 1)).toFixed(2)}×` : ''}`,
    );
  }
  // Lazy decoding (a″): the same targets, where the design changes what is measured.
  ratio(
    'watch throughput, lazyDecode (a″) / (d)',
    get('watch', 'rx-lazy', 'eventsPerSec'),
    get('watch', 'raw', 'eventsPerSec'),
    '≥',
    0.9,
    `${watch}: events/s${cpuRatio('watch', 'rx-lazy', 'raw')}`,
  );
  ratio(
    'watch throughput, lazyDecode (a″) / (c)',
    get('watch', 'rx-lazy', 'eventsPerSec'),
    get('watch', 'cn', 'eventsPerSec'),
    '≥',
    1.2,
    `${watch}: events/s${cpuRatio('watch', 'rx-lazy', 'cn')}`,
  );
  ratio(
    'heap per cached object, lazyDecode (a″) / (d)',
    get(heapRole, 'rx-lazy', 'heapPerObjectKB'),
    get(heapRole, 'raw', 'heapPerObjectKB'),
    '≤',
    1,
    `${heapName}: heap after sync and GC, per object`,
  );
  if (large) {
    ratio(
      `store-size independence, lazyDecode: (a″) events/s at ${large.scenario.pods} / at ${byRole('watch')?.scenario.pods ?? '?'} cached`,
      get('large', 'rx-lazy', 'eventsPerSec'),
      get('watch', 'rx-lazy', 'eventsPerSec'),
      '≥',
      0.85,
      `${large.scenario.name} vs ${watch}`,
    );
  }
  // Both levers a user has, together (a‴).
  ratio(
    'heap per cached object, lazyDecode + stripManagedFields (a‴) / (d)',
    get(heapRole, 'rx-lazy-strip', 'heapPerObjectKB'),
    get(heapRole, 'raw', 'heapPerObjectKB'),
    '≤',
    0.6,
    `${heapName}: (d) keeps managedFields`,
  );
  if (large) {
    ratio(
      `store-size independence, lazyDecode + stripManagedFields: (a‴) events/s at ${large.scenario.pods} / at ${byRole('watch')?.scenario.pods ?? '?'} cached`,
      get('large', 'rx-lazy-strip', 'eventsPerSec'),
      get('watch', 'rx-lazy-strip', 'eventsPerSec'),
      '≥',
      0.8,
      `${large.scenario.name} vs ${watch}`,
    );
  }
  // Metadata-only (e): against the raw limit and against full objects.
  ratio(
    'heap per cached object, metadataOnly (e) / (d)',
    get(heapRole, 'rx-meta', 'heapPerObjectKB'),
    get(heapRole, 'raw', 'heapPerObjectKB'),
    '≤',
    0.2,
    `${heapName}: heap after sync and GC, per object`,
  );
  const metaRole: Role = large ? 'large' : 'watch';
  const metaName = byRole(metaRole)?.scenario.name ?? metaRole;
  info(
    'events/s, metadataOnly (e) / (a)',
    get(metaRole, 'rx-meta', 'eventsPerSec'),
    get(metaRole, 'rx', 'eventsPerSec'),
    `${metaName}: events/s${cpuRatio(metaRole, 'rx-meta', 'rx')}`,
  );
  info(
    'bytes on the wire, metadataOnly (e) / (a)',
    get(metaRole, 'rx-meta', 'wireMB'),
    get(metaRole, 'rx', 'wireMB'),
    `${metaName}: list and watch bytes the server wrote; (d) reads what (a) reads`,
  );
  if (relist)
    ratio(
      'relist peak heap / steady heap (a)',
      get('relist', 'rx', 'relistPeakLiveMB'),
      get('relist', 'rx', 'heapEndMB'),
      '≤',
      1.5,
      `${relist.scenario.name}: live heap (after GC) at the relist's high-water mark vs after the watch`,
    );
  // Hundreds of thousands of objects (run only when asked for).
  const huge = byRole('huge');
  if (huge) {
    const h = huge.scenario.name;
    info(
      `events/s at ${huge.scenario.pods} cached, (a) / (c)`,
      get('huge', 'rx', 'eventsPerSec'),
      get('huge', 'cn', 'eventsPerSec'),
      `${h}: events/s${cpuRatio('huge', 'rx', 'cn')}`,
    );
    info(
      `events/s at ${huge.scenario.pods} cached, lazyDecode (a″) / (c)`,
      get('huge', 'rx-lazy', 'eventsPerSec'),
      get('huge', 'cn', 'eventsPerSec'),
      `${h}: events/s${cpuRatio('huge', 'rx-lazy', 'cn')}`,
    );
    info(`sync of ${huge.scenario.pods} pods (a) / (d)`, get('huge', 'rx', 'syncMs'), get('huge', 'raw', 'syncMs'), `${h}: ms to N synced`);
    info(
      `sync of ${huge.scenario.pods} pods, metadataOnly (e) / (d)`,
      get('huge', 'rx-meta', 'syncMs'),
      get('huge', 'raw', 'syncMs'),
      `${h}: ms to N synced`,
    );
  }
  const meta = byRole('meta');
  if (meta) {
    const m = meta.scenario.name;
    const kb = get('meta', 'rx-meta', 'heapPerObjectKB');
    out.push({
      name: `heap per cached object, metadataOnly (e), ${meta.scenario.pods} pods, KB`,
      measured: kb,
      threshold: '≤ 1',
      pass: kb === undefined ? undefined : kb <= 1,
      detail: `${m}: heap after sync and GC, per object (an absolute figure, not a ratio)`,
    });
    ratio(
      `sync of ${meta.scenario.pods} pods, metadataOnly (e) / (d) full objects`,
      get('meta', 'rx-meta', 'syncMs'),
      get('meta', 'raw', 'syncMs'),
      '≤',
      0.3,
      `${m}: ms to N synced; (d) reads the full objects of the same pods`,
    );
    ratio(
      `relist peak RSS / steady RSS, metadataOnly (e), ${meta.scenario.pods} pods`,
      get('meta', 'rx-meta', 'relistPeakRssMB'),
      get('meta', 'rx-meta', 'rssSteadyMB'),
      '≤',
      1.5,
      `${m}: resident set sampled during the relist vs after the watch`,
    );
  }
  return out;
}

// ── markdown ───────────────────────────────────────────────────────────────

const fmt = (value: number | string | undefined, digits = 0): string => {
  if (value === undefined || value === '') return '–';
  if (typeof value === 'string') return value;
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
};

export function markdown(report: BenchReport): string {
  const m = report.machine;
  const lines: string[] = [];
  lines.push('# rx-informer benchmark', '');
  lines.push(`${report.date} · ${m.cpu} · ${m.cores} cores · ${m.memoryGiB} GiB · Node ${m.node} · ${m.os}`);
  const src = report.source;
  lines.push(
    `src/ at ${src.commit}${src.dirty.length ? ` with uncommitted changes to ${src.dirty.map((d) => d.slice(3)).join(', ')}` : ''} (hash ${src.srcHash}).`,
  );
  if (report.sourceChangedDuringRun) lines.push('', '**Warning: src/ changed during this run; the figures mix versions.**');
  lines.push(
    `${report.options.reps} repetition(s) per contender, alternating; medians. ${report.options.pin ? 'Workload server and contender pinned to separate cores (taskset). ' : ''}${report.options.nodeFlags?.length ? `Contender flags: ${report.options.nodeFlags.join(' ')}. ` : ''}The run took ${report.durationSec} s.`,
    '',
  );
  lines.push('## Targets', '', '| target | measured | wanted | result | from |', '|---|---:|---:|:---:|---|');
  for (const t of report.targets)
    lines.push(
      `| ${t.name} | ${t.measured === undefined ? '–' : `${t.measured}×`} | ${t.threshold} | ${t.pass === undefined ? 'n/a' : t.pass ? 'PASS' : '**FAIL**'} | ${t.detail} |`,
    );
  lines.push('');
  for (const s of report.scenarios) {
    const w = s.workload;
    lines.push(
      `## ${s.scenario.name}: ${s.scenario.pods.toLocaleString('en-US')} pods, then ${s.scenario.events.toLocaleString('en-US')} watch events${s.scenario.relist ? ', then a 410 Expired and one relist' : ''}`,
      '',
      `Workload: ${w.meanPodBytes} B of JSON per pod, list ${(w.listBytes / 1e6).toFixed(1)} MB, watch stream ${(w.watchBytes / 1e6).toFixed(1)} MB; metadata-only ${w.meanMetaPodBytes} B per pod, ${(w.metaListBytes / 1e6).toFixed(1)} MB and ${(w.metaWatchBytes / 1e6).toFixed(1)} MB.` +
        (s.scenario.contenders.includes('cn-100')
          ? ` (c′) counts the first ${s.scenario.fanOutEvents ?? s.scenario.events} events on each of its 100 streams.`
          : ''),
      '',
    );
    const relist = s.scenario.relist;
    const head = [
      'contender',
      'sync ms',
      'sync CPU ms',
      'events/s',
      'CPU µs/event',
      'heap base MB',
      'heap synced MB',
      'KB/object',
      'heap end MB',
      'peak RSS MB',
      'wire MB (lists)',
    ];
    if (relist) head.push('relist peak sampled MB', 'relist peak live MB', 'live peak / steady');
    head.push('runs ok');
    lines.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
    for (const contender of s.scenario.contenders) {
      const r = s.medians[contender] ?? {};
      const n = (key: string) => r[key] as number | undefined;
      const runs = s.runs.filter((x) => x.contender === contender);
      const row = [
        label(contender),
        fmt(n('syncMs')),
        fmt(n('syncCpuMs')),
        fmt(n('eventsPerSec')),
        fmt(n('cpuUsPerEvent'), 1),
        fmt(n('heapBaselineMB'), 1),
        fmt(n('heapSyncedMB'), 1),
        fmt(n('heapPerObjectKB'), 2),
        fmt(n('heapEndMB'), 1),
        fmt(n('peakRssMB')),
        n('wireMB') === undefined ? '–' : `${fmt(n('wireMB'), 1)} (${fmt(n('listWireMB'), 1)})`,
      ];
      if (relist) {
        const live = n('relistPeakLiveMB');
        const steady = n('heapEndMB');
        row.push(fmt(n('relistPeakSampledMB'), 1), fmt(live, 1), live !== undefined && steady ? `${(live / steady).toFixed(2)}×` : '–');
      }
      row.push(`${runs.filter((x) => x.ok).length}/${runs.length}`);
      lines.push(`| ${row.join(' | ')} |`);
    }
    const gcHead = [
      'contender',
      'CPU µs/event',
      'main thread',
      'helper threads',
      'scavenges /1k ev',
      'scavenge ms /1k ev',
      'mark-compacts /1k ev',
      'mark-compact ms /1k ev',
      'incremental marking ms /1k ev',
      'sync GC pauses ms',
      'sync mark-compacts',
    ];
    if (s.scenario.contenders.some((c) => s.medians[c]?.['scavengesPer1k'] !== undefined)) {
      lines.push(
        '',
        "Where the watch phase's CPU went (main thread: JavaScript and the collector's pauses; helper threads: concurrent marking, parallel scavenging, sweeping), and the collector, per 1,000 events (pauses as `gc` performance entries report them):",
        '',
      );
      lines.push(`| ${gcHead.join(' | ')} |`, `|${gcHead.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
      for (const contender of s.scenario.contenders) {
        const r = s.medians[contender] ?? {};
        const n = (key: string) => r[key] as number | undefined;
        lines.push(
          `| ${[label(contender), fmt(n('cpuUsPerEvent'), 1), fmt(n('mainCpuUsPerEvent'), 1), fmt(n('helperCpuUsPerEvent'), 1), fmt(n('scavengesPer1k'), 2), fmt(n('scavengeMsPer1k'), 1), fmt(n('markCompactsPer1k'), 3), fmt(n('markCompactMsPer1k'), 1), fmt(n('incrementalMsPer1k'), 1), fmt(n('syncGcPauseMs')), fmt(n('syncMarkCompacts'))].join(' | ')} |`,
        );
      }
    }
    const failures = s.runs.filter((x) => !x.ok);
    if (failures.length) {
      lines.push('');
      for (const f of failures) lines.push(`- ✗ ${f.contender} rep ${f.rep + 1}: ${f.problems.join('; ')}`);
    }
    lines.push('');
  }
  lines.push(
    '## How to read this',
    '',
    '- Every contender runs in its own process (`--expose-gc`) against the same bench-local streaming server (bench/workload/server.ts, its own process; not the API-server emulator in packages/emulator), which serializes the workload once and writes as fast as the socket takes it.',
    "- sync: from starting the informer (imports done) to holding all N listed pods (lists paged 500 at a time; client-node lists unpaged, as its generated API does). heap: `heapUsed + external` after two forced GCs (Node keeps strings over ~1 MB, such as a list page, outside V8's heap; the heap base holds ≈ 4 MB of V8's compilation cache, Node's type stripper, which a sync frees only if it runs six mark-compacts: bench/contenders/heap.ts); KB/object = (heap synced − heap base) / N.",
    '- (e) metadata-only: the server answers PartialObjectMetadata (serialized once at startup, like the full objects); wire MB is what the server wrote to the contender (lists in brackets, relist included).',
    "- events/s and CPU µs/event: the watch phase, from opening the server's gate (after the synced heap is measured) to the M-th event delivered to (each) subscriber; CPU is the contender process's user+system time.",
    '- relist: after the M events the server sends a 410 Expired; "steady" is the heap after GC at that point; "peak sampled" the highest `heapUsed` seen (5 ms timer and every 1,000 relisted objects, garbage included); "peak live" the heap after GC at the relist\'s high-water mark (rx: the first relisted event, when old and new objects are both referenced; client-node: the list response in hand; raw: the last page parsed).',
    '',
  );
  return lines.join('\n');
}
