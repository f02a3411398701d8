/**
 * Issue #36: what the transport's protobuf list path costs per dropped object, in process (no HTTP, no collector
 * pressure from socket chunks): P pods as protobuf list pages of S (bench/protobuf/listPages.ts, the workload's
 * bytes), each page fed in 64 KiB chunks made once before timing, decoded by listBodyDecoder with a KeepObject that
 * drops every object (or keeps every one: `kept`). Main-thread CPU per object, median of the rounds.
 *
 *   node bench/micro/pbDrop.ts [drop|kept] [pods=30000] [pageSize=500] [rounds=7] [src=../../src]
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makePod } from '../workload/pods.ts';
import { pageFrame, podEntry } from '../protobuf/listPages.ts';

const [mode = 'drop', podsArg = '30000', sizeArg = '500', roundsArg = '7', srcArg] = process.argv.slice(2);
const PODS = Number(podsArg);
const SIZE = Number(sizeArg);
const ROUNDS = Number(roundsArg);
const src =
  srcArg === undefined ? new URL('../../src/', import.meta.url) : pathToFileURL(`${isAbsolute(srcArg) ? srcArg : resolve(srcArg)}/`);
const { listBodyDecoder } = (await import(
  new URL('1-transport/http/listBody.ts', src).href
)) as typeof import('../../src/1-transport/http/listBody.ts');

const entries = Array.from({ length: PODS }, (_, i) =>
  podEntry(makePod({ index: i, resourceVersion: i + 1, revision: 0 }) as unknown as Record<string, unknown>),
);
const pages: Buffer[][] = [];
for (let at = 0; at < PODS; at += SIZE) {
  const items = entries.slice(at, at + SIZE);
  const bytes = items.reduce((n, e) => n + e.length, 0);
  const { head, tail } = pageFrame({ resourceVersion: '5', continue: at + SIZE < PODS ? `c${at}` : undefined }, bytes);
  const body = Buffer.concat([head, ...items, tail]);
  const chunks: Buffer[] = [];
  for (let c = 0; c < body.length; c += 65536) chunks.push(Buffer.from(body.subarray(c, c + 65536)));
  pages.push(chunks);
}
const keep = mode === 'drop' ? () => false : () => true;
const threadCpu = () => {
  const t = (process as unknown as { threadCpuUsage(): { user: number; system: number } }).threadCpuUsage();
  return t.user + t.system;
};
const perRound: number[] = [];
let items = 0;
for (let round = 0; round < ROUNDS; round++) {
  const before = threadCpu();
  for (const chunks of pages) {
    const decoder = listBodyDecoder(true, keep, true);
    for (const chunk of chunks) decoder.chunk(chunk);
    decoder.end();
    items += (decoder.value() as { items: unknown[] }).items.length;
  }
  perRound.push((threadCpu() - before) / PODS);
}
const sorted = [...perRound].sort((a, b) => a - b);
console.log(
  JSON.stringify({
    mode,
    src: src.pathname,
    pods: PODS,
    median: Number(sorted[sorted.length >> 1]!.toFixed(3)),
    rounds: perRound.map((r) => Number(r.toFixed(3))),
    items,
  }),
);
