/**
 * A list page is one trace line, and the transport takes a page up to `maxListBytes` (256 MiB) while a reader refuses a
 * line over MAX_TRACE_LINE_BYTES (64 MiB): a page between the two made a trace nothing could read (audit23). The writer
 * now stops (`maxBytes`) instead of writing it, and says so: the file reads, up to the page's list request.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TRACE_LINE_BYTES, readTrace } from '../../../src/1-transport/trace/format.ts';
import { traceWriter } from '../../../src/1-transport/trace/writer.ts';

/** A clock that stands at 0: every line's `at` is 0, so a line's size is known to the byte. */
const still = { now: () => 0, schedule: () => ({ unsubscribe() {} }) } as never;

describe('a page longer than a reader reads', () => {
  it('is not written: the writer stops (maxBytes), names its size, and the file reads', () => {
    const lines: string[] = [];
    const writer = traceWriter({
      write: (line) => void lines.push(line),
      writeParts: (p) => void lines.push(p.join('')),
      resources: ['configmaps'],
      scheduler: still,
    });
    const id = writer.nextId();
    expect(writer.line({ type: 'list', id, options: { resourceVersion: '0' } })).toBe(true);
    const value = 'x'.repeat(1024 * 1024);
    const items = Array.from({ length: 65 }, (_, i) => ({ metadata: { name: `big-${i}` }, data: { v: value } }));
    expect(writer.line({ type: 'page', id, resourceVersion: '10', items })).toBe(false);
    expect(writer.stopped).toBe('maxBytes');
    expect(writer.refusedLineBytes).toBeGreaterThan(MAX_TRACE_LINE_BYTES);
    const trace = readTrace(lines.join(''));
    expect(trace.lines.map((l) => l.type)).toEqual(['list', 'stop']);
  });

  it('a page just within the limit is written, and reads', () => {
    const lines: string[] = [];
    const writer = traceWriter({
      write: (line) => void lines.push(line),
      writeParts: (p) => void lines.push(p.join('')),
      resources: ['configmaps'],
      scheduler: still,
    });
    const id = writer.nextId();
    writer.line({ type: 'list', id, options: {} });
    const head = '{"type":"page","at":0,"id":0,"resourceVersion":"1","items":["'.length + '"]}'.length;
    expect(writer.line({ type: 'page', id, resourceVersion: '1', items: ['x'.repeat(MAX_TRACE_LINE_BYTES - head)] })).toBe(true);
    expect(writer.refusedLineBytes).toBeUndefined();
    writer.close();
    expect(readTrace(lines.join('')).lines.map((l) => l.type)).toEqual(['list', 'page', 'stop']);
  });
});
