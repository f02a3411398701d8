/**
 * What an eager informer does per watch event beyond the raw limit, in process, one contender per process:
 * `raw` (JSON.parse of each line + a Map, as bench/contenders/raw.ts), `store` (the same with the informer's
 * `Store` instead of the Map: a get and a write an event, as the reducer) or `rx` (the informer over a ListWatch
 * handing it the same lines through the transport's `parseWatchLine`, one `events$` subscriber), over the
 * workload's pods (bench/workload/pods.ts), `cached` of them listed first, then `events` watch events.
 *
 *   node --expose-gc bench/micro/perEvent.ts raw|store|rx [cached=50000] [events=50000] [--src DIR] [--heap-sample FILE [--all] [--top N]] [--cpu-prof FILE] [--garbage BYTES] [--parsed ROUNDS]
 *
 * Prints CPU µs per event of the whole process and of the main thread (the rest is V8's helper threads), the
 * scavenges and mark-compacts of the watch phase, and the bytes the old generation grew by per event (what
 * scavenges promoted, when no mark-compact ran). `--heap-sample FILE` samples allocations during the watch
 * phase, keeping the samples of objects no scavenge freed (V8's sampling heap profiler with
 * `includeObjectsCollectedByMajorGC`), and writes them (a .heapprofile for DevTools) and a summary by
 * allocating function (with `--all`, of every object allocated, the short-lived too; `--top N` rows, default 15); `--cpu-prof FILE` writes a CPU profile of the watch phase (read it with bench/profile.ts).
 * `--src DIR` runs rx on another copy of src/ (an A/B of two versions, each in its own process). `--parsed R`: the
 * per-event path alone, the lines parsed beforehand, R rounds (see below).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { Observable, of } from 'rxjs';
import type * as Library from '../../src/index.ts';
import type * as Transport from '../../src/1-transport/httpTransport.ts';
import type * as StoreModule from '../../src/4-store/store.ts';
import { makePod, playEvents } from '../workload/pods.ts';

const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] ?? '').startsWith('--'));
const flag = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
};
const mode = positional[0] ?? 'rx';
const cached = Number(positional[1] ?? 50_000);
const events = Number(positional[2] ?? 50_000);
const src = resolve(flag('src') ?? join(import.meta.dirname, '..', '..', 'src'));
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
if (mode !== 'raw' && mode !== 'store' && mode !== 'rx') throw new Error(`mode raw, store or rx, not ${mode}`);

// The list as the server sends it (items without apiVersion/kind are completed by the informer), the watch lines.
const listText = JSON.stringify(Array.from({ length: cached }, (_, i) => makePod({ index: i, resourceVersion: i + 1, revision: 0 })));
const lines: string[] = [];
for (const e of playEvents(cached, events, 6)) lines.push(`{"type":"${e.type}","object":${JSON.stringify(makePod(e.pod))}}`);

interface Meta {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

let play: () => void;
let checksum = 0;
/** `--garbage N`: raw also allocates N bytes an event of small objects that die at once (what the collector makes of short-lived garbage alone). */
const garbage = Number(flag('garbage') ?? 0);
let last: unknown;
const makeGarbage = () => {
  // ~56 bytes each: a 4-field object.
  for (let i = 0; i < garbage; i += 56) last = { a: i, b: last === undefined ? 0 : 1, c: undefined, d: i };
  last = undefined;
};
if (mode === 'raw') {
  const cache = new Map<string, Meta>();
  for (const o of JSON.parse(listText) as Meta[]) cache.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
  play = () => {
    for (const line of lines) {
      const event = JSON.parse(line) as { type: string; object: Meta };
      checksum += event.object.metadata.name.length;
      const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
      if (event.type === 'DELETED') cache.delete(key);
      else cache.set(key, event.object);
      if (garbage > 0) makeGarbage();
    }
  };
} else if (mode === 'store') {
  // raw with the informer's Store instead of a Map: a get and a write an event, as the reducer does.
  const { Store } = (await import(pathToFileURL(join(src, '4-store', 'store.ts')).href)) as typeof StoreModule;
  const batch = Store.empty<Meta>().batch();
  for (const o of JSON.parse(listText) as Meta[]) batch.write(`${o.metadata.namespace}/${o.metadata.name}`, undefined, o);
  let store = batch.done();
  play = () => {
    for (const line of lines) {
      const event = JSON.parse(line) as { type: string; object: Meta };
      checksum += event.object.metadata.name.length;
      const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
      store = store.write(key, store.get(key), event.type === 'DELETED' ? undefined : event.object);
      if (garbage > 0) makeGarbage();
    }
  };
} else {
  const { informer, Pod } = (await import(pathToFileURL(join(src, 'index.ts')).href)) as typeof Library;
  const { parseWatchLine } = (await import(pathToFileURL(join(src, '1-transport', 'httpTransport.ts')).href)) as typeof Transport;
  let feed: (() => void) | undefined;
  const pods = informer(
    {
      list: () => of({ items: JSON.parse(listText) as unknown[], resourceVersion: String(cached) }),
      watch: () =>
        new Observable((subscriber) => {
          feed = () => {
            for (const line of lines) subscriber.next(parseWatchLine(line));
          };
        }),
    },
    Pod,
  );
  let seen = 0;
  pods.events$.subscribe((event) => {
    seen++;
    checksum += event.object.metadata.name.length;
  });
  if (seen !== cached || !feed) throw new Error(`the informer synced ${seen} of ${cached}`);
  play = () => {
    feed!();
    if (seen !== cached + events) throw new Error(`rx delivered ${seen - cached} of ${events} events`);
  };
}

/**
 * `--parsed R`: the pipeline alone, without JSON.parse. The watch lines are parsed once beforehand and the same
 * frames are handed, in R rounds, to R fresh informers (rx) or Maps (raw), each listed anew (untimed); prints the
 * main thread's CPU µs an event of each round and their median. What a change of the per-event path saves shows
 * here without the parse's ~30 µs and its spread around it.
 */
const parsedRounds = Number(flag('parsed') ?? 0);
if (parsedRounds > 0) {
  if (mode === 'store') throw new Error('--parsed: raw or rx');
  const frames = lines.map((line) => JSON.parse(line) as { type: string; object: Meta });
  lines.length = 0;
  const round = await parsedRound(frames);
  const perRound: number[] = [];
  for (let r = 0; r < parsedRounds; r++) {
    const run = round();
    gc();
    const t0 = process.threadCpuUsage();
    run();
    const t = process.threadCpuUsage(t0);
    perRound.push((t.user + t.system) / events);
  }
  const sorted = [...perRound].sort((a, b) => a - b);
  console.log(
    `${mode}${flag('src') ? `@${flag('src')}` : ''} parsed cached=${cached} events=${events}: median ${sorted[sorted.length >> 1]!.toFixed(2)} µs main-thread CPU/event ` +
      `(rounds ${perRound.map((x) => x.toFixed(2)).join(' ')})`,
  );
  if (checksum < 0) console.log(checksum);
  process.exit(0);
}

/** One round of `--parsed`: a fresh cache listed, then the function that plays the frames into it. */
async function parsedRound(frames: readonly { type: string; object: Meta }[]): Promise<() => () => void> {
  if (mode === 'raw') {
    return () => {
      const cache = new Map<string, Meta>();
      for (const o of JSON.parse(listText) as Meta[]) cache.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
      return () => {
        for (const event of frames) {
          checksum += event.object.metadata.name.length;
          const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
          if (event.type === 'DELETED') cache.delete(key);
          else cache.set(key, event.object);
        }
      };
    };
  }
  const { informer, Pod } = (await import(pathToFileURL(join(src, 'index.ts')).href)) as typeof Library;
  let subscription: { unsubscribe(): void } | undefined;
  return () => {
    subscription?.unsubscribe();
    let feed: (() => void) | undefined;
    const pods = informer(
      {
        list: () => of({ items: JSON.parse(listText) as unknown[], resourceVersion: String(cached) }),
        watch: () =>
          new Observable((subscriber) => {
            feed = () => {
              for (const frame of frames) subscriber.next(frame);
            };
          }),
      },
      Pod,
    );
    let seen = 0;
    subscription = pods.events$.subscribe((event) => {
      seen++;
      checksum += event.object.metadata.name.length;
    });
    if (seen !== cached || !feed) throw new Error(`the informer synced ${seen} of ${cached}`);
    return () => {
      feed!();
      if (seen !== cached + events) throw new Error(`rx delivered ${seen - cached} of ${events} events`);
    };
  };
}

gc();
gc();
const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
const collections = { minor: 0, major: 0, minorMs: 0 };
const count = (entries: readonly PerformanceEntry[]) => {
  for (const entry of entries) {
    const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      collections.minor++;
      collections.minorMs += entry.duration;
    } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) collections.major++;
  }
};
const observer = new PerformanceObserver((list) => count(list.getEntries()));
observer.observe({ entryTypes: ['gc'] });

const heapSample = flag('heap-sample');
const cpuProf = flag('cpu-prof');
const session = heapSample || cpuProf ? new Session() : undefined;
session?.connect();
if (heapSample) {
  await session!.post('HeapProfiler.startSampling', {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: process.argv.includes('--all'),
  });
}
if (cpuProf) {
  await session!.post('Profiler.enable');
  await session!.post('Profiler.setSamplingInterval', { interval: 250 });
  await session!.post('Profiler.start');
}

const old0 = oldSpace();
const r0 = process.resourceUsage();
const p0 = process.cpuUsage();
const t0 = process.threadCpuUsage();
play();
const p = process.cpuUsage(p0);
const t = process.threadCpuUsage(t0);
const r1 = process.resourceUsage();
const old1 = oldSpace();
// The collector's entries are queued after the collections, on the event loop.
await new Promise((done) => setTimeout(done, 200));
count(observer.takeRecords());
observer.disconnect();

const us = (u: { user: number; system: number }) => (u.user + u.system) / events;
console.log(
  `${mode}${flag('src') ? `@${flag('src')}` : ''}${garbage ? ` +${garbage} B garbage` : ''} cached=${cached} events=${events}: ${us(p).toFixed(1)} µs CPU/event ` +
    `(main ${us(t).toFixed(1)}, helpers ${(us(p) - us(t)).toFixed(1)}); per 1k events ${((1000 * collections.minor) / events).toFixed(2)} scavenges ` +
    `${((1000 * collections.minorMs) / events).toFixed(1)} ms, ${collections.major} mark-compacts; ` +
    `old generation +${((old1 - old0) / events).toFixed(0)} B/event; ` +
    // Kernel time and minor page faults (first touches of fresh pages, zeroed by the kernel): what the old generation's growth costs in system time.
    `system ${(p.system / events).toFixed(1)} µs/event, ${((r1.minorPageFault - r0.minorPageFault) / events).toFixed(2)} minor page faults/event`,
);

if (cpuProf) {
  const { profile } = await session!.post('Profiler.stop');
  writeFileSync(cpuProf, JSON.stringify(profile));
}
if (heapSample) {
  const { profile } = await session!.post('HeapProfiler.stopSampling');
  writeFileSync(heapSample, JSON.stringify(profile));
  summarizeHeap(profile as unknown as HeapNode & { head?: HeapNode });
}
session?.disconnect();
if (checksum < 0) console.log(checksum);
// The informer keeps its timers (the watch's deadline check): this process is done.
process.exit(0);

interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
  readonly head?: HeapNode;
}

/** Bytes sampled by allocating function, and by the nearest of our frames (src/ or bench/) on its stack. */
function summarizeHeap(profile: { head?: HeapNode }): void {
  const bySelf = new Map<string, number>();
  const byOurs = new Map<string, number>();
  const name = (f: HeapNode['callFrame']) =>
    `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
  let total = 0;
  const walk = (node: HeapNode, ours: string | undefined) => {
    const here = /\/(src|bench)\//.test(node.callFrame.url) ? name(node.callFrame) : ours;
    if (node.selfSize > 0) {
      total += node.selfSize;
      bySelf.set(name(node.callFrame), (bySelf.get(name(node.callFrame)) ?? 0) + node.selfSize);
      const key = here ?? '(none of ours)';
      byOurs.set(key, (byOurs.get(key) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(profile.head!, undefined);
  const show = (title: string, m: Map<string, number>) => {
    console.log(`\n${title}`);
    for (const [k, b] of [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(flag('top') ?? 15)))
      console.log(`${(b / events).toFixed(0).padStart(7)} B/event ${((100 * b) / total).toFixed(1).padStart(5)}%  ${k}`);
  };
  const what = process.argv.includes('--all') ? 'allocated' : 'not freed by a scavenge';
  console.log(`\nsampled, ${what}: ${(total / events).toFixed(0)} B/event`);
  show('by allocating function:', bySelf);
  show('by the nearest of our functions on the stack:', byOurs);
}
