/**
 * What `record` costs per listed object, in one process, without a server or an informer: a sync of P ≈ 4.7 KB
 * pods in pages of S (as bench/micro/listPages.ts builds them: each page fed to the transport's list decoder as
 * 64 KiB chunks), each page emitted by a ListWatch's `list`, passed (or recorded into a trace file), every item kept
 * in a Map (a cache). CPU time (user + system) of this process per listed object, for each way:
 *
 *   eager-pass    pages decoded by JSON.parse, not recorded (for scale)
 *   eager-record  the same, recorded to a file
 *   lazy-pass     pages decoded lazily (`lazyDecode`), not recorded
 *   lazy-record   the same, recorded to a file
 *   lazy-null     the same, recorded to /dev/null: what is left when the file system costs nothing
 *
 * Then, of the lazy-record run's cached items, how many still have unparsed members (an item serialized by
 * `JSON.stringify` is parsed whole, and stays so in the cache); with `--expose-gc`, the heap the cache holds per object.
 *
 *   node [--expose-gc] bench/micro/recordList.ts [pods=50000] [pageSize=500] [rounds=3] [ways=eager-pass,eager-record,lazy-pass,lazy-record,lazy-null]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NEVER, defer, of } from 'rxjs';
import type { ListPage, ListWatch } from '../../src/1-transport/listWatch.ts';
import { listBodyDecoder } from '../../src/1-transport/http/listBody.ts';
import { toListPage } from '../../src/1-transport/http/decode.ts';
import { hasUnparsedMembers } from '../../src/1-transport/lazyJson.ts';
import { record } from '../../src/1-transport/trace/record.ts';
import { traceFileSink } from '../../src/1-transport/trace/traceFileSink.ts';
import { traceWriter } from '../../src/1-transport/trace/writer.ts';
import { makePod } from '../workload/pods.ts';

const PODS = Number(process.argv[2] ?? 50_000);
const SIZE = Number(process.argv[3] ?? 500);
const ROUNDS = Number(process.argv[4] ?? 3);
const WAYS = (process.argv[5] ?? 'eager-pass,eager-record,lazy-pass,lazy-record,lazy-null').split(',');

/** 2,000 distinct list items (no kind, as a server lists them), reused with the page number in the name. */
const texts = Array.from({ length: 2000 }, (_, i) => {
  const { kind: _kind, apiVersion: _apiVersion, ...item } = makePod({ index: i, resourceVersion: i + 1, revision: 0 });
  return JSON.stringify(item);
});
const PAGES = Math.ceil(PODS / SIZE);
const pages: Buffer[][] = [];
for (let page = 0; page < PAGES; page++) {
  const items = Array.from({ length: Math.min(SIZE, PODS - page * SIZE) }, (_, k) =>
    texts[(page * SIZE + k) % texts.length]!.replace('"name":"', `"name":"p${page}-`),
  );
  const next = page + 1 < PAGES ? `,"continue":"c${page + 1}"` : '';
  const bytes = Buffer.from(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"${next}},"items":[${items.join(',')}]}`);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 65536) chunks.push(Buffer.from(bytes.subarray(at, at + 65536)));
  pages.push(chunks);
}
const dir = mkdtempSync(join(tmpdir(), 'rx-informer-record-list-'));

function decoded(chunks: readonly Buffer[], lazy: boolean): ListPage {
  const decoder = listBodyDecoder(lazy);
  for (const chunk of chunks) decoder.chunk(chunk);
  decoder.end();
  return toListPage(decoder.value())!;
}

let unparsed = 0;
const heaps = new Map<string, number[]>();
/** One sync through `way`: CPU µs per listed object. */
async function sync(way: string): Promise<number> {
  const lazy = way.startsWith('lazy');
  let current: ListPage | undefined;
  const source: ListWatch = { list: () => defer(() => of(current!)), watch: () => NEVER };
  const recorded = !way.endsWith('pass');
  const file = traceFileSink(way === 'lazy-null' ? '/dev/null' : join(dir, `${way}.jsonl`));
  const writer = traceWriter({ write: (t) => file.write(t), writeParts: (p) => file.writeParts(p), resources: ['pods'] });
  const listWatch = recorded ? record(source, writer, { resource: 'pods' }) : source;
  const cache = new Map<string, unknown>();
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heap = process.memoryUsage().heapUsed;
  const start = process.cpuUsage();
  for (let page = 0; page < PAGES; page++) {
    current = decoded(pages[page]!, lazy);
    listWatch.list({ limit: SIZE }).subscribe((p) => {
      for (let k = 0; k < p.items.length; k++) cache.set(`${page}/${k}`, p.items[k]);
    });
    // The sink writes a burst's lines at the end of the burst (a microtask).
    await Promise.resolve();
  }
  const used = process.cpuUsage(start);
  if (gc) {
    gc();
    heaps.set(way, [...(heaps.get(way) ?? []), (process.memoryUsage().heapUsed - heap) / PODS / 1024]);
  }
  writer.close();
  file.close();
  if (cache.size !== PODS) throw new Error(`${way}: ${cache.size} of ${PODS} cached`);
  if (way === 'lazy-record') {
    unparsed = 0;
    for (const item of cache.values()) if (hasUnparsedMembers(item as object)) unparsed++;
  }
  if (recorded && way !== 'lazy-null' && statSync(join(dir, `${way}.jsonl`)).size < PODS * 1000) throw new Error(`${way}: trace too short`);
  return (used.user + used.system) / PODS;
}

const results = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++)
  for (const way of WAYS) {
    const cpu = await sync(way);
    results.set(way, [...(results.get(way) ?? []), cpu]);
  }
rmSync(dir, { recursive: true, force: true });

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log(
  `${PODS} pods of ≈ ${Math.round(texts.reduce((a, t) => a + t.length, 0) / texts.length)} B in pages of ${SIZE}, ${ROUNDS} rounds, medians`,
);
for (const [way, values] of results) {
  const m = median(values);
  const base = way.startsWith('lazy') ? 'lazy-pass' : 'eager-pass';
  const pass = results.has(base) ? median(results.get(base)!) : undefined;
  const extra = pass !== undefined && way !== base ? `  (+${(m - pass).toFixed(1)} µs over ${base})` : '';
  const heap = heaps.has(way) ? `, heap ${median(heaps.get(way)!).toFixed(2)} KB/object` : '';
  console.log(`${way.padEnd(13)} ${m.toFixed(1)} µs CPU/object${extra}${heap}   [${values.map((v) => v.toFixed(1)).join(', ')}]`);
}
if (results.has('lazy-record')) console.log(`lazy-record: ${unparsed} of ${PODS} cached items still have unparsed members`);
