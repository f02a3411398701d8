/**
 * Issue #36: a sync's work after the decoder, in process: P pods of the bench workload decoded once from protobuf list
 * pages (lazily, as rx-pb's are), then handed as one `replace` (what the reflector sends once the list's last page has
 * come) to a fresh informer (`informerFromSource`: resync, deltaFifo, reduceDeltas and the store's batch, the events to
 * one `events$` subscriber). The main thread's and the whole process's CPU per listed item, of that one step, and the
 * collector's runs during it, and the heap it grew by per item (what it allocated, when no collection ran during it: give
 * V8 a young generation large enough, `--max-semi-space-size=1024`); medians of the rounds. Round 0 (the code still
 * cold) is left out.
 *
 *   node --expose-gc bench/micro/firstList.ts [pods=50000] [rounds=7] [src=../../src] [created|sorted]
 *
 * `created` (default) lists the pods in the bench workload server's order (creation, across 100 namespaces); `sorted`
 * in key order, as an API server lists them.
 *
 * With FIRST_LIST_PROFILE=FILE, the timed steps alone are profiled by V8's sampler (100 µs), one `.cpuprofile` a round
 * and copy (`FILE-<round>-<copy>.cpuprofile`). With FIRST_LIST_HEAP=1, round 1's step of each copy runs under V8's
 * sampling heap profiler (every object, collected ones included) and the bytes it allocated a listed item are printed
 * by the function that allocated them (that round's CPU figures are then the profiler's, not the code's).
 *
 * `src` may name several copies of src/, separated by commas: each is loaded with its own modules and they take turns,
 * round after round (their order reversed every other round), a median per copy: an A/B in one process. The objects
 * are the same for every copy and round (decoded by the first copy), so what is timed is the pipeline's own work.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Subject } from 'rxjs';
import { encodeEnvelope } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod } from '../workload/pods.ts';
import { countCollections } from './gcCounts.ts';

const [podsArg = '50000', roundsArg = '7', srcArg, orderArg = 'created'] = process.argv.slice(2);
const copies = (srcArg ?? 'src').split(',');
type Modules = {
  decode: typeof import('../../src/1-transport/protobuf/decode.ts');
  informer: typeof import('../../src/5-informer/informerFromSource.ts');
  resources: typeof import('../../src/0-model/resources.ts');
};
const modules: Modules[] = await Promise.all(
  copies.map(async (dir) => {
    const src = dir === 'src' ? new URL('../../src/', import.meta.url) : pathToFileURL(`${isAbsolute(dir) ? dir : resolve(dir)}/`);
    return {
      decode: await import(new URL('1-transport/protobuf/decode.ts', src).href),
      informer: await import(new URL('5-informer/informerFromSource.ts', src).href),
      resources: await import(new URL('0-model/resources.ts', src).href),
    } as Modules;
  }),
);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const PODS = Number(podsArg);
const PAGE = 500;
const items: unknown[] = [];
for (let start = 0; start < PODS; start += PAGE) {
  const page = encodeEnvelope({
    apiVersion: 'v1',
    kind: 'PodList',
    metadata: { resourceVersion: String(PODS) },
    items: Array.from({ length: Math.min(PAGE, PODS - start) }, (_, i) => {
      const { apiVersion: _a, kind: _k, ...item } = makePod({ index: start + i, resourceVersion: start + i + 1, revision: 1 });
      return item;
    }),
  });
  for (const item of modules[0]!.decode.decodeListBody(page, undefined).items as unknown[]) items.push(item);
}
if (orderArg === 'sorted') {
  const keyOf = (item: unknown) => {
    const { namespace, name } = (item as { metadata: { namespace: string; name: string } }).metadata;
    return `${namespace}/${name}`;
  };
  items.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}
const thread = () => {
  const t = (process as unknown as { threadCpuUsage(): { user: number; system: number } }).threadCpuUsage();
  return t.user + t.system;
};
const total = () => {
  const t = process.cpuUsage();
  return t.user + t.system;
};
const profileFile = process.env.FIRST_LIST_PROFILE;
const session = profileFile === undefined ? undefined : new Session();
const heapSession = new Session();
if (session !== undefined) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
}
const heapProfile = process.env.FIRST_LIST_HEAP === '1';
if (heapProfile) heapSession.connect();
const rows = copies.map(() => [] as { cpu: number; main: number; scavenges: number; grown: number }[]);
for (let round = 0; round <= Number(roundsArg); round++) {
  const order = copies.map((_, i) => i);
  if (round % 2 === 1) order.reverse();
  for (const c of order) {
    const { informer, resources } = modules[c]!;
    const source = new Subject<never>();
    const made = informer.informerFromSource(resources.Pod as never, source, {});
    let events = 0;
    const sub = made.events$.subscribe(() => events++);
    gc();
    gc();
    if (session !== undefined && round > 0) await session.post('Profiler.start');
    const sampleHeap = heapProfile && round === 1;
    if (sampleHeap)
      await heapSession.post('HeapProfiler.startSampling', {
        samplingInterval: 1,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    const counts = countCollections();
    const h0 = process.memoryUsage().heapUsed;
    const t0 = total();
    const m0 = thread();
    source.next({ type: 'replace', items, resourceVersion: String(PODS) } as never);
    const cpu = (total() - t0) / items.length;
    const main = (thread() - m0) / items.length;
    const grown = (process.memoryUsage().heapUsed - h0) / items.length;
    if (sampleHeap) printAllocations(copies[c]!, (await heapSession.post('HeapProfiler.stopSampling')).profile);
    if (session !== undefined && round > 0) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(profileFile!.replace(/(\.cpuprofile)?$/, `-${round}-${c}.cpuprofile`), JSON.stringify(profile));
    }
    // The collector's entries come to their observer after the step.
    await new Promise((done) => setTimeout(done, 10));
    if (events !== items.length) throw new Error(`${copies[c]}: ${events} events for ${items.length} items`);
    if (round > 0) rows[c]!.push({ cpu, main, scavenges: counts.scavenges, grown });
    sub.unsubscribe();
  }
}
/** Bytes allocated a listed item, by the function that allocated them (those over 1 B an item). */
function printAllocations(label: string, profile: object): void {
  const { head, samples } = profile as unknown as { head: HeapNode; samples: readonly { size: number; nodeId: number }[] };
  const nameOf = new Map<number, string>();
  const walk = (node: HeapNode): void => {
    nameOf.set(
      node.id,
      `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').pop()}:${node.callFrame.lineNumber + 1}`,
    );
    node.children.forEach(walk);
  };
  walk(head);
  const bytes = new Map<string, number>();
  let total = 0;
  for (const { size, nodeId } of samples) {
    const name = nameOf.get(nodeId) ?? '?';
    bytes.set(name, (bytes.get(name) ?? 0) + size);
    total += size;
  }
  console.log(`${label}: ${(total / items.length).toFixed(0)} B allocated a listed item (sampled, every object)`);
  for (const [name, n] of [...bytes].sort((a, b) => b[1] - a[1]))
    if (n / items.length >= 1) console.log(`  ${(n / items.length).toFixed(0).padStart(5)} B  ${name}`);
}
interface HeapNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children: readonly HeapNode[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const [c, dir] of copies.entries())
  console.log(
    JSON.stringify({
      src: dir,
      pods: PODS,
      order: orderArg,
      cpuUsPerItem: Number(median(rows[c]!.map((r) => r.cpu)).toFixed(3)),
      mainUsPerItem: Number(median(rows[c]!.map((r) => r.main)).toFixed(3)),
      scavenges: median(rows[c]!.map((r) => r.scavenges)),
      heapGrownPerItem: Math.round(median(rows[c]!.map((r) => r.grown))),
      mainByRound: rows[c]!.map((r) => Number(r.main.toFixed(2))),
    }),
  );
