/**
 * The sharded-informer contender, in its own process (`--expose-gc`): argv[2]
 * is a {@link ShardedRunConfig} as JSON. It lists the workload server's pods
 * once, with:
 *
 * - `full`: an unsharded `informer(kc, Pod)` (lazy decoding when `lazy`): every object decoded and cached;
 * - `shard`: `shardedInformer(kc, Pod, shards)` holding the shards that replica `replica` of
 *   `replicas` gets by capped rendezvous hashing (`assignShards`), fixed for the run;
 * - `drop`: `shardedInformer` holding no shard: every object dropped after its metadata.
 *
 * With `encoding: 'protobuf'`, each of them reads the workload's protobuf lists (`http.encoding`).
 *
 * It measures the process CPU (user + system) from subscribing to `synced$` turning true,
 * and the heap after GC before and after; the result goes back over IPC.
 */
import { BehaviorSubject, EMPTY, defer, filter, from, take, type ObservableInput } from 'rxjs';
import { Pod, informer, type Informer } from '../../src/index.ts';
import { shardedInformer } from '../../src/leaderelection/index.ts';
import { type ShardSource } from '../../src/pipeline.ts';
import { assignShards } from '../../src/leaderelection/hash.ts';
import { shardOf } from '../../src/leaderelection/index.ts';
import { collect, settle } from './heap.ts';
import { benchKubeConfig } from './kubeconfig.ts';
import { GcTally, mainCpuMs } from './probe.ts';

export interface ShardedRunConfig {
  readonly port: number;
  readonly mode: 'full' | 'shard' | 'drop';
  readonly lazy: boolean;
  readonly shards: number;
  readonly replicas: number;
  readonly replica: number;
  /** `http.encoding` (issue #36): protobuf lists from the workload server. Default `json`. */
  readonly encoding?: 'json' | 'protobuf';
}

export interface ShardedRunResult {
  readonly type: 'result';
  readonly config: ShardedRunConfig;
  readonly cached: number;
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly heapBaselineMB: number;
  readonly heapSyncedMB: number;
  readonly heapPerObjectKB: number;
  /** The main thread's share of `cpuMs` (the rest: V8's helper threads, libuv's). */
  readonly mainCpuMs: number;
  /** The collector from subscribing to synced: scavenges, mark-compacts and their pauses (ms). */
  readonly scavenges: number;
  readonly scavengeMs: number;
  readonly markCompacts: number;
  readonly markCompactMs: number;
}

/** A ShardSource that holds a fixed set of shards (the bench measures caching, not Leases). */
export function fixedShards(count: number, held: ReadonlySet<number>): ShardSource {
  const shardOfKey = (key: string) => shardOf(key, count);
  return {
    shards: count,
    shardOf: shardOfKey,
    held$: new BehaviorSubject(held),
    owns: (key) => held.has(shardOfKey(key)),
    gate: <R>(key: string, work: () => ObservableInput<R>) => defer(() => (held.has(shardOfKey(key)) ? from(work()) : EMPTY)),
  };
}

const heapMB = () => {
  collect();
  return process.memoryUsage().heapUsed / 1e6;
};

if (process.argv[1] && import.meta.filename === process.argv[1] && process.send) {
  const config = JSON.parse(process.argv[2] ?? '{}') as ShardedRunConfig;
  const kc = benchKubeConfig(config.port);
  const http = { lazyDecode: config.lazy, encoding: config.encoding ?? 'json' };
  const members = Array.from({ length: config.replicas }, (_, i) => `replica-${i}`);
  const owners = assignShards(config.shards, members, 'pods');
  const held = new Set(config.mode === 'shard' ? owners.flatMap((owner, shard) => (owner === members[config.replica] ? [shard] : [])) : []);
  const heapBaselineMB = heapMB();
  const started = Date.now();
  const cpu = process.cpuUsage();
  const main0 = mainCpuMs() ?? 0;
  const gcTally = new GcTally();
  const pods: Informer<Pod> =
    config.mode === 'full' ? informer(kc, Pod, { http }) : shardedInformer(kc, Pod, fixedShards(config.shards, held), { http });
  let cached = 0;
  const keep = pods.store$.subscribe((store) => (cached = store.size));
  pods.synced$.pipe(filter(Boolean), take(1)).subscribe(() => {
    const used = process.cpuUsage(cpu);
    const mainMs = (mainCpuMs() ?? 0) - main0;
    const collector = gcTally.stop();
    const wallMs = Date.now() - started;
    // Measured on the next turn, once the synced step has been delivered.
    setImmediate(() => {
      // After a memory-reducing collection (the process ends here): it never holds what V8 keeps only as a cache and
      // frees once enough mark-compacts have run, so every run's heap differs from its baseline by the same cache
      // (taken out with the drop runs' fixed part), whatever its sync ran (see ./heap.ts). Not before the sync:
      // a memory-reducing collection changes what the collector does next (the drop runs' 8 mark-compacts vanish).
      settle();
      const heapSyncedMB = process.memoryUsage().heapUsed / 1e6;
      const result: ShardedRunResult = {
        type: 'result',
        config,
        cached,
        cpuMs: (used.user + used.system) / 1000,
        wallMs,
        heapBaselineMB,
        heapSyncedMB,
        heapPerObjectKB: cached > 0 ? ((heapSyncedMB - heapBaselineMB) * 1000) / cached : 0,
        mainCpuMs: mainMs,
        scavenges: collector.scavenges,
        scavengeMs: collector.scavengeMs,
        markCompacts: collector.markCompacts,
        markCompactMs: collector.markCompactMs,
      };
      process.send!(result, () => {
        keep.unsubscribe();
        process.exit(0);
      });
    });
  });
}
