/**
 * Issue #36: what the never-a-wrong-object walk costs per watch event, in process, beside the lazy decode and the
 * whole kept path. The bench workload's watch events (bench/workload/pods.ts, ~3.1 KB of protobuf each) as frames
 * made once before timing; each part timed alone over every frame, main-thread CPU µs per event, medians of the
 * rounds (the first round warms up). The decoded objects are cached by key, as a store holds them.
 *
 *   walk    the kept object's envelope read, then `checkMessage` over it (the walk alone)
 *   lazy    the kept object's envelope read, then `decodeLazyInto` (no walk), metadata.name read
 *   frame   the transport's whole kept path, `decodeWatchFrame` (walk, then lazy decode), metadata.name read
 *   kube    `frame`, then 2-source's decoder of built-in objects (`decoder(KubeObject, …)`, 2-source/decode.ts: its
 *           `isKubeObject`, which reads metadata's labels, annotations and ownerReferences unless the transport vouches
 *           for them), what the pipeline does next with every kept object
 *   labels  `kube`, then metadata.labels read: a handler that filters on labels (not run unless named)
 *   strip   `kube` with `stripManagedFields` as the transform (metadata copied key by key, its members read; not run
 *           unless named)
 *   read    `frame`, then every lazy member read (each top-level member and each of metadata's): what a handler
 *           reading the whole object pays (not run unless named)
 *
 *   node bench/micro/pbCheck.ts [events=20000] [rounds=7] [src=../../src] [parts=walk,lazy,frame,kube] [pods=1000] [thread|process]
 *
 * `pods`: how many distinct pods the events touch (each part's cache holds up to that many, as a store of that size);
 * `process`: the whole process's CPU (V8's helper threads too: parallel scavenging, concurrent marking) instead of the
 * main thread's.
 *
 * With PB_CHECK_ROUNDS=1, each round's figure per part and copy is printed too (to pair the copies round by round).
 *
 * `src` is a copy of src/ to measure instead (`git archive <commit> src | tar -x -C /tmp/base`, a node_modules link
 * beside it), or several separated by commas (`src,/tmp/base/src`): each is loaded with its own modules and each part
 * runs on each copy in turn, round after round (the copies' order reversed every other round), a median per copy.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod, playEvents, podKey } from '../workload/pods.ts';

const [eventsArg = '20000', roundsArg = '7', srcArg, partsArg, podsArg = '1000', clock = 'thread'] = process.argv.slice(2);
const EVENTS = Number(eventsArg);
const ROUNDS = Number(roundsArg);
const srcs = (srcArg ?? 'src').split(',');

type Part = (f: (typeof frames)[number]) => void;
/** The parts of one copy of src/, each with its own modules (and so its own caches). */
async function partsOf(dir: string): Promise<Record<string, Part>> {
  const src = dir === 'src' ? new URL('../../src/', import.meta.url) : pathToFileURL(`${isAbsolute(dir) ? dir : resolve(dir)}/`);
  const load = async <T>(path: string) => (await import(new URL(path, src).href)) as T;
  const decode = await load<typeof import('../../src/1-transport/protobuf/decode.ts')>('1-transport/protobuf/decode.ts');
  // The walk's home since it was specialised per message: check.ts (before: values.ts).
  const values = await load<{ checkMessage: (end: number, msg: unknown) => void }>('1-transport/protobuf/check.ts').catch(() =>
    load<{ checkMessage: (end: number, msg: unknown) => void }>('1-transport/protobuf/values.ts'),
  );
  const lazy = await load<typeof import('../../src/1-transport/protobuf/lazy.ts')>('1-transport/protobuf/lazy.ts');
  const wire = await load<typeof import('../../src/1-transport/protobuf/wire.ts')>('1-transport/protobuf/wire.ts');
  const schema = await load<typeof import('../../src/1-transport/protobuf/schema.ts')>('1-transport/protobuf/schema.ts');
  const source = await load<typeof import('../../src/2-source/decode.ts')>('2-source/decode.ts');
  const objects = await load<typeof import('../../src/0-model/objects.ts')>('0-model/objects.ts');
  const decodePod = source.decoder(objects.KubeObject, undefined, { apiVersion: 'v1', kind: 'Pod' });
  const transforms = await load<typeof import('../../src/5-informer/transforms.ts')>('5-informer/transforms.ts');
  const decodeStripped = source.decoder(objects.KubeObject, transforms.stripManagedFields, { apiVersion: 'v1', kind: 'Pod' });

  /** Reads a frame's envelope and leaves the reader at its object's start; returns where the object ends and its message. */
  function object(bytes: Buffer): { end: number; kind: string } {
    wire.begin(bytes, 0);
    const { objectEnd } = decode.watchEvent(bytes.length);
    const { kind, rawStart, rawEnd } = decode.envelope(objectEnd);
    wire.seek(rawStart);
    return { end: rawEnd, kind };
  }

  const cache = new Map<string, unknown>();
  return {
    walk: (f) => {
      const { end, kind } = object(f.bytes);
      values.checkMessage(end, schema.message(kind));
      wire.release(undefined);
    },
    lazy: (f) => {
      const { end, kind } = object(f.bytes);
      // The object, `{}` itself or a new one when its keys came out of JSON order (an older src/ returns nothing).
      const given: Record<string, unknown> = {};
      const target = lazy.decodeLazyInto(given, end, schema.message(kind)) ?? given;
      wire.release(undefined);
      names += ((target.metadata as { name: string }).name ?? '').length;
      cache.set(f.key, target);
    },
    frame: (f) => {
      const { object: o } = decode.decodeWatchFrame(f.bytes, undefined);
      names += ((o.metadata as { name: string }).name ?? '').length;
      cache.set(f.key, o);
    },
    kube: (f) => {
      const { object: o } = decode.decodeWatchFrame(f.bytes, undefined);
      if (decodePod(o, 'watch') !== o) throw new Error('not a KubeObject');
      names += ((o.metadata as { name: string }).name ?? '').length;
      cache.set(f.key, o);
    },
    labels: (f) => {
      const { object: o } = decode.decodeWatchFrame(f.bytes, undefined);
      if (decodePod(o, 'watch') !== o) throw new Error('not a KubeObject');
      names += Object.keys((o.metadata as { labels?: object }).labels ?? {}).length;
      cache.set(f.key, o);
    },
    strip: (f) => {
      const { object: o } = decode.decodeWatchFrame(f.bytes, undefined);
      const stripped = decodeStripped(o, 'watch') as { metadata: { name: string } };
      names += stripped.metadata.name.length;
      cache.set(f.key, stripped);
    },
    read: (f) => {
      const { object: o } = decode.decodeWatchFrame(f.bytes, undefined);
      for (const key of Object.keys(o)) void o[key];
      const metadata = o.metadata as Record<string, unknown>;
      for (const key of Object.keys(metadata)) void metadata[key];
      names += ((o.metadata as { managedFields: unknown[] }).managedFields ?? []).length;
      cache.set(f.key, o);
    },
  };
}

const frames: { key: string; bytes: Buffer }[] = [];
for (const e of playEvents(Number(podsArg), EVENTS, 7)) {
  if (e.type === 'DELETED') continue;
  frames.push({ key: podKey(e.pod.index), bytes: encodeWatchFrame(e.type, makePod(e.pod)).subarray(4) });
}
let names = 0;
const copies = await Promise.all(srcs.map(async (dir) => ({ dir, parts: await partsOf(dir) })));

const threadCpu = () => {
  const t =
    clock === 'process'
      ? process.cpuUsage()
      : (process as unknown as { threadCpuUsage(): { user: number; system: number } }).threadCpuUsage();
  return t.user + t.system;
};
const samples = new Map<string, number[]>();
const chosenNames = Object.keys(copies[0]!.parts).filter((name) =>
  partsArg === undefined || partsArg === '' ? !['read', 'labels', 'strip'].includes(name) : partsArg.split(',').includes(name),
);
for (let round = 0; round <= ROUNDS; round++) {
  // With several copies, each part runs on each copy in turn, the copies' order reversed every other round.
  const order = round % 2 === 0 ? copies : [...copies].reverse();
  for (const name of chosenNames)
    for (const { dir, parts } of order) {
      const part = parts[name]!;
      const t0 = threadCpu();
      for (const f of frames) part(f);
      const us = (threadCpu() - t0) / frames.length;
      const label = copies.length > 1 ? `${name}@${dir}` : name;
      if (round > 0) samples.set(label, [...(samples.get(label) ?? []), us]);
    }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const row = Object.fromEntries([...samples].map(([name, xs]) => [name, Number(median(xs).toFixed(2))]));
console.log(JSON.stringify({ src: srcArg ?? 'src', events: frames.length, ...row, names: names > 0 }));
// PB_CHECK_ROUNDS=1: every round's figure too, to pair the copies round by round.
if (process.env.PB_CHECK_ROUNDS === '1')
  for (const [label, xs] of samples) console.log(JSON.stringify({ label, rounds: xs.map((x) => Number(x.toFixed(2))) }));
