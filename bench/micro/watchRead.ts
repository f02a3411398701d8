/**
 * What reading a watch stream costs before any decoding, with a cache of a given size in the heap: the bench's
 * workload server (its own process, on the other core) streams E watch events, read here with `node:http` and
 * thrown away, or split into lines, or split and decoded lazily into a Map that keeps them as a cache does. The
 * process first holds N lazily decoded pods (a cache's heap). CPU time of this process per event (all threads, and
 * the main thread's share), and the collector's runs: how much of an informer's per-event cost is the socket's.
 *
 *   taskset -c 0 node --conditions=rx-informer-source bench/micro/watchRead.ts [cached=50000] [events=30000] [read|split|cache]
 */
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import { fileURLToPath } from 'node:url';
import { countCollections } from './gcCounts.ts';
import { lazyParseObject, lazyParseWatchLine } from '../../src/1-transport/lazyJson.ts';
import { LineSplitter } from '../../src/1-transport/lineSplitter.ts';
import { makePod, podKey } from '../workload/pods.ts';
import type { ServerReady } from '../workload/server.ts';

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
