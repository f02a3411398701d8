import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrace, traceText, type Trace, type TraceHeader, type TraceLine } from '../../../src/1-transport/trace/format.ts';
import { openTrace, traceSource, type TraceSource } from '../../../src/1-transport/trace/reader.ts';
import { trimTrace, trimWindowProblem, writeTrimmedTrace } from '../../../src/1-transport/trace/trim.ts';

const cm = (name: string, rv: string) => ({ metadata: { name, namespace: 'shop', uid: `u-${name}`, resourceVersion: rv } });
const lines = [
  {
    type: 'header',
    format: 'rx-informer-trace',
    version: 1,
    startedAt: '2026-01-01T10:00:00.000Z',
    resources: ['configmaps'],
    redacted: true,
  },
  { type: 'list', at: 0, id: 0, options: { limit: 1, resourceVersion: '0' } },
  { type: 'page', at: 5, id: 0, resourceVersion: '5', continue: 't1', items: [cm('a', '2')] },
  { type: 'end', at: 5, id: 0, how: 'complete' },
  { type: 'list', at: 6, id: 1, options: { continue: 't1', limit: 1 } },
  { type: 'page', at: 9, id: 1, resourceVersion: '5', items: [cm('b', '4')] },
  { type: 'end', at: 9, id: 1, how: 'complete' },
  { type: 'watch', at: 10, id: 2, options: { allowWatchBookmarks: true, resourceVersion: '5' } },
  { type: 'event', at: 100, id: 2, event: { type: 'DELETED', object: cm('a', '6') } },
  { type: 'event', at: 200, id: 2, event: { type: 'ADDED', object: cm('c', '7') } },
  { type: 'failure', at: 300, id: 2, error: { reason: 'ServerError', message: 'HTTP 500', status: 500 } },
  { type: 'watch', at: 1300, id: 3, options: { allowWatchBookmarks: true, resourceVersion: '7' } },
  { type: 'event', at: 1400, id: 3, event: { type: 'MODIFIED', object: cm('b', '8') } },
  { type: 'event', at: 2400, id: 3, event: { type: 'MODIFIED', object: cm('b', '9') } },
  { type: 'end', at: 3000, id: 3, how: 'unsubscribe' },
];
const TRACE: Trace = readTrace(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));

describe('trimTrace', () => {
  it('starts at the first watch from --from on, with a page of what the informer knew then, times moved', () => {
    const window = readTrace(traceText(trimTrace(TRACE, { fromMs: 1000, toMs: 2000 })));
    expect(window.header.startedAt).toBe('2026-01-01T10:00:01.300Z');
    expect(window.lines.slice(0, 3)).toEqual([
      { type: 'list', at: 0, id: 4, options: { limit: 1, resourceVersion: '0' } },
      { type: 'page', at: 0, id: 4, resourceVersion: '7', items: [cm('b', '4'), cm('c', '7')] },
      { type: 'end', at: 0, id: 4, how: 'complete' },
    ]);
    // The watch at 1300 ms is at 0; what came after --to is cut, and the open watch ends aborted there.
    expect(window.lines.slice(3).map((l) => [l.type, l.at])).toEqual([
      ['watch', 0],
      ['event', 100],
      ['end', 700],
      ['stop', 700],
    ]);
  });

  it('says why it cannot cut', () => {
    // It names the watches the trace has, so the next try can pick one.
    expect(() => trimTrace(TRACE, { fromMs: 2000 })).toThrow(
      'trim: no watch of configmaps starts at or after 2000 ms (its watches start at 10 ms, 1300 ms): nothing to cut from',
    );
  });

  it('refuses a window that ends before its cut or before it starts, writing nothing (never a stop line before 0)', () => {
    const written: unknown[] = [];
    const write = (line: unknown) => void written.push(line);
    // The cut from 1000 ms is the watch at 1300 ms.
    expect(() => writeTrimmedTrace(traceSource(TRACE), { fromMs: 1000, toMs: 1299 }, write)).toThrow(
      'trim: the window ends (--to 1299 ms) before its cut, the first watch at or after --from (1000 ms), which starts at 1300 ms: nothing to keep',
    );
    expect(() => writeTrimmedTrace(traceSource(TRACE), { fromMs: 1000, toMs: 999 }, write)).toThrow(
      'trim: the window ends (--to 999 ms) before it starts (--from 1000 ms)',
    );
    expect(() => trimTrace(TRACE, { toMs: 5 })).toThrow(
      /before its cut, the first watch at or after --from \(0 ms\), which starts at 10 ms/,
    );
    expect(written).toEqual([]);
    expect(trimWindowProblem(traceSource(TRACE), { fromMs: 1000, toMs: 1300 })).toBeUndefined();
    // A window that ends at its cut holds the cut's instant, and reads.
    const window = readTrace(traceText(trimTrace(TRACE, { fromMs: 1000, toMs: 1300 })));
    expect(window.lines.slice(3).map((l) => [l.type, l.at])).toEqual([
      ['watch', 0],
      ['end', 0],
      ['stop', 0],
    ]);
  });

  it('from a file, a line at a time: the same window, each line written before the next is read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-trim-'));
    try {
      const path = join(dir, 'trace.jsonl');
      writeFileSync(path, traceText(TRACE));
      const file = openTrace(path);
      const reads: number[] = [];
      const counting: TraceSource = { ...file, read: (i) => (reads.push(i), file.read(i)) };
      const written: (TraceHeader | TraceLine)[] = [];
      const readBefore: number[] = [];
      writeTrimmedTrace(counting, { fromMs: 1000, toMs: 2000 }, (line) => (written.push(line), readBefore.push(reads.length)));
      expect({ header: written[0], lines: written.slice(1) }).toEqual(trimTrace(TRACE, { fromMs: 1000, toMs: 2000 }));
      // The pages and events before the cut (1, 4, 7, 8) read to know the objects; then each kept line (10, 11) as it is written.
      expect(reads).toEqual([1, 4, 7, 8, 10, 11]);
      expect(readBefore).toEqual([4, 4, 4, 4, 5, 6, 6, 6]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
