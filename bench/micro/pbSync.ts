/**
 * Issue #36: a sync's list pages over protobuf, in process: P pods of the bench workload as list bodies of S items
 * (made once before timing), each decoded whole by `decodeListBody` (every item walked and decoded lazily), every item
 * kept, as a store keeps a sync's objects. The whole process's CPU per item (V8's helper threads too), the main
 * thread's, and the heap kept per item; medians of the rounds (each a fresh store). Round 0 (the code still cold, as
 * in a process's first sync) is left out of the medians and printed apart (`cold…`).
 *
 *   node --expose-gc bench/micro/pbSync.ts [pods=50000] [pageSize=500] [rounds=3] [src=../../src]
 *
 * With PB_SYNC_PROFILE=FILE, the timed decodes alone (not the pages' encoding, not the heap's measure) are profiled by
 * V8's sampler (100 µs) into FILE, a `.cpuprofile` for `pbStages.ts` or DevTools. The heap kept counts `arrayBuffers`
 * too (memory off V8's heap: a variant keeping an object's bytes in a Buffer of its own would hide there).
 *
 * `src` may name several copies of src/, separated by commas (`src,/tmp/base/src`, as pbCheck.ts takes them): each is
 * loaded with its own modules and they take turns, round after round (their order reversed every other round), a
 * median per copy: an A/B in one process, on a machine whose load changes from minute to minute.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeEnvelope } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod } from '../workload/pods.ts';

const [podsArg = '50000', pageArg = '500', roundsArg = '3', srcArg] = process.argv.slice(2);
const copies = (srcArg ?? 'src').split(',');
const decoders = await Promise.all(
  copies.map(async (dir) => {
    const src = dir === 'src' ? new URL('../../src/', import.meta.url) : pathToFileURL(`${isAbsolute(dir) ? dir : resolve(dir)}/`);
    return (await import(new URL('1-transport/protobuf/decode.ts', src).href)) as typeof import('../../src/1-transport/protobuf/decode.ts');
  }),
);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const PODS = Number(podsArg);
const PAGE = Number(pageArg);
const pages: Buffer[] = [];
for (let start = 0; start < PODS; start += PAGE)
  pages.push(
    encodeEnvelope({
      apiVersion: 'v1',
      kind: 'PodList',
      metadata: { resourceVersion: String(PODS) },
      items: Array.from({ length: Math.min(PAGE, PODS - start) }, (_, i) => {
        const { apiVersion: _a, kind: _k, ...item } = makePod({ index: start + i, resourceVersion: start + i + 1, revision: 1 });
        return item;
      }),
    }),
  );
const thread = () => {
  const t = (process as unknown as { threadCpuUsage(): { user: number; system: number } }).threadCpuUsage();
  return t.user + t.system;
};
const total = () => {
  const t = process.cpuUsage();
  return t.user + t.system;
};
const heap = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const profileFile = process.env.PB_SYNC_PROFILE;
const session = profileFile === undefined ? undefined : new Session();
if (session !== undefined) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
}
const rows = copies.map(() => [] as { cpu: number; main: number; heap: number }[]);
/** Round 0 of each copy: its code still cold (interpreted, then compiled on V8's helper threads), as in a process's first sync. */
const cold = copies.map(() => ({ cpu: 0, main: 0 }));
for (let round = 0; round <= Number(roundsArg); round++) {
  const order = copies.map((_, i) => i);
  if (round % 2 === 1) order.reverse();
  for (const c of order) {
    const decode = decoders[c]!;
    const before = heap();
    const store: unknown[] = [];
    if (session !== undefined && round > 0) await session.post('Profiler.start');
    const t0 = total();
    const m0 = thread();
    for (const page of pages) for (const item of decode.decodeListBody(page, undefined).items as unknown[]) store.push(item);
    const cpu = (total() - t0) / store.length;
    const main = (thread() - m0) / store.length;
    if (session !== undefined && round > 0) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(profileFile!.replace(/(\.cpuprofile)?$/, `-${round}-${c}.cpuprofile`), JSON.stringify(profile));
    }
    if (round > 0) rows[c]!.push({ cpu, main, heap: (heap() - before) / store.length });
    else cold[c] = { cpu, main };
    store.length = 0;
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const [c, dir] of copies.entries())
  console.log(
    JSON.stringify({
      src: dir,
      pods: PODS,
      cpuUsPerItem: Number(median(rows[c]!.map((r) => r.cpu)).toFixed(2)),
      mainUsPerItem: Number(median(rows[c]!.map((r) => r.main)).toFixed(2)),
      heapPerItem: Math.round(median(rows[c]!.map((r) => r.heap))),
      mainByRound: rows[c]!.map((r) => Number(r.main.toFixed(2))),
      coldCpuUsPerItem: Number(cold[c]!.cpu.toFixed(2)),
      coldMainUsPerItem: Number(cold[c]!.main.toFixed(2)),
    }),
  );
