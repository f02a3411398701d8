/**
 * Issue #36: what a kept protobuf object allocates, counted. The bench workload's watch events (bench/workload/pods.ts)
 * as frames made once; each decoded by the transport's kept path (`decodeWatchFrame`: the walk, then the lazy decode),
 * `metadata.name` read, cached by key, as a store holds them; or (`list`) the same pods as one list body decoded by
 * `decodeListBody`. After a warm-up, one pass is counted by V8's sampling heap profiler at a 1-byte interval (every
 * allocation a sample, those the collector freed since included): objects and bytes per event by the function that
 * allocated them, and by size. The functions' names are V8's (an inlined callee is counted in its own name).
 *
 *   node bench/micro/pbAlloc.ts [events=2000] [watch|list] [src=../../src]
 */
import { Session } from 'node:inspector/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeEnvelope, encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod, playEvents, podKey } from '../workload/pods.ts';

const [eventsArg = '2000', mode = 'watch', srcArg] = process.argv.slice(2);
const EVENTS = Number(eventsArg);
const src =
  srcArg === undefined || srcArg === 'src'
    ? new URL('../../src/', import.meta.url)
    : pathToFileURL(`${isAbsolute(srcArg) ? srcArg : resolve(srcArg)}/`);
const decode = (await import(
  new URL('1-transport/protobuf/decode.ts', src).href
)) as typeof import('../../src/1-transport/protobuf/decode.ts');

const frames: { key: string; bytes: Buffer }[] = [];
for (const e of playEvents(1000, EVENTS, 7)) {
  if (e.type === 'DELETED') continue;
  frames.push({ key: podKey(e.pod.index), bytes: encodeWatchFrame(e.type, makePod(e.pod)).subarray(4) });
}
const listBody = encodeEnvelope({
  apiVersion: 'v1',
  kind: 'PodList',
  metadata: { resourceVersion: '501' },
  items: Array.from({ length: 500 }, (_, index) => {
    const { apiVersion: _a, kind: _k, ...item } = makePod({ index, resourceVersion: index + 1, revision: 1 });
    return item;
  }),
});

const cache = new Map<string, unknown>();
let names = 0;
let objects = 0;
function pass(): void {
  if (mode === 'list') {
    const list = decode.decodeListBody(listBody, undefined);
    for (const item of list.items as { metadata: { name: string } }[]) {
      names += item.metadata.name.length;
      cache.set(item.metadata.name, item);
      objects++;
    }
    return;
  }
  for (const f of frames) {
    const { object } = decode.decodeWatchFrame(f.bytes, undefined);
    names += ((object.metadata as { name: string }).name ?? '').length;
    cache.set(f.key, object);
    objects++;
  }
}
for (let i = 0; i < 20; i++) pass();

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  id: number;
  children: Node[];
}
const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 1,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
objects = 0;
pass();
const counted = objects;
const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
  profile: { head: Node; samples: { size: number; nodeId: number }[] };
};
const nameOf = new Map<number, string>();
const walk = (node: Node): void => {
  const file = node.callFrame.url.split('/').pop() ?? '';
  nameOf.set(node.id, `${node.callFrame.functionName || '(anonymous)'} ${file}:${node.callFrame.lineNumber + 1}`);
  node.children.forEach(walk);
};
walk(profile.head);
const byFunction = new Map<string, { count: number; bytes: number; sizes: Map<number, number> }>();
for (const s of profile.samples) {
  const name = nameOf.get(s.nodeId) ?? '?';
  const row = byFunction.get(name) ?? { count: 0, bytes: 0, sizes: new Map<number, number>() };
  row.count++;
  row.bytes += s.size;
  row.sizes.set(s.size, (row.sizes.get(s.size) ?? 0) + 1);
  byFunction.set(name, row);
}
const rows = [...byFunction].sort((a, b) => b[1].count - a[1].count);
let totalCount = 0;
let totalBytes = 0;
for (const [name, row] of rows) {
  totalCount += row.count;
  totalBytes += row.bytes;
  const sizes = [...row.sizes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([size, n]) => `${(n / counted).toFixed(2)}×${size}B`)
    .join(' ');
  if (row.count / counted >= 0.005)
    console.log(
      `${(row.count / counted).toFixed(2).padStart(7)} objects ${(row.bytes / counted).toFixed(0).padStart(6)} B  ${name}  [${sizes}]`,
    );
}
console.log(
  JSON.stringify({
    src: srcArg ?? 'src',
    mode,
    objects: counted,
    perObject: Number((totalCount / counted).toFixed(2)),
    bytesPerObject: Math.round(totalBytes / counted),
    names: names > 0,
  }),
);
