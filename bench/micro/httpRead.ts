/**
 * What reading a sync's list pages costs before any decoding: the bench's workload server (its own process)
 * serves P pods in pages of 500, read here with `node:http` and thrown away, in a process that has loaded the
 * library (its modules are the heap every full collection marks). CPU time of this process (all threads, and
 * the main thread's share) and the collector's runs: the floor under a sharded informer's dropped objects.
 *
 * With `--protobuf` the server answers in protobuf (asked as rx-informer asks with `http.encoding: 'protobuf'`):
 * the floor under a protobuf sync (issue #36). Also prints the socket reads (`data` events) a page.
 *
 *   node bench/micro/httpRead.ts [pods] [--protobuf]
 */
import { spawn } from 'node:child_process';
import * as http from 'node:http';
import { fileURLToPath } from 'node:url';
import { countCollections } from './gcCounts.ts';
import '../../src/index.ts';
import type { ServerReady } from '../workload/server.ts';

const args = process.argv.slice(2);
const PROTOBUF = args.includes('--protobuf');
const PODS = Number(args.find((a) => !a.startsWith('--')) ?? 30_000);
const PAGE = 500;
const serverPath = fileURLToPath(new URL('../workload/server.ts', import.meta.url));
const server = spawn(
  process.execPath,
  [serverPath, JSON.stringify({ pods: PODS, events: 0, relist: false, seed: 1, ...(PROTOBUF ? { protobuf: true } : {}) })],
  {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  },
);
const ready = await new Promise<ServerReady>((resolve) => server.once('message', (message) => resolve(message as ServerReady)));
const gcCounts = countCollections();
const agent = new http.Agent({ keepAlive: true });
const cpu = process.cpuUsage();
const main = process.threadCpuUsage();
let bytes = 0;
let reads = 0;
const headers = PROTOBUF ? { accept: 'application/vnd.kubernetes.protobuf, application/json' } : {};
for (let offset = 0; offset < PODS; offset += PAGE) {
  // The workload server's continue token: its snapshot and the next offset.
  const token = offset === 0 ? '' : `&continue=${Buffer.from(JSON.stringify({ s: 'i', o: offset })).toString('base64url')}`;
  await new Promise<void>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: ready.port, agent, headers, path: `/api/v1/pods?limit=${PAGE}${token}` }, (response) => {
        if (PROTOBUF && !String(response.headers['content-type']).startsWith('application/vnd.kubernetes.protobuf'))
          reject(new Error(`asked protobuf, got ${response.headers['content-type']}`));
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          reads++;
        });
        response.on('end', resolve);
      })
      .on('error', reject);
  });
}
const used = process.cpuUsage(cpu);
const usedMain = process.threadCpuUsage(main);
const ms = (used.user + used.system) / 1000;
console.log(
  `${PODS} pods in ${Math.ceil(PODS / PAGE)} pages (${(bytes / 1e6).toFixed(1)} MB${PROTOBUF ? ', protobuf' : ''}, ` +
    `${(reads / Math.ceil(PODS / PAGE)).toFixed(1)} reads a page) read and thrown away: ${ms.toFixed(0)} ms of CPU ` +
    `(${((ms * 1000) / PODS).toFixed(1)} µs a pod; main thread ${((usedMain.user + usedMain.system) / 1000).toFixed(0)} ms), ` +
    `${gcCounts.markCompacts} mark-compacts, ${gcCounts.scavenges} scavenges`,
);
agent.destroy();
server.kill();
