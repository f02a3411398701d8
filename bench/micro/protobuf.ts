/**
 * Issue #36, step 1: what decoding a watch event costs in protobuf (the prototype of bench/protobuf) against JSON,
 * with a cache of 1,000 or 50,000 pods in the heap, and what a cached object holds.
 *
 * Contenders, each per watch event of the bench workload (bench/workload/pods.ts), kept in a Map as a store keeps it:
 *   json        JSON.parse of the JSON line
 *   lazy-json   src/1-transport/lazyJson.ts's lazyParseWatchLine, then metadata.name read
 *   pb-eager    the prototype's full decode into the same JSON-shaped object
 *   pb-lazy     the prototype's lazy decode (metadata now but managedFields; the rest on first access), metadata.name read
 *   json-drop   a sharded informer dropping the object, JSON: lazyParseWatchLine with a KeepObject saying no
 *   pb-meta     a sharded informer dropping the object, protobuf: name and namespace only, the rest skipped by length
 *   pb-checked  pb-lazy after a walk checking every nested length and wire type (no member can fail when read)
 *   lazy-json-all, pb-lazy-all   the lazy ones with a handler reading spec, status and managedFields of every event
 *   rx-pb-kept  step 2's transport (src/1-transport/protobuf, through parseWatchFrame): checked on arrival, decoded lazily
 *   rx-pb-drop  step 2's transport dropping the object (a KeepObject saying no): name, namespace, resourceVersion only
 * Metadata-only (issue #36, after step 2): the events' objects are PartialObjectMetadata (what a server answers
 * `as=PartialObjectMetadata`), cached after the bench's rx-meta transform, stripManagedFields:
 *   meta-json       the JSON path of rx-meta today: parseWatchLine (JSON.parse), then stripManagedFields
 *   meta-json-lazy  the same with lazyDecode (parseWatchLineLazily): managedFields never parsed
 *   meta-pb         the transport's protobuf path (parseWatchFrame): checked whole on arrival (FieldsV1's JSON scanned),
 *                   metadata decoded now but managedFields, kept as bytes and never decoded; then stripManagedFields
 *   meta-json-mf, meta-pb-mf   the same as meta-json and meta-pb without stripManagedFields (managedFields cached;
 *                   protobuf: as bytes until first read)
 *   meta-pb-unchecked  a bound, not a path anyone may ship: the prototype's lazy decode (bench/protobuf) with no walk,
 *                   managedFields copied as bytes unchecked; then stripManagedFields
 *   meta-pb-eager   the prototype's eager decode (FieldsV1 parsed), managedFields kept: against meta-json-mf
 * The drop contenders cache nothing per event; their heap holds the lazy cache of their sibling (lazy-json, pb-lazy).
 *
 * CPU time (process.cpuUsage: every thread, the collector's helpers included; and threadCpuUsage: the main thread),
 * never wall time. Heap per cached object: heapUsed + arrayBuffers after gc() twice, before and after filling the cache.
 * Each contender runs in its own process (`--expose-gc`), interleaved, REPS times in a rotating order; medians.
 * The workload's bytes (JSON lines, protobuf frames) are written once to a temporary directory and read by every run.
 *
 *   node bench/micro/protobuf.ts [reps=5] [events=20000] [sizes=1000,50000] [contenders=all]
 *   node --expose-gc bench/micro/protobuf.ts --child <contender> <cached> <events> <dir>     (one run, one JSON line)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { lazyParseObject, lazyParseWatchLine } from '../../src/1-transport/lazyJson.ts';
import { decodeBody, decodeWatchEvent, peekNameNamespace, splitFrames } from '../protobuf/decode.ts';
import { encodeEnvelope, encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';
import { parseWatchFrame, parseWatchLine, parseWatchLineLazily } from '../../src/1-transport/http/decode.ts';
import { stripManagedFields } from '../../src/5-informer/transforms.ts';
import type { KubeObject } from '../../src/0-model/objects.ts';
import type { WatchFrame } from '../../src/1-transport/listWatch.ts';
import { decodeListBody, decodeWatchFrame } from '../../src/1-transport/protobuf/decode.ts';
import { makePod, playEvents, podKey } from '../workload/pods.ts';

const CONTENDERS = [
  'json',
  'lazy-json',
  'pb-eager',
  'pb-lazy',
  'json-drop',
  'pb-meta',
  'lazy-json-all',
  'pb-lazy-all',
  'pb-checked',
  'rx-pb-kept',
  'rx-pb-drop',
  'meta-json',
  'meta-json-lazy',
  'meta-pb',
  'meta-json-mf',
  'meta-pb-mf',
  'meta-pb-unchecked',
  'meta-pb-eager',
] as const;
type Contender = (typeof CONTENDERS)[number];
type Json = Record<string, unknown>;

interface Row {
  contender: Contender;
  cached: number;
  events: number;
  /** CPU µs per event, every thread. */
  us: number;
  /** CPU µs per event, the main thread. */
  mainUs: number;
  /** Bytes held per cached object (heap + array buffers). */
  heapPerObject: number;
  /** Wire bytes per event (a JSON line with its newline, or a frame with its length). */
  bytesPerEvent: number;
}

const gc = () => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run the child with --expose-gc');
  g();
  g();
};
const held = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const cpu = (u: NodeJS.CpuUsage) => u.user + u.system;

/** The cache's pods and the events' bytes of one size, in both encodings: `pb-N-cache.bin` (frames), `json-N-cache.jsonl`, …-events. */
function prepare(dir: string, cached: number, eventCount: number): void {
  const write = (name: string, pieces: Buffer[], json: boolean) =>
    writeFileSync(join(dir, name), json ? Buffer.concat(pieces.flatMap((p) => [p, NEWLINE])) : Buffer.concat(pieces));
  const cache: [Buffer[], Buffer[]] = [[], []];
  for (let i = 0; i < cached; i++) {
    const pod = makePod({ index: i, resourceVersion: i + 1, revision: 0 });
    cache[0].push(encodeWatchFrame('ADDED', pod));
    cache[1].push(Buffer.from(JSON.stringify(pod)));
  }
  write(`pb-${cached}-cache.bin`, cache[0], false);
  write(`json-${cached}-cache.jsonl`, cache[1], true);
  const events: [Buffer[], Buffer[]] = [[], []];
  // One event at a time: the generator changes a pod's state in place for its next event.
  for (const e of playEvents(cached, eventCount, 7)) {
    const pod = makePod(e.pod);
    events[0].push(encodeWatchFrame(e.type, pod));
    events[1].push(Buffer.from(JSON.stringify({ type: e.type, object: pod })));
  }
  write(`pb-${cached}-events.bin`, events[0], false);
  write(`json-${cached}-events.jsonl`, events[1], true);
  // The same, metadata-only: a PartialObjectMetadata of each pod, as kube-apiserver writes it.
  const meta = (pod: Json) => ({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: pod['metadata'] });
  const mcache: [Buffer[], Buffer[]] = [[], []];
  for (let i = 0; i < cached; i++) {
    const pod = meta(makePod({ index: i, resourceVersion: i + 1, revision: 0 }));
    mcache[0].push(encodeWatchFrame('ADDED', pod));
    mcache[1].push(Buffer.from(JSON.stringify({ type: 'ADDED', object: pod }))); // events, as the frames are
  }
  write(`pbm-${cached}-cache.bin`, mcache[0], false);
  write(`jsonm-${cached}-cache.jsonl`, mcache[1], true);
  const mevents: [Buffer[], Buffer[]] = [[], []];
  for (const e of playEvents(cached, eventCount, 7)) {
    const pod = meta(makePod(e.pod));
    mevents[0].push(encodeWatchFrame(e.type, pod));
    mevents[1].push(Buffer.from(JSON.stringify({ type: e.type, object: pod })));
  }
  write(`pbm-${cached}-events.bin`, mevents[0], false);
  write(`jsonm-${cached}-events.jsonl`, mevents[1], true);
}
const NEWLINE = Buffer.from('\n');

/** The pieces of a prepared file: frames without their length, or lines without their newline. */
function pieces(file: Buffer, pb: boolean): Buffer[] {
  if (pb) return splitFrames(file, 1 << 20);
  const lines: Buffer[] = [];
  for (let at = 0; at < file.length;) {
    const end = file.indexOf(0x0a, at);
    lines.push(file.subarray(at, end));
    at = end + 1;
  }
  return lines;
}

/** The cache, in a function of its own: the file and its pieces die with its frame, before the heap is measured. */
function fill(path: string, pb: boolean, cached: number, toCache: (bytes: Buffer) => unknown): Map<string, unknown> {
  const cache = new Map<string, unknown>();
  const objects = pieces(readFileSync(path), pb);
  for (let i = 0; i < cached; i++) cache.set(podKey(i), toCache(objects[i]!));
  return cache;
}

function child(contender: Contender, cached: number, eventCount: number, dir: string): Row {
  const metaOnly = contender.startsWith('meta-');
  const rx = contender.startsWith('rx-pb');
  const pb = contender.startsWith('pb') || rx || contender.startsWith('meta-pb');
  const eager = contender === 'json' || contender === 'pb-eager';
  const strip = metaOnly && !contender.endsWith('-mf') && contender !== 'meta-pb-eager';
  // The -all and drop contenders fill the cache as their lazy siblings do; the metadata-only ones as they decode.
  const metaFrame = (bytes: Buffer) => {
    const frame =
      contender === 'meta-json' || contender === 'meta-json-mf'
        ? parseWatchLine(bytes.toString('utf8'))
        : contender === 'meta-json-lazy'
          ? parseWatchLineLazily(bytes)
          : contender === 'meta-pb-unchecked' || contender === 'meta-pb-eager'
            ? (decodeWatchEvent(bytes, contender === 'meta-pb-eager' ? 'eager' : 'lazy') as WatchFrame)
            : parseWatchFrame(bytes);
    if (frame instanceof Error) throw frame;
    return strip ? { type: frame.type, object: stripManagedFields(frame.object as KubeObject) } : frame;
  };
  const toCache = (bytes: Buffer): unknown =>
    metaOnly
      ? metaFrame(bytes).object
      : rx
        ? decodeWatchFrame(bytes, undefined).object
        : pb
          ? decodeWatchEvent(bytes, eager ? 'eager' : 'lazy').object
          : eager
            ? JSON.parse(bytes.toString('utf8'))
            : lazyParseObject(bytes);
  const prefix = join(dir, `${pb ? 'pb' : 'json'}${metaOnly ? 'm' : ''}-${cached}`);
  gc();
  const before = held();
  const cache = fill(`${prefix}-cache.${pb ? 'bin' : 'jsonl'}`, pb, cached, toCache);
  gc();
  const heapPerObject = Math.round((held() - before) / cached);

  const file = readFileSync(`${prefix}-events.${pb ? 'bin' : 'jsonl'}`);
  const bytes = pieces(file, pb);
  const wire = file.length;
  const events = [...playEvents(cached, eventCount, 7)].map((e, i) => ({
    key: podKey(e.pod.index),
    deleted: e.type === 'DELETED',
    bytes: bytes[i]!,
  }));
  const keep = (event: { object: unknown }, key: string, deleted: boolean) => {
    if (deleted) cache.delete(key);
    else cache.set(key, event.object);
  };
  const never = () => false;
  const readAll = (o: Json & { metadata: Json }) => (o.spec && o.status && o.metadata.managedFields ? 1 : 0);
  let names = 0;
  const keepMeta = (e: (typeof events)[number]) => {
    const event = metaFrame(e.bytes) as { object: { metadata: { name: string } } };
    names += event.object.metadata.name.length;
    keep(event, e.key, e.deleted);
  };
  const work: Record<Contender, (e: (typeof events)[number]) => void> = {
    json: (e) => keep(JSON.parse(e.bytes.toString('utf8')) as { object: unknown }, e.key, e.deleted),
    'lazy-json': (e) => {
      const event = lazyParseWatchLine(e.bytes) as { object: { metadata: { name: string } } };
      names += event.object.metadata.name.length;
      keep(event, e.key, e.deleted);
    },
    'pb-eager': (e) => keep(decodeWatchEvent(e.bytes), e.key, e.deleted),
    'pb-lazy': (e) => {
      const event = decodeWatchEvent(e.bytes, 'lazy') as unknown as { object: { metadata: { name: string } } };
      names += event.object.metadata.name.length;
      keep(event, e.key, e.deleted);
    },
    'lazy-json-all': (e) => {
      const event = lazyParseWatchLine(e.bytes) as { object: Json & { metadata: Json } };
      names += readAll(event.object);
      keep(event, e.key, e.deleted);
    },
    'pb-lazy-all': (e) => {
      const event = decodeWatchEvent(e.bytes, 'lazy') as unknown as { object: Json & { metadata: Json } };
      names += readAll(event.object);
      keep(event, e.key, e.deleted);
    },
    'pb-checked': (e) => {
      const event = decodeWatchEvent(e.bytes, 'checked') as unknown as { object: { metadata: { name: string } } };
      names += event.object.metadata.name.length;
      keep(event, e.key, e.deleted);
    },
    'json-drop': (e) => {
      lazyParseWatchLine(e.bytes, never);
    },
    'pb-meta': (e) => {
      names += peekNameNamespace(e.bytes).name.length;
    },
    'rx-pb-kept': (e) => {
      const event = parseWatchFrame(e.bytes) as unknown as { object: { metadata: { name: string } } };
      names += event.object.metadata.name.length;
      keep(event, e.key, e.deleted);
    },
    'rx-pb-drop': (e) => {
      parseWatchFrame(e.bytes, never);
    },
    'meta-json': (e) => keepMeta(e),
    'meta-json-lazy': (e) => keepMeta(e),
    'meta-pb': (e) => keepMeta(e),
    'meta-json-mf': (e) => keepMeta(e),
    'meta-pb-mf': (e) => keepMeta(e),
    'meta-pb-unchecked': (e) => keepMeta(e),
    'meta-pb-eager': (e) => keepMeta(e),
  };
  const run = work[contender];
  gc();
  const all0 = process.cpuUsage();
  const main0 = process.threadCpuUsage();
  for (const e of events) run(e);
  const all = cpu(process.cpuUsage(all0));
  const main = cpu(process.threadCpuUsage(main0));
  if (names < 0) console.log(names);
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    contender,
    cached,
    events: events.length,
    us: round(all / events.length),
    mainUs: round(main / events.length),
    heapPerObject,
    bytesPerEvent: Math.round(wire / events.length),
  };
}

/** Per object of the recordings (kube-apiserver v1.20.2): the lists 10a/10b and the 19 watch frames of 11a, in process. */
function recorded(reps: number): string[] {
  const fixtures = join(import.meta.dirname, '../../spec/fixtures/protobuf');
  const read = (name: string) => readFileSync(join(fixtures, name));
  const frames = splitFrames(read('11a-watch-configmaps-protobuf.bin'));
  // The watch's JSON twin: the JSON lines carrying the same events (what the server sends in JSON, up to key order).
  const lines = frames.map((f) => Buffer.from(JSON.stringify(decodeWatchEvent(f))));
  const cases: [string, number, () => void][] = [];
  for (const kind of ['pods', 'configmaps']) {
    const pbList = read(`10a-list-${kind}-protobuf.bin`);
    const jsonList = read(`10b-list-${kind}-json-same-rv.bin`);
    const items = (JSON.parse(jsonList.toString('utf8')) as { items: unknown[] }).items.length;
    cases.push([`${kind} list, JSON.parse`, items, () => JSON.parse(jsonList.toString('utf8'))]);
    cases.push([`${kind} list, pb-eager`, items, () => decodeBody(pbList)]);
  }
  const watch = (f: () => void) => () => {
    for (let i = 0; i < frames.length; i++) f.call(null);
  };
  let i = 0;
  const next = () => (i = (i + 1) % frames.length);
  cases.push([`configmap watch, JSON.parse`, 1, watch(() => JSON.parse(lines[next()]!.toString('utf8')))]);
  cases.push([`configmap watch, lazy-json`, 1, watch(() => (lazyParseWatchLine(lines[next()]!).object as Json).metadata)]);
  cases.push([`configmap watch, pb-eager`, 1, watch(() => decodeWatchEvent(frames[next()]!))]);
  cases.push([`configmap watch, pb-lazy`, 1, watch(() => decodeWatchEvent(frames[next()]!, 'lazy').object.metadata)]);
  cases.push([`configmap watch, pb-meta`, 1, watch(() => peekNameNamespace(frames[next()]!))]);
  const loops = 20_000;
  const samples = new Map<string, number[]>();
  for (let rep = 0; rep < reps + 1; rep++) {
    for (const [name, objects, f] of cases) {
      const t0 = process.threadCpuUsage();
      for (let n = 0; n < loops / (name.includes('watch') ? frames.length : 1); n++) f();
      const us = cpu(process.threadCpuUsage(t0)) / loops / objects;
      if (rep > 0) samples.set(name, [...(samples.get(name) ?? []), us]); // the first round warms up
    }
  }
  return [...samples].map(([name, xs]) => `| ${name} | ${median(xs).toFixed(2)} |`);
}

/**
 * Metadata-only, in process: (1) never a wrong object: every metadata-only event of the workload decodes to the same
 * object in protobuf (the transport's parseWatchFrame, every member read) as in JSON (parseWatchLine); (2) a list
 * page of 500 PartialObjectMetadata items, main-thread CPU µs per item, JSON (JSON.parse + toListPage's items, then
 * stripManagedFields) against protobuf (decodeListBody: each item checked and decoded lazily, then stripManagedFields).
 */
function metadataOnlyChecks(dir: string, cached: number, reps: number): string[] {
  const frames = splitFrames(readFileSync(join(dir, `pbm-${cached}-events.bin`)), 1 << 20);
  const lines = pieces(readFileSync(join(dir, `jsonm-${cached}-events.jsonl`)), false);
  const plain = (x: unknown) => JSON.parse(JSON.stringify(x)) as unknown;
  for (let i = 0; i < frames.length; i++) {
    const pb = parseWatchFrame(frames[i]!);
    const json = parseWatchLine(lines[i]!.toString('utf8'));
    if (!isDeepStrictEqual(plain(pb), json)) throw new Error(`metadata-only event ${i}: protobuf and JSON differ`);
  }
  const items = Array.from({ length: 500 }, (_, i) => ({
    metadata: makePod({ index: i, resourceVersion: i + 1, revision: 0 })['metadata'],
  }));
  const list = { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '501' }, items };
  const pbList = encodeEnvelope(list as unknown as Json);
  const jsonList = Buffer.from(
    JSON.stringify({ ...list, items: items.map((o) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', ...o })) }),
  );
  const decodedPb = decodeListBody(pbList, undefined).items as unknown[];
  const decodedJson = (JSON.parse(jsonList.toString('utf8')) as { items: Json[] }).items;
  for (let i = 0; i < items.length; i++) {
    // Protobuf items carry no apiVersion and kind (PartialObjectMetadata's message has metadata only): compared without.
    const { apiVersion: _a, kind: _k, ...rest } = decodedJson[i]!;
    if (!isDeepStrictEqual(plain(decodedPb[i]), rest)) throw new Error(`metadata-only list item ${i}: protobuf and JSON differ`);
  }
  const strip = (xs: unknown[]) => xs.map((o) => stripManagedFields(o as KubeObject));
  const cases: [string, () => unknown][] = [
    [
      'PartialObjectMetadataList item, JSON.parse + stripManagedFields',
      () => strip((JSON.parse(jsonList.toString('utf8')) as { items: unknown[] }).items),
    ],
    [
      'PartialObjectMetadataList item, protobuf decodeListBody + stripManagedFields',
      () => strip(decodeListBody(pbList, undefined).items as unknown[]),
    ],
  ];
  const samples = new Map<string, number[]>();
  for (let rep = 0; rep < reps + 1; rep++) {
    for (const [name, f] of cases) {
      const t0 = process.threadCpuUsage();
      for (let n = 0; n < 40; n++) f();
      const us = cpu(process.threadCpuUsage(t0)) / 40 / items.length;
      if (rep > 0) samples.set(name, [...(samples.get(name) ?? []), us]);
    }
  }
  return [
    `every one of ${frames.length} metadata-only events and ${items.length} list items: protobuf = JSON`,
    `list bytes per item: JSON ${Math.round(jsonList.length / items.length)}, protobuf ${Math.round(pbList.length / items.length)}`,
    ...[...samples].map(([name, xs]) => `| ${name} | ${median(xs).toFixed(2)} |`),
  ];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

if (process.argv[2] === '--child') {
  const [, , , contender, cached, events, dir] = process.argv;
  console.log(JSON.stringify(child(contender as Contender, Number(cached), Number(events), dir!)));
} else {
  const reps = Number(process.argv[2] ?? 5);
  const eventCount = Number(process.argv[3] ?? 20_000);
  const sizes = (process.argv[4] ?? '1000,50000').split(',').map(Number);
  const contenders = (process.argv[5]?.split(',') ?? CONTENDERS) as Contender[];
  const self = fileURLToPath(import.meta.url);
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-protobuf-'));
  for (const cached of sizes) prepare(dir, cached, eventCount);
  const runs: Row[] = [];
  const plan = sizes.flatMap((cached) => contenders.map((contender) => ({ contender, cached })));
  for (let rep = 0; rep < reps; rep++) {
    // Interleaved, the order rotating each repetition.
    for (let k = 0; k < plan.length; k++) {
      const { contender, cached } = plan[(k + rep) % plan.length]!;
      const out = execFileSync(
        process.execPath,
        ['--expose-gc', '--max-old-space-size=4096', self, '--child', contender, String(cached), String(eventCount), dir],
        { encoding: 'utf8' },
      );
      const row = JSON.parse(out.trim().split('\n').pop()!) as Row;
      runs.push(row);
      console.error(`rep ${rep + 1}/${reps}: ${JSON.stringify(row)}`);
    }
  }
  const metaLines = contenders.some((c) => c.startsWith('meta-')) ? metadataOnlyChecks(dir, sizes[0]!, reps) : [];
  rmSync(dir, { recursive: true, force: true });
  console.log(`| contender | cached | CPU µs/event (all threads) | main thread | heap B/cached object | wire B/event |`);
  console.log(`|---|---:|---:|---:|---:|---:|`);
  for (const { contender, cached } of plan) {
    const mine = runs.filter((r) => r.contender === contender && r.cached === cached);
    const m = (f: (r: Row) => number) => median(mine.map(f));
    console.log(
      `| ${contender} | ${cached} | ${m((r) => r.us).toFixed(1)} | ${m((r) => r.mainUs).toFixed(1)} | ${m((r) => r.heapPerObject)} | ${m((r) => r.bytesPerEvent)} |`,
    );
  }
  console.log(`\nRecorded bytes (kube-apiserver v1.20.2), in process, main-thread CPU µs per object, median of ${reps}:\n`);
  console.log('| case | µs/object |\n|---|---:|');
  for (const line of recorded(reps)) console.log(line);
  if (metaLines.length > 0) console.log(`\nMetadata-only, in process (main thread, medians of ${reps}):\n\n${metaLines.join('\n')}`);
  console.log(`\nruns: ${JSON.stringify(runs)}`);
}
