/**
 * A long trace replays in bounded memory: a 20 MB trace (200 pods of ≈ 4.8 KB in 4 pages, then a watch of ≈ 4 000
 * MODIFIED events), opened with `openTrace` and replayed into an informer under a TestScheduler, never holds more
 * than 10 MB above what was referenced before (sampled after full collections every 1 000 events); the same trace
 * read whole (`readTrace`) holds more than that bound, several times over. The 100 MB figures:
 * bench/micro/replayHeap.ts and docs/testing.md.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTrace, readTrace } from '../../src/pipeline.ts';
import { replayHeap, shapeOf, writeBigTrace } from '../../bench/workload/bigTrace.ts';

const MiB = 1024 * 1024;
const BOUND = 10 * MiB;

const dir = mkdtempSync(join(tmpdir(), 'rx-informer-replay-heap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a long trace replays in bounded memory', () => {
  it('20 MB streamed from the file: under 10 MB held at any point; read whole: over it', () => {
    const path = join(dir, 'big.jsonl');
    const shape = shapeOf(20 * MiB);
    const bytes = writeBigTrace(path, shape);
    expect(bytes).toBeGreaterThan(19 * MiB);

    const streamed = replayHeap(() => openTrace(path));
    expect(streamed.mismatches).toEqual([]);
    expect(streamed.events).toBe(shape.pods + shape.events);
    expect(streamed.storeSize).toBe(shape.pods);
    expect(streamed.peakBytes / MiB, 'MiB held at the peak, streamed').toBeLessThan(BOUND / MiB);

    // The whole-read path fails the same bound: every page and event is held from the start (sampled after the read
    // and at the end only: the collections of a heap that large are what this test spends its time on).
    const whole = replayHeap(() => readTrace(readFileSync(path, 'utf8')), Infinity);
    expect(whole.mismatches).toEqual([]);
    expect(whole.events).toBe(streamed.events);
    expect(whole.peakBytes / MiB, 'MiB held at the peak, read whole').toBeGreaterThan((2 * BOUND) / MiB);
  }, 60_000);
});
