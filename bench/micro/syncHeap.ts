/**
 * The heap an informer holds after one sync of the workload server's pods, after GC:
 * `node --expose-gc bench/micro/syncHeap.ts PODS [eager|lazy] [forced|settled] [SRC_DIR] [SNAPSHOT_FILE]`.
 *
 * The workload server runs in its own process; this process holds only the informer. The baseline is measured
 * before the informer starts, after `gc()` twice (`forced`, what the bench did until 2026-11-25) or after a
 * memory-reducing collection (`settled`, bench/contenders/heap.ts); the synced heap after `gc()` twice, then again
 * after a memory-reducing collection. SRC_DIR: another copy of `src/` (holding `index.ts`, a `node_modules` beside
 * it). With SNAPSHOT_FILE, a heap snapshot is written once synced, for retainer analysis.
 */
import { fork } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { filter, take } from 'rxjs';
import type * as Library from '../../src/index.ts';
import { collect, settle } from '../contenders/heap.ts';
import { benchKubeConfig } from '../contenders/kubeconfig.ts';
import { GcTally } from '../contenders/probe.ts';
import type { ServerReady } from '../workload/server.ts';

const pods = Number(process.argv[2] ?? 2000);
const lazy = process.argv[3] === 'lazy';
const settled = process.argv[4] === 'settled';
const src = process.argv[5] ? resolve(process.argv[5]) : join(import.meta.dirname, '../../src');
const snapshot = process.argv[6];
const MB = 1e6;
const space = (name: string) => (getHeapSpaceStatistics().find((s) => s.space_name === name)?.space_used_size ?? 0) / MB;
const heap = () => ({
  heapUsed: +(process.memoryUsage().heapUsed / MB).toFixed(2),
  largeObjects: +space('large_object_space').toFixed(2),
  trusted: +space('trusted_space').toFixed(2),
});

const server = fork(join(import.meta.dirname, '../workload/server.ts'), [JSON.stringify({ pods, events: 10, relist: false, seed: 1 })], {
  stdio: 'inherit',
});
const ready = await new Promise<ServerReady>((done) => server.once('message', (m) => done(m as ServerReady)));
const lib = (await import(pathToFileURL(join(src, 'index.ts')).href)) as typeof Library;
if (settled) settle();
else collect();
const before = heap();
const tally = new GcTally();
const informer = lib.informer(benchKubeConfig(ready.port), lib.Pod, { http: { lazyDecode: lazy } });
let cached = 0;
const keep = informer.store$.subscribe((store) => (cached = store.size));
informer.synced$.pipe(filter(Boolean), take(1)).subscribe(() =>
  setImmediate(() => {
    const { markCompacts } = tally.stop();
    collect();
    const after = heap();
    settle();
    const afterSettled = heap();
    const perPod = (mb: number) => +(((mb - before.heapUsed) * 1000) / cached).toFixed(3);
    const row = {
      src: src.replace(join(import.meta.dirname, '../..'), '.'),
      decode: lazy ? 'lazy' : 'eager',
      baseline: settled ? 'settled' : 'forced',
      pods: cached,
      markCompactsDuringSync: markCompacts,
      before,
      after,
      afterSettled,
      kbPerPod: perPod(after.heapUsed),
      kbPerPodSettled: perPod(afterSettled.heapUsed),
    };
    console.log(JSON.stringify(row));
    if (snapshot) writeHeapSnapshot(snapshot);
    keep.unsubscribe();
    server.kill();
    process.exit(0);
  }),
);
