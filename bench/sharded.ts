/**
 * `npm run bench:sharded [-- --pods 30000 --shards 30 --reps 3]`: what a sharded informer saves.
 *
 * One workload server (bench/workload/server.ts, ≈ 4.7 KB pods) and, per repetition, one
 * process per run (bench/contenders/sharded.ts), each listing the pods once:
 *
 * - CPU per dropped object: a sharded informer holding no shard (every pod dropped after its
 *   metadata is read) against an unsharded one decoding and caching every pod, lazily (the
 *   sharded informer's default) and eagerly (the informer's default). Target ≤ 0.3×.
 * - For N = 2, 3, 5 replicas, every replica's cached count (target within 15 % of 1/N of the
 *   pods) and heap per cached object (target within 10 % of the unsharded lazy informer's).
 *
 * CPU is the contender process's user + system time from subscribing to `synced$`; heap is
 * `heapUsed` after GC, minus the process's heap before the informer started. Medians over the
 * repetitions. Writes bench/results/sharded-latest.{md,json}. `--gzip`: the workload server gzips
 * lists (as kube-apiserver; the contenders ask it by default), a run not recorded.
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerReady } from './workload/server.ts';
import type { ShardedRunConfig, ShardedRunResult } from './contenders/sharded.ts';

const here = dirname(fileURLToPath(import.meta.url));
const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const PODS = flag('pods', 30_000);
const SHARDS = flag('shards', 30);
const REPS = flag('reps', 3);
const REPLICAS = [2, 3, 5];
const profileAt = process.argv.indexOf('--cpu-prof');
const profileDir = profileAt >= 0 ? process.argv[profileAt + 1] : undefined;
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? process.argv[onlyAt + 1]?.split(',') : undefined;
const flagsAt = process.argv.indexOf('--node-flags');
/** Extra Node/V8 flags for every contender process (e.g. `--node-flags "--single-threaded-gc"`); a run with them is not recorded. */
const nodeFlags = flagsAt >= 0 ? (process.argv[flagsAt + 1] ?? '').split(' ').filter(Boolean) : [];
/** `--gzip`: the workload server gzips lists (level 1, as kube-apiserver over 128 KiB), which the contenders ask for by default; a run with it is not recorded. */
const gzip = process.argv.includes('--gzip');

const server = spawn(
  process.execPath,
  [join(here, 'workload', 'server.ts'), JSON.stringify({ pods: PODS, events: 0, relist: false, seed: 1, protobuf: true, gzip })],
  {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  },
);
const ready = await new Promise<ServerReady>((resolve, reject) => {
  server.once('message', (message) => resolve(message as ServerReady));
  server.once('exit', (code) => reject(new Error(`the workload server exited (${code})`)));
});
const reset = () =>
  new Promise<void>((resolve) => {
    server.once('message', () => resolve());
    server.send({ type: 'reset' });
  });
console.log(`workload: ${PODS} pods, ${ready.meanPodBytes} B/pod, ${SHARDS} shards, ${REPS} repetition(s), ${cpus().length} cores`);

async function run(config: Omit<ShardedRunConfig, 'port'>): Promise<ShardedRunResult> {
  await reset();
  const profile = profileDir
    ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${config.mode}-${config.replicas}-${config.replica}.cpuprofile`]
    : [];
  const child = spawn(
    process.execPath,
    ['--expose-gc', ...nodeFlags, ...profile, join(here, 'contenders', 'sharded.ts'), JSON.stringify({ ...config, port: ready.port })],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  return new Promise<ShardedRunResult>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ShardedRunResult));
    child.once('exit', (code) => reject(new Error(`contender ${JSON.stringify(config)} exited (${code}) without a result`)));
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

type Key = string;
const results = new Map<Key, ShardedRunResult[]>();
const plan: Omit<ShardedRunConfig, 'port'>[] = [
  { mode: 'full', lazy: true, shards: SHARDS, replicas: 1, replica: 0 },
  { mode: 'full', lazy: false, shards: SHARDS, replicas: 1, replica: 0 },
  { mode: 'drop', lazy: true, shards: SHARDS, replicas: 1, replica: 0 },
  ...REPLICAS.flatMap((n) =>
    Array.from({ length: n }, (_, replica) => ({ mode: 'shard' as const, lazy: true, shards: SHARDS, replicas: n, replica })),
  ),
  // Protobuf (issue #36): an unsharded lazy informer decoding every object, a sharded one dropping every object, replicas of N = 3.
  { mode: 'full', lazy: true, shards: SHARDS, replicas: 1, replica: 0, encoding: 'protobuf' },
  { mode: 'drop', lazy: true, shards: SHARDS, replicas: 1, replica: 0, encoding: 'protobuf' },
  ...Array.from({ length: 3 }, (_, replica) => ({
    mode: 'shard' as const,
    lazy: true,
    shards: SHARDS,
    replicas: 3,
    replica,
    encoding: 'protobuf' as const,
  })),
];
const keyOf = (c: Omit<ShardedRunConfig, 'port'>) =>
  `${c.mode}${c.lazy ? '' : '-eager'}${c.encoding === 'protobuf' ? '-pb' : ''}${c.mode === 'shard' ? ` ${c.replica + 1}/${c.replicas}` : ''}`;
/** `--only` names modes (`full`, `drop`, `shard`), or with `-pb` the protobuf runs of a mode. */
const wanted = (c: Omit<ShardedRunConfig, 'port'>) =>
  !only || only.includes(`${c.mode}${c.encoding === 'protobuf' ? '-pb' : ''}`) || (c.encoding !== 'protobuf' && only.includes(c.mode));
for (let rep = 0; rep < REPS; rep++) {
  for (const config of rep % 2 ? [...plan].reverse() : plan) {
    if (!wanted(config)) continue;
    const result = await run(config);
    results.set(keyOf(config), [...(results.get(keyOf(config)) ?? []), result]);
    console.log(
      `  rep ${rep + 1} ${keyOf(config).padEnd(12)} cached ${String(result.cached).padStart(6)}  CPU ${result.cpuMs.toFixed(0).padStart(5)} ms  heap/object ${result.heapPerObjectKB.toFixed(2)} KB` +
        `  (main thread ${result.mainCpuMs.toFixed(0)} ms; ${result.scavenges} scavenges ${result.scavengeMs.toFixed(0)} ms,` +
        ` ${result.markCompacts} mark-compacts ${result.markCompactMs.toFixed(0)} ms)`,
    );
  }
}
server.send({ type: 'close' });
setTimeout(() => server.kill('SIGKILL'), 3000).unref();

const med = (key: Key, pick: (r: ShardedRunResult) => number) => median((results.get(key) ?? []).map(pick));
const fullLazyCpu = med('full', (r) => r.cpuMs) / PODS;
const fullEagerCpu = med('full-eager', (r) => r.cpuMs) / PODS;
const dropCpu = med('drop', (r) => r.cpuMs) / PODS;
/** What an informer with nothing cached adds to the heap (the drop runs): the same in every run, so left out of "per object". */
const fixedMB = med('drop', (r) => r.heapSyncedMB - r.heapBaselineMB);
const perObjectKB = (r: ShardedRunResult) => ((r.heapSyncedMB - r.heapBaselineMB - fixedMB) * 1000) / Math.max(1, r.cached);
const fullHeap = med('full', perObjectKB);
const fullHeapRaw = med('full', (r) => r.heapPerObjectKB);
/** Main-thread CPU µs per object, then the collector's runs during the sync (medians). */
const collector = (key: Key) =>
  `${((med(key, (r) => r.mainCpuMs) * 1000) / PODS).toFixed(1)} | ${med(key, (r) => r.markCompacts)}, ${med(key, (r) => r.scavenges)}`;
const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
const lines: string[] = [
  `# Sharded informer (${new Date().toISOString().slice(0, 10)})`,
  '',
  `${PODS} pods (${ready.meanPodBytes} B each on the wire), ${SHARDS} shards, ${REPS} repetition(s), medians; ${cpus().length} cores, shared with other work while measured (not pinned).`,
  '',
  '| | CPU µs/object | main thread µs/object | mark-compacts, scavenges | vs unsharded lazy | vs unsharded eager | target |',
  '|---|---:|---:|---:|---:|---:|---|',
  `| unsharded, lazy decoding | ${(fullLazyCpu * 1000).toFixed(1)} | ${collector('full')} | 1.00 | ${(fullLazyCpu / fullEagerCpu).toFixed(2)} | |`,
  `| unsharded, eager decoding | ${(fullEagerCpu * 1000).toFixed(1)} | ${collector('full-eager')} | ${(fullEagerCpu / fullLazyCpu).toFixed(2)} | 1.00 | |`,
  `| sharded, every object dropped | ${(dropCpu * 1000).toFixed(1)} | ${collector('drop')} | ${(dropCpu / fullLazyCpu).toFixed(2)} | ${(dropCpu / fullEagerCpu).toFixed(2)} | ≤ 0.3 × a fully decoded one (eager): ${pass(dropCpu / fullEagerCpu <= 0.3)} |`,
  '',
  `Heap per cached object: (heap after GC once synced − heap before the informer − ${fixedMB.toFixed(2)} MB) / cached objects, where ${fixedMB.toFixed(2)} MB is what the same process shows`,
  'with nothing cached (the drop runs). The heap once synced is measured after a memory-reducing collection (bench/contenders/heap.ts),',
  "so it never holds the cache V8 frees on its own (Node's type stripper, ≈ 4 MB, freed only in syncs that run six mark-compacts). The column",
  'in brackets leaves that constant in, so it weighs more on a replica that caches fewer objects.',
  `Unsharded lazy informer: ${fullHeap.toFixed(2)} KB per cached object (${fullHeapRaw.toFixed(2)} KB without taking the fixed part out).`,
  '',
  '| replicas | replica | cached | vs 1/N | heap KB/object | vs unsharded | (without taking the fixed part out) | targets (±15 % count, ±10 % heap) |',
  '|---:|---:|---:|---:|---:|---:|---:|---|',
];
let allPass = dropCpu / fullEagerCpu <= 0.3;
for (const n of REPLICAS)
  for (let replica = 0; replica < n; replica++) {
    const key = `shard ${replica + 1}/${n}`;
    const cached = med(key, (r) => r.cached);
    const heap = med(key, perObjectKB);
    const heapRaw = med(key, (r) => r.heapPerObjectKB);
    const countRatio = cached / (PODS / n);
    const heapRatio = heap / fullHeap;
    const ok = Math.abs(countRatio - 1) <= 0.15 && Math.abs(heapRatio - 1) <= 0.1;
    allPass &&= ok;
    lines.push(
      `| ${n} | ${replica + 1} | ${cached} | ${countRatio.toFixed(3)} | ${heap.toFixed(2)} | ${heapRatio.toFixed(3)} | ${(heapRaw / fullHeapRaw).toFixed(3)} | ${pass(ok)} |`,
    );
  }
// Protobuf (issue #36 step 2): the same lists read as protobuf by the same informers.
const fullPbCpu = med('full-pb', (r) => r.cpuMs) / PODS;
const dropPbCpu = med('drop-pb', (r) => r.cpuMs) / PODS;
const fixedPbMB = med('drop-pb', (r) => r.heapSyncedMB - r.heapBaselineMB);
const perObjectPbKB = (r: ShardedRunResult) => ((r.heapSyncedMB - r.heapBaselineMB - fixedPbMB) * 1000) / Math.max(1, r.cached);
lines.push(
  '',
  `Protobuf (\`http.encoding: 'protobuf'\`, the workload's lists in protobuf: ${(ready.pbListBytes / PODS).toFixed(0)} B/pod on the wire against ${ready.meanPodBytes} in JSON):`,
  '',
  '| | CPU µs/object | main thread µs/object | mark-compacts, scavenges | vs the same over JSON | vs unsharded lazy, protobuf | target |',
  '|---|---:|---:|---:|---:|---:|---|',
  `| unsharded, lazy decoding (checked on arrival) | ${(fullPbCpu * 1000).toFixed(1)} | ${collector('full-pb')} | ${(fullPbCpu / fullLazyCpu).toFixed(2)} | 1.00 | |`,
  `| sharded, every object dropped | ${(dropPbCpu * 1000).toFixed(1)} | ${collector('drop-pb')} | ${(dropPbCpu / dropCpu).toFixed(2)} | ${(dropPbCpu / fullPbCpu).toFixed(2)} | ≤ 0.2 × a decoded one: ${pass(dropPbCpu / fullPbCpu <= 0.2)} |`,
  '',
  '| replicas | replica | cached | CPU µs/object (all listed) | vs the same replica over JSON | heap KB/cached object | vs unsharded lazy, protobuf |',
  '|---:|---:|---:|---:|---:|---:|---:|',
);
for (let replica = 0; replica < 3; replica++) {
  const [pb, json] = [`shard-pb ${replica + 1}/3`, `shard ${replica + 1}/3`];
  const cpu = med(pb, (r) => r.cpuMs) / PODS;
  lines.push(
    `| 3 | ${replica + 1} | ${med(pb, (r) => r.cached)} | ${(cpu * 1000).toFixed(1)} | ${(cpu / (med(json, (r) => r.cpuMs) / PODS)).toFixed(2)} | ${med(pb, perObjectPbKB).toFixed(2)} | ${(med(pb, perObjectPbKB) / med('full-pb', perObjectPbKB)).toFixed(3)} |`,
  );
}
const text = lines.join('\n');
console.log(`\n${text}`);
if (only || nodeFlags.length > 0 || gzip) process.exit(0); // a partial run is not recorded
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'sharded-latest.md'), `${text}\n`);
writeFileSync(
  join(here, 'results', 'sharded-latest.json'),
  `${JSON.stringify({ pods: PODS, shards: SHARDS, reps: REPS, allPass, runs: Object.fromEntries(results) }, null, 2)}\n`,
);
