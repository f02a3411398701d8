/**
 * Issue #36: the heap a lazily decoded protobuf object holds once cached, in process. N distinct pods of the bench
 * workload (bench/workload/pods.ts) as watch frames, each decoded by the transport's kept path (`decodeWatchFrame`:
 * the walk, then the lazy decode), `metadata.name` read, and cached by key; heap (`heapUsed + arrayBuffers`, after
 * `gc()`) before and after, per cached object. Medians of the rounds, each in a fresh cache.
 *
 *   node --expose-gc bench/micro/pbHeap.ts [pods=20000] [rounds=5] [src=../../src]
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod, podKey } from '../workload/pods.ts';

const [podsArg = '20000', roundsArg = '5', srcArg] = process.argv.slice(2);
const PODS = Number(podsArg);
const src =
  srcArg === undefined || srcArg === 'src'
    ? new URL('../../src/', import.meta.url)
    : pathToFileURL(`${isAbsolute(srcArg) ? srcArg : resolve(srcArg)}/`);
const decode = (await import(
  new URL('1-transport/protobuf/decode.ts', src).href
)) as typeof import('../../src/1-transport/protobuf/decode.ts');
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const frames = Array.from({ length: PODS }, (_, index) => ({
  key: podKey(index),
  bytes: encodeWatchFrame('MODIFIED', makePod({ index, resourceVersion: index + 1, revision: 1 })).subarray(4),
}));
const heap = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

const perObject: number[] = [];
for (let round = 0; round < Number(roundsArg); round++) {
  const before = heap();
  const cache = new Map<string, unknown>();
  let names = 0;
  for (const f of frames) {
    const { object } = decode.decodeWatchFrame(f.bytes, undefined);
    names += ((object.metadata as { name: string }).name ?? '').length;
    cache.set(f.key, object);
  }
  perObject.push((heap() - before) / cache.size);
  if (names === 0) throw new Error('no names read');
  cache.clear(); // the next round's baseline without this round's objects
}
const median = [...perObject].sort((a, b) => a - b)[perObject.length >> 1]!;
console.log(JSON.stringify({ src: srcArg ?? 'src', pods: PODS, bytesPerObject: Math.round(median) }));
