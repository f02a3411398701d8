/**
 * Issue #36: what a watch event costs the protobuf transport beside a listed item, in process: the same P pods of the
 * bench workload as list pages of 500 (`decodeListBody`) and as MODIFIED watch frames (`decodeWatchFrame`), made once
 * before timing, every object kept (as a store keeps them); the two take turns round after round (their order reversed
 * every other round). Main-thread µs an object, medians of the rounds (the first warms up), and each round's.
 *
 *   node --expose-gc bench/micro/pbWatchList.ts [pods=20000] [rounds=9]
 */
import { decodeListBody, decodeWatchFrame } from '../../src/1-transport/protobuf/decode.ts';
import { encodeEnvelope, encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod } from '../workload/pods.ts';

const [podsArg = '20000', roundsArg = '9'] = process.argv.slice(2);
const PODS = Number(podsArg);
const PAGE = 500;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

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
const frames = Array.from({ length: PODS }, (_, i) =>
  encodeWatchFrame('MODIFIED', makePod({ index: i, resourceVersion: i + 1, revision: 1 })).subarray(4),
);

const thread = () => {
  const t = (process as unknown as { threadCpuUsage(): { user: number; system: number } }).threadCpuUsage();
  return t.user + t.system;
};
const kept: unknown[] = new Array<unknown>(PODS);
const rows = { list: [] as number[], watch: [] as number[] };
for (let round = 0; round <= Number(roundsArg); round++) {
  for (const path of round % 2 === 1 ? (['watch', 'list'] as const) : (['list', 'watch'] as const)) {
    kept.fill(undefined);
    gc();
    const t0 = thread();
    let k = 0;
    if (path === 'list') {
      for (const page of pages) for (const item of decodeListBody(page, undefined).items as unknown[]) kept[k++] = item;
    } else for (const frame of frames) kept[k++] = decodeWatchFrame(frame, undefined).object;
    if (round > 0) rows[path].push((thread() - t0) / PODS);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const path of ['list', 'watch'] as const)
  console.log(
    JSON.stringify({
      path,
      pods: PODS,
      mainUsPerObject: Number(median(rows[path]).toFixed(2)),
      byRound: rows[path].map((x) => Number(x.toFixed(2))),
    }),
  );
