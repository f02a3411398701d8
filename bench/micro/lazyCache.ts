/**
 * Decoding and caching alone, in process: each watch line is decoded (eagerly
 * with JSON.parse, or lazily) and kept in a Map of the cached pods, as an
 * informer's store keeps it. CPU time of the whole process (the collector's
 * helper threads included) and of the main thread, per event, with a small and
 * a large cache: what decoding costs, and what caching its result costs the
 * garbage collector as the cache grows.
 *
 *   node --expose-gc bench/micro/lazyCache.ts [eager|lazy] [cached=50000] [events=30000] [src dir] [flags]
 *
 * Flags: --chunks feeds the lines as a socket would, in 64 KiB chunks split by the transport's LineSplitter
 * (--reuse: into one reused buffer instead of a fresh one each); --store keeps them in the informer's Store
 * (the persistent map) instead of a Map. The src dir (default ../../src) allows an A/B of two copies.
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as LazyModule from '../../src/1-transport/lazyJson.ts';
import type * as StoreModule from '../../src/4-store/store.ts';
import { makePod, playEvents, podKey } from '../workload/pods.ts';

const mode = process.argv[2] ?? 'lazy';
const cached = Number(process.argv[3] ?? 50_000);
const eventCount = Number(process.argv[4] ?? 30_000);
const dir = resolve(process.argv[5] ?? join(import.meta.dirname, '..', '..', 'src'));
const { lazyParseWatchLine, lazyParseObject } = (await import(
  pathToFileURL(join(dir, '1-transport', 'lazyJson.ts')).href
)) as typeof LazyModule;

const { Store } = (await import(pathToFileURL(join(dir, '4-store', 'store.ts')).href)) as typeof StoreModule;
const useStore = process.argv.includes('--store');
/** Feed the lines as the socket does: in fresh 64 KiB chunks, split by the transport's LineSplitter. */
const useChunks = process.argv.includes('--chunks');
const { LineSplitter } = (await import(
  pathToFileURL(join(dir, '1-transport', 'lineSplitter.ts')).href
)) as typeof import('../../src/1-transport/lineSplitter.ts');
const decode =
  mode === 'eager'
    ? (line: Buffer) => JSON.parse(line.toString('utf8')) as { type: string; object: unknown }
    : (line: Buffer) => lazyParseWatchLine(line) as { type: string; object: unknown };

const cache = new Map<string, unknown>();
for (let i = 0; i < cached; i++) {
  const json = Buffer.from(JSON.stringify(makePod({ index: i, resourceVersion: i + 1, revision: 0 })));
  cache.set(podKey(i), mode === 'eager' ? JSON.parse(json.toString('utf8')) : lazyParseObject(json));
}
const lines: { key: string; deleted: boolean; line: Buffer }[] = [];
for (const e of playEvents(cached, eventCount, 7)) {
  lines.push({
    key: podKey(e.pod.index),
    deleted: e.type === 'DELETED',
    line: Buffer.from(JSON.stringify({ type: e.type, object: makePod(e.pod) })),
  });
}
type Cached = { readonly metadata: { readonly namespace?: string } };
const batch = Store.empty<Cached>().batch();
if (useStore) for (const [key, object] of cache) batch.write(key, undefined, object as never);
let store = batch.done();
if (useStore) cache.clear();
// The chunked stream holds the lines' bytes once: the lines give theirs up.
const stream = useChunks ? Buffer.concat(lines.flatMap(({ line }) => [line, Buffer.from('\n')])) : Buffer.alloc(0);
if (useChunks) for (const entry of lines) entry.line = Buffer.alloc(0);
globalThis.gc?.();
globalThis.gc?.();
const p0 = process.cpuUsage();
const t0 = process.threadCpuUsage();
const work = ({ key, deleted, line }: { key: string; deleted: boolean; line: Buffer }) => {
  const event = decode(line);
  if (useStore) store = store.write(key, store.get(key), deleted ? undefined : (event.object as never));
  else if (deleted) cache.delete(key);
  else cache.set(key, event.object);
};
if (useChunks) {
  const splitter = new LineSplitter();
  const reuse = process.argv.includes('--reuse');
  const reused = Buffer.allocUnsafeSlow(65536);
  let next = 0;
  const sink = { lineBytes: (line: Buffer) => work({ ...lines[next++]!, line }), oversize: () => {} };
  for (let at = 0; at < stream.length; at += 65536) {
    const chunk = reuse
      ? reused.subarray(0, Math.min(65536, stream.length - at))
      : Buffer.allocUnsafeSlow(Math.min(65536, stream.length - at));
    stream.copy(chunk, 0, at, at + chunk.length);
    splitter.push(chunk, sink);
  }
} else for (const line of lines) work(line);
const p = process.cpuUsage(p0);
const t = process.threadCpuUsage(t0);
const us = (u: { user: number; system: number }) => ((u.user + u.system) / lines.length).toFixed(1);
console.log(
  `${mode}${useStore ? ' store' : ''}${useChunks ? ' chunks' : ''} cached=${cached} events=${lines.length}: ${us(p)} µs/event (main thread ${us(t)})`,
);
