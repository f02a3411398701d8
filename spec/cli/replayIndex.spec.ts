/**
 * `rx-informer replay` of a trace of many resources reads it a fixed number of times, not once per resource: finding each
 * resource's requests and each custom resource's kind scanned the whole trace per resource, resources × lines (audit24:
 * 2,000 resources and 20,000 events, 23 s). Counted in reads of the trace's index, not timed.
 */
import { describe, expect, it } from 'vitest';
import { readTrace, traceSource, type TraceSource } from '../../src/pipeline.ts';
import { parseReplayLine, type ReplayCommandOptions } from '../../src/cli/replayArgs.ts';
import { replayCommand } from '../../src/cli/replayCommand.ts';

const RESOURCES = 40;
const EVENTS = 500;

function manyResources(): string {
  const names = ['pods', ...Array.from({ length: RESOURCES }, (_, i) => `x${i}.example.com`)];
  const records: unknown[] = [
    { type: 'header', format: 'rx-informer-trace', version: 1, startedAt: '2026-01-01T00:00:00Z', resources: names, redacted: true },
    { type: 'list', at: 0, id: 0, resource: 'pods', options: { limit: 500, resourceVersion: '0' } },
    { type: 'page', at: 1, id: 0, resourceVersion: '1', items: [] },
    { type: 'end', at: 1, id: 0, how: 'complete' },
    { type: 'watch', at: 2, id: 1, resource: 'pods', options: { allowWatchBookmarks: true, resourceVersion: '1', timeoutSeconds: 300 } },
  ];
  for (let i = 0; i < EVENTS; i++)
    records.push({
      type: 'event',
      at: 3,
      id: 1,
      event: { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: `${i + 2}` } } },
    });
  return records.map((r) => `${JSON.stringify(r)}\n`).join('');
}

/** `source` counting the calls to its index (what a scan of the trace reads a line at a time). */
function counted(source: TraceSource): { source: TraceSource; calls: () => number } {
  let calls = 0;
  const wrapped: TraceSource = {
    header: source.header,
    length: source.length,
    typeOf: (i) => (calls++, source.typeOf(i)),
    atOf: (i) => source.atOf(i),
    idOf: (i) => source.idOf(i),
    requestAt: (i) => (calls++, source.requestAt(i)),
    read: (i) => source.read(i),
    release: () => source.release(),
  };
  return { source: wrapped, calls: () => calls };
}

describe('rx-informer replay of a trace of many resources', () => {
  it('scans the trace a fixed number of times, however many resources its header lists', async () => {
    const { source, calls } = counted(traceSource(readTrace(manyResources())));
    const options = parseReplayLine(['replay', 'trace.jsonl', '--utc']);
    if (typeof options === 'string') throw new Error(options);
    await replayCommand(source, options as ReplayCommandOptions, () => undefined);
    // Two passes (the requests by resource, the custom resources' kinds) of two calls a line, and the replay's own few.
    expect(calls()).toBeLessThan(6 * source.length);
  });
});
