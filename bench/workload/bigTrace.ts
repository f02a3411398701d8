/**
 * A large trace and what replaying it holds: `writeBigTrace` streams to disk a recording of `pods` realistic pods
 * (≈ 4.8 KB of JSON each, ./pods.ts) listed in pages of `pageSize`, then one watch of `events` MODIFIED events
 * (1 ms apart) over those pods; `replayHeap` replays a trace into an informer under a TestScheduler and samples
 * the memory still referenced (heap and ArrayBuffers, after full collections) while it plays.
 *
 * Used by spec/testing/replayHeap.spec.ts (20 MB) and bench/micro/replayHeap.ts (100 MB).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { TestScheduler } from 'rxjs/testing';
import { Pod, informer, type Store, type Pod as PodObject } from '../../src/index.ts';
import type { Trace, TraceSource } from '../../src/pipeline.ts';
import { replayListWatch } from '../../src/testing/index.ts';
import { makePod } from './pods.ts';

export interface BigTraceShape {
  /** Pods listed, and then modified in turn. */
  readonly pods: number;
  readonly pageSize: number;
  /** MODIFIED events of the watch. */
  readonly events: number;
}

/** A shape of about `bytes` bytes: `pods` pods, the rest in watch events. */
export function shapeOf(bytes: number, pods = 200, pageSize = 50): BigTraceShape {
  const pod = JSON.stringify(makePod({ index: 0, resourceVersion: 1, revision: 0 })).length + 90;
  return { pods, pageSize, events: Math.max(0, Math.ceil((bytes - pods * pod) / pod)) };
}

/** Writes the trace to `path` (in ≈ 1 MB writes); returns its size. */
export function writeBigTrace(path: string, shape: BigTraceShape): number {
  const fd = openSync(path, 'w');
  let pending: string[] = [];
  let size = 0;
  let bytes = 0;
  const line = (record: unknown) => {
    const text = `${JSON.stringify(record)}\n`;
    pending.push(text);
    size += text.length;
    if (size > 1 << 20) flush();
  };
  const flush = () => {
    bytes += writeSync(fd, pending.join(''));
    pending = [];
    size = 0;
  };
  try {
    const resources = ['pods'];
    line({ type: 'header', format: 'rx-informer-trace', version: 1, startedAt: '2026-01-01T00:00:00.000Z', resources, redacted: true });
    let rv = shape.pods + 1;
    let id = 0;
    let at = 0;
    for (let from = 0; from < shape.pods; from += shape.pageSize, id++, at++) {
      const token = from + shape.pageSize < shape.pods ? `page-${id + 1}` : undefined;
      const options = from === 0 ? { limit: 500, resourceVersion: '0' } : { continue: `page-${id}`, limit: 500 };
      line({ type: 'list', at, id, options });
      const items = [];
      for (let index = from; index < Math.min(shape.pods, from + shape.pageSize); index++)
        items.push(makePod({ index, resourceVersion: index + 1, revision: 0 }));
      line({ type: 'page', at, id, resourceVersion: String(rv), ...(token ? { continue: token } : {}), items });
      line({ type: 'end', at, id, how: 'complete' });
    }
    const watch = id;
    line({ type: 'watch', at, id: watch, options: { allowWatchBookmarks: true, resourceVersion: String(rv), timeoutSeconds: 300 } });
    for (let n = 0; n < shape.events; n++) {
      const index = n % shape.pods;
      const object = makePod({ index, resourceVersion: ++rv, revision: Math.floor(n / shape.pods) + 1 });
      line({ type: 'event', at: ++at, id: watch, event: { type: 'MODIFIED', object } });
    }
    line({ type: 'end', at: ++at, id: watch, how: 'unsubscribe' });
    line({ type: 'stop', at, why: 'closed' });
    flush();
  } finally {
    closeSync(fd);
  }
  return bytes;
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Bytes still referenced: the heap and ArrayBuffers after full collections (the second frees Buffers the first orphaned). */
export function retainedBytes(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

export interface ReplayHeap {
  /** The most referenced at any sample, above what was before the trace was read. */
  readonly peakBytes: number;
  readonly events: number;
  readonly storeSize: number;
  readonly mismatches: readonly string[];
}

/**
 * Reads a trace with `read` (kept referenced until the end, as a replay keeps it) and replays it into a pod
 * informer under a TestScheduler; samples what is referenced after the read and every `sampleEvery` events.
 */
export function replayHeap(read: () => string | Trace | TraceSource, sampleEvery = 1000): ReplayHeap {
  const baseline = retainedBytes();
  let peak = 0;
  const sample = () => (peak = Math.max(peak, retainedBytes() - baseline));
  const trace = read();
  sample();
  const scheduler = new TestScheduler(() => undefined);
  let events = 0;
  let store: Store<PodObject> | undefined;
  const replay = replayListWatch(trace, { scheduler });
  scheduler.run(() => {
    const cache = informer(replay, Pod, { scheduler });
    const subscription = cache.events$.subscribe(() => {
      if (++events % sampleEvery === 0) sample();
    });
    subscription.add(cache.store$.subscribe((s) => (store = s)));
    subscription.add(replay.finished$.subscribe(() => subscription.unsubscribe()));
  });
  sample();
  // The trace stays referenced until here, as it is by a replay still running.
  if (typeof trace === 'object' && 'release' in trace) trace.release();
  return { peakBytes: peak, events, storeSize: store?.list().length ?? 0, mismatches: replay.mismatches.map((m) => m.message) };
}
