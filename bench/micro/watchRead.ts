/**
 * What reading a watch stream costs before any decoding, with a cache of a given size in the heap: the bench's
 * workload server (its own process, on the other core) streams E watch events, read here with `node:http` and
 * thrown away, or split into lines, or split and decoded lazily into a Map that keeps them as a cache does. The
 * process first holds N lazily decoded pods (a cache's heap). CPU time of this process per event (all threads, and
 * the main thread's share), and the collector's runs: how much of an informer's per-event cost is the socket's.
 *
 *   taskset -c 0 node --conditions=rx-informer-source bench/micro/watchRead.ts [cached=50000] [events=30000] [read|split|cache]
 *
 * `inprocess` instead: the read path from a socket's chunk to the watch event, without a socket or a server, ours
 * against the raw limit's (bench/contenders/raw.ts) on the same chunks (the workload's watch lines for 1,000 pods, cut
 * every `chunk` bytes, 65,536 as Node's HTTP/1.1 reads a loopback socket), stage by stage: `split` (lines as text),
 * `parse` (and `JSON.parse`; ours: `parseWatchLine`, its checks included), `store` (and the key and `Map.set` for
 * both: the raw limit's whole work). What our watch reader does with a frame after `parseWatchLine` (the request's
 * name on faults, `Subscriber.next`) is not here: a CPU profile of the bench shows it (docs/performance.md). Main-thread
 * CPU µs an event, medians of `rounds` rounds, each stage's two variants run alternately in one process:
 *
 *   node --conditions=rx-informer-source --expose-gc bench/micro/watchRead.ts inprocess [events=50000] [rounds=7] [chunk=65536]
 */
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import { fileURLToPath } from 'node:url';
import { countCollections } from './gcCounts.ts';
import { lazyParseObject, lazyParseWatchLine } from '../../src/1-transport/lazyJson.ts';
import { LineSplitter } from '../../src/1-transport/lineSplitter.ts';
import { parseWatchLine } from '../../src/1-transport/http/decode.ts';
import { makePod, playEvents, podKey } from '../workload/pods.ts';
import type { ServerReady } from '../workload/server.ts';

if (process.argv[2] === 'inprocess') {
  runInProcess(Number(process.argv[3] ?? 50_000), Number(process.argv[4] ?? 7), Number(process.argv[5] ?? 65_536));
  process.exit(0);
}

const CACHED = Number(process.argv[2] ?? 50_000);
const EVENTS = Number(process.argv[3] ?? 30_000);
const MODE = process.argv[4] ?? 'read';
const PODS = 1000;

const cache = new Map<string, unknown>();
for (let i = 0; i < CACHED; i++)
  cache.set(`ballast/${i}`, lazyParseObject(JSON.stringify(makePod({ index: i, resourceVersion: i + 1, revision: 0 }))));
for (let i = 0; i < PODS; i++) cache.set(podKey(i), undefined);

const serverPath = fileURLToPath(new URL('../workload/server.ts', import.meta.url));
const server = spawn(
  'taskset',
  ['-c', '1', process.execPath, serverPath, JSON.stringify({ pods: PODS, events: EVENTS, relist: false, seed: 1 })],
  {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  },
);
const ready = await new Promise<ServerReady>((resolve) => server.once('message', (message) => resolve(message as ServerReady)));
const get = (path: string, onData: (chunk: Buffer) => boolean) =>
  new Promise<void>((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: ready.port, path }, (response) => {
      response.on('data', (chunk: Buffer) => {
        if (onData(chunk)) {
          request.destroy();
          resolve();
        }
      });
      response.on('end', resolve);
    });
    request.on('error', reject);
  });
await get('/_bench/go', () => false);
(globalThis as { gc?: () => void }).gc?.();

const gcCounts = countCollections();

const splitter = new LineSplitter();
let lines = 0;
const sink = {
  lineBytes(line: Buffer) {
    lines++;
    if (MODE !== 'cache') return;
    const event = lazyParseWatchLine(line) as { type: string; object: { metadata: { namespace: string; name: string } } };
    const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
    if (event.type === 'DELETED') cache.delete(key);
    else cache.set(key, event.object);
  },
  oversize() {},
};
let bytes = 0;
const cpu = process.cpuUsage();
const main = process.threadCpuUsage();
await get(`/api/v1/pods?watch=1&resourceVersion=${PODS}`, (chunk) => {
  bytes += chunk.length;
  if (MODE !== 'read') splitter.push(chunk, sink);
  return bytes >= ready.watchBytes;
});
const used = process.cpuUsage(cpu);
const usedMain = process.threadCpuUsage(main);
const us = (u: { user: number; system: number }) => ((u.user + u.system) / EVENTS).toFixed(1);
console.log(
  `${MODE}, ${CACHED} cached: ${EVENTS} events (${(bytes / 1e6).toFixed(1)} MB${MODE === 'read' ? '' : `, ${lines} lines`}): ` +
    `${us(used)} µs CPU an event (main thread ${us(usedMain)}), ${gcCounts.markCompacts} mark-compacts, ${gcCounts.scavenges} scavenges`,
);
server.kill();
process.exit(0);

/** The `inprocess` mode (see the header): each stage's raw and ours over the same chunks, alternately, medians. */
function runInProcess(events: number, rounds: number, chunkBytes: number): void {
  const text = [...playEvents(1000, events, 6)].map((e) => `{"type":"${e.type}","object":${JSON.stringify(makePod(e.pod))}}\n`).join('');
  const stream = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < stream.length; at += chunkBytes) chunks.push(Buffer.from(stream.subarray(at, at + chunkBytes)));
  interface Meta {
    readonly metadata: { readonly name: string; readonly namespace?: string };
  }
  let sum = 0;
  const cache = new Map<string, unknown>();
  // The raw limit's read loop (bench/contenders/raw.ts), `onLine` for each line's text.
  const rawRead = (onLine: (text: string) => void) => {
    let pending: Buffer[] = [];
    for (const chunk of chunks) {
      let start = 0;
      let nl = chunk.indexOf(10);
      if (pending.length > 0) {
        if (nl < 0) {
          pending.push(chunk);
          continue;
        }
        pending.push(chunk.subarray(0, nl));
        onLine(Buffer.concat(pending).toString('utf8'));
        pending = [];
        start = nl + 1;
        nl = chunk.indexOf(10, start);
      }
      while (nl >= 0) {
        onLine(chunk.toString('utf8', start, nl));
        start = nl + 1;
        nl = chunk.indexOf(10, start);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    }
  };
  const ourRead = (onLine: (text: string, bytes: number) => void) => {
    const splitter = new LineSplitter(16 * 1024 * 1024);
    const sink = { line: onLine, oversize: () => undefined };
    for (const chunk of chunks) splitter.push(chunk, sink);
  };
  const store = (type: string, object: Meta) => {
    const key = `${object.metadata.namespace}/${object.metadata.name}`;
    if (type === 'DELETED') cache.delete(key);
    else cache.set(key, object);
  };
  const variants: Record<string, Record<'raw' | 'ours', () => void>> = {
    split: {
      raw: () => rawRead((line) => (sum += line.length)),
      ours: () => ourRead((line) => (sum += line.length)),
    },
    parse: {
      raw: () => rawRead((line) => (sum += (JSON.parse(line) as { type: string }).type.length)),
      ours: () =>
        ourRead((line) => {
          const frame = parseWatchLine(line);
          if (!(frame instanceof Error)) sum += frame.type.length;
        }),
    },
    store: {
      raw: () =>
        rawRead((line) => {
          const event = JSON.parse(line) as { type: string; object: Meta };
          store(event.type, event.object);
        }),
      ours: () =>
        ourRead((line) => {
          const frame = parseWatchLine(line);
          if (!(frame instanceof Error)) store(frame.type, frame.object as Meta);
        }),
    },
  };
  const cpu = () => {
    const u = process.threadCpuUsage();
    return u.user + u.system;
  };
  console.log(
    `in process: ${events} watch events, ${(stream.length / 1e6).toFixed(1)} MB in ${chunks.length} chunks of ${chunkBytes} bytes, ${rounds} rounds`,
  );
  const gc = (globalThis as { gc?: () => void }).gc;
  for (const [stage, pair] of Object.entries(variants)) {
    const times: Record<'raw' | 'ours', number[]> = { raw: [], ours: [] };
    pair.raw();
    pair.ours(); // warm both
    for (let r = 0; r < rounds; r++) {
      for (const who of r % 2 === 0 ? (['raw', 'ours'] as const) : (['ours', 'raw'] as const)) {
        cache.clear();
        gc?.();
        const t = cpu();
        pair[who]();
        times[who].push((cpu() - t) / events);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const show = (xs: number[]) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
    console.log(
      `${stage.padEnd(6)} raw ${show(times.raw)}  ours ${show(times.ours)}  µs an event, main thread: ours − raw ${(median(times.ours) - median(times.raw)).toFixed(2)}`,
    );
  }
  if (sum < 0) console.log(sum);
}
