/**
 * rx-informer benchmark suite.
 *
 *   node bench/run.ts                  full run (≈ 10–15 min on 2 cores)
 *   node bench/run.ts --quick          small sizes, 1 repetition (≈ 1–2 min)
 *   node bench/run.ts --smoke          tiny sizes, 1 repetition (≈ 15 s)
 *
 * Options (after the preset):
 *   --pods N            pods of the large scenario (default 100000)
 *   --relist-pods N     pods of the relist scenario (default 50000)
 *   --small-pods N      pods of the watch scenario (default 1000)
 *   --huge-pods N       pods of the huge scenario, full objects (default 200000; only with --scenario huge)
 *   --meta-pods N       pods of the metadata-only scenario, with a relist (default 500000; only with --scenario meta)
 *   --events M          watch events of the watch and large scenarios (default 100000)
 *   --relist-events M   watch events before the 410 in the relist scenario (default 20000)
 *   --fanout-events M   events counted per informer by the 100 client-node informers (default 2000)
 *   --reps K            repetitions per contender (default 3)
 *   --only a,b          contenders: raw, rx, rx-gzip, rx-record, rx-pb (those three only when named), rx-strip, rx-lazy, rx-lazy-strip, rx-meta, rx-100, cn, cn-100;
 *                       rx…@DIR runs that rx contender on another copy of src/ (DIR holds its index.ts),
 *                       NAME:--flag runs it with extra Node/V8 flags (e.g. raw:--minor-ms),
 *                       alternating with the others, e.g. --only rx,rx@/tmp/base/src
 *                       rx-record=PATH writes its trace to a file in the directory PATH (default os.tmpdir()) or to
 *                       the file PATH, e.g. --only rx,rx-record,rx-record=/dev/shm,rx-record=/dev/null
 *   --scenario s,t      scenarios by name or role: watch, relist, large
 *   --json FILE         JSON output (default bench/results/latest.json for a full run with the preset's
 *                       sizes and every contender and scenario; bench/results/partial.json, untracked, otherwise)
 *   --md FILE           markdown output (default bench/results/latest.md, or partial.md, as --json)
 *   --cpu-prof DIR      write a CPU profile of each phase (sync, watch, relist) of each run
 *   --timeout SEC       per-run time limit
 *   --node-flags "…"    extra Node/V8 flags for the contender processes (e.g. "--max-semi-space-size=64")
 *   --gzip              the workload server gzips lists for requests that accept gzip (level 1, as kube-apiserver):
 *                       rx-gzip asks for it (compression gzip), and so does client-node (cn) by default; rx does not
 *   --link-mbit N       the workload server paces response bodies to N Mbit/s (one link shared by all), to play a
 *                       network, e.g. --only rx,rx-gzip --gzip --link-mbit 100
 *   --no-pin            do not pin the server and the contenders to separate cores
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRunName, type RunName } from './contenders/probe.ts';
import { FULL, QUICK, SMOKE, runBench, type BenchOptions } from './runner.ts';

const here = dirname(fileURLToPath(import.meta.url));

function parse(argv: readonly string[]): BenchOptions {
  const flags = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    if (['quick', 'smoke', 'help', 'no-pin', 'gzip'].includes(name)) switches.add(name);
    else if (inline !== undefined) flags.set(name, inline);
    else {
      const value = argv[++i];
      if (value === undefined) throw new Error(`--${name} needs a value`);
      flags.set(name, value);
    }
  }
  if (switches.has('help')) {
    console.log(
      'usage: node bench/run.ts [--quick | --smoke] [--pods N] [--events M] [--reps K] [--only raw,rx,…] [--json FILE] [--md FILE] [--cpu-prof DIR]',
    );
    process.exit(0);
  }
  const preset = switches.has('smoke') ? SMOKE : switches.has('quick') ? QUICK : FULL;
  const int = (name: string, fallback: number) => {
    const value = flags.get(name);
    if (value === undefined) return fallback;
    const n = Number(value.replace(/_/g, ''));
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
    return n;
  };
  const only = flags
    .get('only')
    ?.split(',')
    .map((s) => s.trim()) as RunName[] | undefined;
  for (const c of only ?? []) parseRunName(c);
  const results = join(here, 'results');
  // latest.* are tracked and are what the README's table comes from: only a whole run (the full preset, every
  // contender and scenario, its sizes) writes them by default; any other run writes the untracked partial.*.
  const neutral = new Set(['json', 'md', 'cpu-prof', 'timeout']);
  const partial = preset !== FULL || switches.has('gzip') || [...flags.keys()].some((name) => !neutral.has(name));
  const stem = partial ? 'partial' : 'latest';
  const cpuProf = flags.get('cpu-prof');
  const scenarioNames = flags
    .get('scenario')
    ?.split(',')
    .map((s) => s.trim());
  return {
    ...preset,
    pods: int('pods', preset.pods),
    relistPods: int('relist-pods', preset.relistPods),
    smallPods: int('small-pods', preset.smallPods),
    hugePods: int('huge-pods', preset.hugePods ?? 200_000),
    metaPods: int('meta-pods', preset.metaPods ?? 500_000),
    events: int('events', preset.events),
    relistEvents: int('relist-events', preset.relistEvents),
    fanOutEvents: int('fanout-events', preset.fanOutEvents),
    reps: int('reps', preset.reps),
    ...(flags.has('link-mbit') ? { linkMbit: int('link-mbit', 1) } : {}),
    ...(switches.has('gzip') ? { gzip: true } : {}),
    runTimeoutMs: int('timeout', preset.runTimeoutMs / 1000) * 1000,
    ...(only ? { only } : {}),
    ...(scenarioNames ? { scenarios: scenarioNames } : {}),
    jsonPath: resolve(flags.get('json') ?? join(results, `${stem}.json`)),
    mdPath: resolve(flags.get('md') ?? join(results, `${stem}.md`)),
    ...(cpuProf ? { cpuProfileDir: resolve(cpuProf) } : {}),
    ...(switches.has('no-pin') ? { pin: false } : {}),
    ...(flags.has('node-flags') ? { nodeFlags: flags.get('node-flags')!.split(/\s+/).filter(Boolean) } : {}),
    log: (line: string) => console.log(line),
  };
}

const options = parse(process.argv.slice(2));
const report = await runBench(options);
console.log('');
for (const t of report.targets)
  console.log(`${t.pass === undefined ? 'n/a ' : t.pass ? 'PASS' : 'FAIL'}  ${t.name}: ${t.measured ?? '–'}× (wanted ${t.threshold})`);
const failedRuns = report.scenarios.flatMap((s) => s.runs.filter((r) => !r.ok));
console.log(`\nwrote ${options.mdPath} and ${options.jsonPath} (${report.durationSec} s)`);
if (failedRuns.length) {
  console.error(`${failedRuns.length} run(s) failed their checks`);
  process.exitCode = 1;
}
