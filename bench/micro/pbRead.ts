/**
 * A watch frame's lazy protobuf decode of a bench pod, and the same with every member read (`JSON.stringify`, which
 * decodes spec, status and metadata's lazy members: where objects whose wire order is not JSON's are put in order,
 * order82). Main-thread µs a pod, medians of the rounds (the first 10 left out); several copies of src/ take turns in
 * batches of 1,000 pods (their order reversed every other round), so that a changing load loads them alike.
 *
 *   node bench/micro/pbRead.ts [rounds=200] [read=0|1] [src=src,/tmp/base/src]
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod } from '../workload/pods.ts';

const [roundsArg = '200', readArg = '0', srcArg = 'src'] = process.argv.slice(2);
const ROUNDS = Number(roundsArg);
const READ = readArg === '1';
const BATCH = 1_000;
const copies = srcArg.split(',');
type Decode = typeof import('../../src/1-transport/protobuf/decode.ts');
const decoders = await Promise.all(
  copies.map(async (dir) => {
    const src = dir === 'src' ? new URL('../../src/', import.meta.url) : pathToFileURL(`${isAbsolute(dir) ? dir : resolve(dir)}/`);
    return (await import(new URL('1-transport/protobuf/decode.ts', src).href)) as Decode;
  }),
);
const frames = Array.from({ length: BATCH }, (_, i) =>
  Buffer.from(encodeWatchFrame('MODIFIED', makePod({ index: i, resourceVersion: i + 1, revision: 1 })).subarray(4)),
);
const times: number[][] = copies.map(() => []);
let sink = 0;
for (let round = 0; round < ROUNDS; round++) {
  const order = copies.map((_, i) => i);
  if (round % 2 === 1) order.reverse();
  for (const c of order) {
    const start = process.hrtime.bigint();
    for (const frame of frames) {
      const { object } = decoders[c]!.decodeWatchFrame(frame, undefined);
      sink += READ ? JSON.stringify(object).length : (object.metadata as { name: string }).name.length;
    }
    if (round >= 10) times[c]!.push(Number(process.hrtime.bigint() - start) / BATCH / 1000);
  }
}
const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[xs.length >> 1]!;
for (const [i, src] of copies.entries())
  console.log(
    JSON.stringify({ src, read: READ, usPerPod: Number(median(times[i]!).toFixed(2)), rounds: times[i]!.length, sink: sink > 0 }),
  );
