/**
 * Contenders (a) and (b): rx-informer's full pipeline (HTTP transport → listAndWatch
 * → decode → deltaFifo → reduceDeltas/Store → events$), with 1 or 100
 * subscribers on events$, optionally with the `stripManagedFields` transform
 * or with lazy decoding (the subscriber reads `metadata.name`, as a handler
 * that enqueues keys does: the other members stay unparsed).
 *
 * Contender (a-gz): (a) asking for gzip (`compression: 'gzip'`), which the workload server then sends.
 *
 * Contender (a-rec): (a) over `record(httpListWatch(…), traceWriter(…))`, redaction at its default,
 * writing to a file in os.tmpdir() through `traceFileSink` (as `rx-informer record` writes: whole lines,
 * one system call per burst), the file deleted when the process exits; `rx-record=PATH` writes to a file in the
 * directory PATH (e.g. /dev/shm, a tmpfs) or to the file PATH (e.g. /dev/null) instead.
 *
 * Contender (a″-pb): (a″) over Kubernetes' protobuf (`encoding: 'protobuf'`), which the workload server then answers
 * (lists and watches, encoded once at startup), its subscriber reading `metadata.name` as (a″)'s does.
 *
 * Contender (e): the same pipeline on `metadataOnly(Pod)` with
 * `stripManagedFields`: the server sends PartialObjectMetadata (no spec, no
 * status) and the cache keeps metadata without managedFields.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { take } from 'rxjs';
import type * as Library from '../../src/index.ts';
import type { KubeObject, Resource } from '../../src/index.ts';
import type * as Pipeline from '../../src/pipeline.ts';
import { benchKubeConfig } from './kubeconfig.ts';
import type { Probe, RunConfig } from './probe.ts';

export async function runRx(
  config: RunConfig,
  probe: Probe,
  options: {
    subscribers: number;
    strip: boolean;
    lazy?: boolean;
    metadata?: boolean;
    gzip?: boolean;
    record?: boolean;
    protobuf?: boolean;
  },
): Promise<void> {
  const { informer, metadataOnly, Pod, stripManagedFields } = (await import(
    config.src ? pathToFileURL(join(config.src, 'index.ts')).href : '../../src/index.ts'
  )) as typeof Library;
  const kc = benchKubeConfig(config.port);
  const resource: Resource<KubeObject> = options.metadata ? (metadataOnly(Pod) as unknown as Resource<KubeObject>) : Pod;
  // BENCH_PAGE_SIZE: list page size (default: the informer's, 500), to measure its effect.
  const pageSize = Number(process.env['BENCH_PAGE_SIZE']) || undefined;
  const http = {
    ...(options.lazy ? { lazyDecode: true } : {}),
    ...(options.protobuf ? { encoding: 'protobuf' as const } : {}),
    compression: options.gzip ? ('gzip' as const) : ('none' as const),
  };
  const source = options.record ? await recorded(config, kc, resource, http) : kc;
  const pods = informer(source, resource, {
    ...(options.strip ? { transform: stripManagedFields } : {}),
    http,
    ...(pageSize ? { pageSize } : {}),
  });
  const size = () => {
    let n = -1;
    pods.store$.pipe(take(1)).subscribe((store) => (n = store.size));
    return n;
  };
  const { pods: n, events: target, finalCount } = config;
  let checksum = 0;
  const counts: { initial: number; live: number }[] = [];
  probe.begin(size);
  for (let s = 0; s < options.subscribers; s++) {
    const count = { initial: 0, live: 0 };
    counts.push(count);
    const driver = s === options.subscribers - 1;
    pods.events$.subscribe({
      next: (event) => {
        checksum += event.object.metadata.name.length;
        if (event.isInInitialList) {
          if (++count.initial === n && driver) probe.synced();
          return;
        }
        const live = ++count.live;
        if (!driver) return;
        if (live <= target) {
          if (live === target) {
            const behind = counts.filter((c) => c.live !== target || c.initial !== n).length;
            if (behind > 0) probe.notes.push(`${behind} subscribers saw other counts`);
            probe.watched(live);
          }
          return;
        }
        // The relist: every cached object comes again (as a resync update).
        const relisted = live - target;
        if (relisted === 1) probe.relistHighWater();
        else if (relisted % 1000 === 0) probe.sample();
        if (relisted === finalCount) probe.relistDone(relisted);
      },
      error: (error: unknown) => probe.fail(error),
    });
  }
  probe.checksum = () => checksum;
}

/** The HTTP ListWatch of `resource` recorded to a fresh file in os.tmpdir(), deleted when the process exits. */
async function recorded(
  config: RunConfig,
  kc: ReturnType<typeof benchKubeConfig>,
  resource: Resource<KubeObject>,
  http: Pipeline.HttpTransportOptions,
): Promise<Pipeline.ListWatch> {
  const { httpListWatch, record, traceFileSink, traceWriter } = (await import(
    config.src ? pathToFileURL(join(config.src, 'pipeline.ts')).href : '../../src/pipeline.ts'
  )) as typeof Pipeline;
  // Where: the run name's `=PATH` (rx-record=/dev/shm), else BENCH_RECORD_FILE (e.g. /dev/null: what recording costs
  // but for the file system's share), else os.tmpdir(). A directory gets a fresh file, anything else is written to.
  const to = config.recordTo ?? (process.env['BENCH_RECORD_FILE'] || tmpdir());
  const dir = statSync(to, { throwIfNoEntry: false })?.isDirectory() ? mkdtempSync(join(to, 'rx-informer-bench-record-')) : undefined;
  const file = traceFileSink(dir === undefined ? to : join(dir, 'trace.jsonl'));
  process.on('exit', () => {
    file.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const writer = traceWriter({ write: (text) => file.write(text), writeParts: (parts) => file.writeParts(parts), resources: ['pods'] });
  return record(httpListWatch(kc, { resource }, http), writer, { resource: 'pods' });
}
