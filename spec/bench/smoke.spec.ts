import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONTENDERS } from '../../bench/contenders/probe.ts';
import { SMOKE, runBench, type BenchReport } from '../../bench/runner.ts';

/**
 * The benchmark runs end to end at a tiny size: the workload server, every
 * contender in its own process, the relist, the report. Only sanity is
 * checked (counts and positive figures), never timings.
 */
describe('bench smoke', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // ≈ 12 s alone, 23 s beside two busy loops, over 60 s among a batch of spec files on a loaded machine: the timeout only
  // ends a hung run (each contender's process has its own, SMOKE.runTimeoutMs).
  it('runs every contender and each reports N objects synced and M events processed', { timeout: 300_000 }, async () => {
    const lines: string[] = [];
    const report = await runBench({
      ...SMOKE,
      jsonPath: join(dir, 'smoke.json'),
      mdPath: join(dir, 'smoke.md'),
      log: (line) => lines.push(line),
    });

    expect(report.scenarios).toHaveLength(1);
    const [scenario] = report.scenarios;
    const { pods, events } = scenario!.scenario;
    const finalCount = scenario!.workload.finalCount;
    expect(finalCount).toBeGreaterThan(0);
    for (const contender of CONTENDERS) {
      const runs = scenario!.runs.filter((r) => r.contender === contender);
      expect(runs, contender).toHaveLength(1);
      const run = runs[0]!;
      expect(run.problems, `${contender}: ${lines.join('\n')}`).toEqual([]);
      expect(run.ok).toBe(true);
      expect(run.syncedObjects, contender).toBe(pods);
      expect(run.eventsProcessed, contender).toBe(contender === 'cn-100' ? Math.min(events, SMOKE.fanOutEvents) : events);
      if (contender !== 'cn-100') expect(run.relistObjects, contender).toBe(finalCount);
      for (const figure of [
        'syncMs',
        'eventsPerSec',
        'cpuUsPerEvent',
        'heapPerObjectKB',
        'heapSyncedMB',
        'heapEndMB',
        'peakRssMB',
      ] as const) {
        expect(run[figure], `${contender} ${figure}`).toBeGreaterThan(0);
      }
      // One list (and one relist) per informer: the server saw what the contender claims.
      expect(run.server?.expiredSent, contender).toBe(contender === 'cn-100' ? 0 : 1);
      // Only the metadata-only contender asks for PartialObjectMetadata: list pages, relist pages and watches.
      if (contender === 'rx-meta')
        expect(run.server?.metadataRequests, contender).toBe((run.server?.listRequests ?? 0) + (run.server?.watchRequests ?? 0));
      else expect(run.server?.metadataRequests, contender).toBe(0);
      // Only rx-pb asks for protobuf, and gets it for every list page, relist page and watch (its 410 included).
      if (contender === 'rx-pb') {
        expect(run.server?.protobufRequests, contender).toBe((run.server?.listRequests ?? 0) + (run.server?.watchRequests ?? 0));
        expect(run.server?.protobufBytesWritten, contender).toBe(
          (run.server?.listBytesWritten ?? 0) + (run.server?.watchBytesWritten ?? 0),
        );
      } else expect(run.server?.protobufRequests, contender).toBe(0);
      expect(run.wireMB, contender).toBeGreaterThan(0);
    }
    const wire = (c: string) => scenario!.runs.find((r) => r.contender === c)!.wireMB!;
    // The same lists and events, metadata only: fewer bytes.
    expect(wire('rx-meta')).toBeLessThan(wire('rx'));
    // The same lists and events in protobuf: fewer bytes, and the same objects seen (names summed over every event).
    expect(wire('rx-pb')).toBeLessThan(wire('rx-lazy'));
    const checksum = (c: string) => scenario!.runs.find((r) => r.contender === c)!.checksum;
    expect(checksum('rx-lazy')).toBeGreaterThan(0);
    expect(checksum('rx-pb')).toBe(checksum('rx-lazy'));
    expect(checksum('rx')).toBe(checksum('rx-lazy'));
    // The raw limit counts the same objects: listed, watched, relisted and dropped by the relist.
    expect(checksum('raw')).toBe(checksum('rx'));

    const written = JSON.parse(readFileSync(join(dir, 'smoke.json'), 'utf8')) as BenchReport;
    expect(written.machine.cores).toBeGreaterThan(0);
    expect(written.targets.length).toBeGreaterThan(0);
    const md = readFileSync(join(dir, 'smoke.md'), 'utf8');
    expect(md).toContain('| target |');
    expect(md).toMatch(/PASS|FAIL/);
  });
});
