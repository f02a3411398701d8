/**
 * Issue #36: what a Time's text costs the protobuf decode, in process: `timestamp` (values.ts) over N Timestamp messages
 * of distinct seconds, one a second from the bench workload's first creation time (a sync's creation times: one per
 * object, so every one misses the text cache's slot), or `repeat` of them over and over (a watch's times recurring).
 * Main-thread ns a Time, medians of the rounds; several copies of src/ take turns in batches of 10,000 (their order
 * reversed every other round), so that a machine whose load changes from second to second loads them alike.
 *
 *   node bench/micro/pbTime.ts [times=200000] [rounds=9] [src=src,/tmp/base/src] [repeat=0]
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [timesArg = '200000', roundsArg = '9', srcArg = 'src', repeatArg = '0'] = process.argv.slice(2);
const copies = srcArg.split(',');
const TIMES = Number(timesArg);
const REPEAT = Number(repeatArg);
const BATCH = 10_000;

type Values = typeof import('../../src/1-transport/protobuf/values.ts');
type Wire = typeof import('../../src/1-transport/protobuf/wire.ts');
const modules = await Promise.all(
  copies.map(async (dir) => {
    const src = dir === 'src' ? new URL('../../src/', import.meta.url) : pathToFileURL(`${isAbsolute(dir) ? dir : resolve(dir)}/`);
    const values = (await import(new URL('1-transport/protobuf/values.ts', src).href)) as Values;
    const wire = (await import(new URL('1-transport/protobuf/wire.ts', src).href)) as Wire;
    return { values, wire };
  }),
);

/** Timestamp{seconds (1), nanos (2)} as protobuf, all of them in one buffer; `ends[i]` where the i-th ends. */
const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
};
const first = Date.parse('2025-01-06T09:00:00Z') / 1000;
const bytes: number[] = [];
const ends: number[] = [];
for (let i = 0; i < TIMES; i++) {
  bytes.push(0x08, ...varint(first + (REPEAT > 0 ? i % REPEAT : i)), 0x10, ...varint((i * 7919) % 1_000_000_000));
  ends.push(bytes.length);
}
const buffer = Buffer.from(bytes);

const thread = () => {
  const t = (process as unknown as { threadCpuUsage(): { user: number; system: number } }).threadCpuUsage();
  return t.user + t.system;
};
const rows = copies.map(() => [] as number[]);
let sink = 0;
for (let round = 0; round <= Number(roundsArg); round++) {
  const spent = copies.map(() => 0);
  const order = copies.map((_, i) => i);
  if (round % 2 === 1) order.reverse();
  for (let from = 0; from < TIMES; from += BATCH) {
    const to = Math.min(TIMES, from + BATCH);
    for (const c of order) {
      const { values, wire } = modules[c]!;
      wire.begin(buffer, from === 0 ? 0 : ends[from - 1]!);
      const t0 = thread();
      for (let i = from; i < to; i++) sink += values.timestamp(ends[i]!, false)!.length;
      spent[c]! += thread() - t0;
    }
  }
  if (round > 0) for (const c of order) rows[c]!.push((spent[c]! * 1000) / TIMES);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const [c, dir] of copies.entries())
  console.log(
    JSON.stringify({ src: dir, times: TIMES, repeat: REPEAT, nsPerTime: Math.round(median(rows[c]!)), byRound: rows[c]!.map(Math.round) }),
  );
if (sink === 0) console.log('');
