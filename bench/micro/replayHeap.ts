/**
 * What replaying a long trace holds: writes a trace of about SIZE MB (default 100: 200 pods of ≈ 4.8 KB listed in
 * pages of 50, then MODIFIED events over them) to a temp dir, replays it into a pod informer under a TestScheduler
 * opened with `openTrace` (streamed), then read whole with `readTrace`, and prints the most memory referenced at any
 * sample (heap and ArrayBuffers after full collections, every 1 000 events) above what was before the read.
 *
 *   node bench/micro/replayHeap.ts [SIZE_MB] [streamed|whole|both]
 *
 * spec/testing/replayHeap.spec.ts checks the same at 20 MB (streamed under 10 MB, whole over 20).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTrace, readTrace } from '../../src/pipeline.ts';
import { replayHeap, shapeOf, writeBigTrace } from '../workload/bigTrace.ts';

const MiB = 1024 * 1024;
const size = Number(process.argv[2] ?? 100);
const which = process.argv[3] ?? 'both';
const dir = mkdtempSync(join(tmpdir(), 'rx-informer-replay-heap-'));
try {
  const path = join(dir, 'trace.jsonl');
  const shape = shapeOf(size * MiB);
  let t = performance.now();
  const bytes = writeBigTrace(path, shape);
  console.log(
    `trace: ${(bytes / MiB).toFixed(1)} MiB, ${shape.pods} pods, ${shape.events} events, written in ${(performance.now() - t).toFixed(0)} ms`,
  );
  const runs: [string, () => ReturnType<typeof replayHeap>][] = [
    ['streamed (openTrace)', () => replayHeap(() => openTrace(path))],
    ['whole (readTrace)', () => replayHeap(() => readTrace(readFileSync(path, 'utf8')))],
  ];
  for (const [name, run] of runs) {
    if (which !== 'both' && !name.startsWith(which)) continue;
    t = performance.now();
    const r = run();
    const ms = performance.now() - t;
    console.log(
      `${name.padEnd(22)} peak ${(r.peakBytes / MiB).toFixed(1).padStart(7)} MiB above baseline, ${r.events} events, store ${r.storeSize}, ` +
        `${r.mismatches.length} mismatches, ${ms.toFixed(0)} ms (with the samples' collections)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
