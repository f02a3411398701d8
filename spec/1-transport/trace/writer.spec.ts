/**
 * An event line written as it came (`eventLine`) has the head `line` would write for the same event: its numbers
 * (`at`, `id`) spelled as `JSON.stringify` spells them, at any time a clock may give (fractions, large values, a
 * clock that is not a number's). The golden trace (traceBytes.spec.ts) covers whole virtual milliseconds only.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonNumber, traceWriter } from '../../../src/1-transport/trace/writer.ts';
import { MAX_TRACE_REQUESTS, readTrace, traceLineText } from '../../../src/1-transport/trace/format.ts';

describe('traceWriter: the numbers of an event line', () => {
  it('jsonNumber spells any number as JSON.stringify does', () => {
    for (const value of [0, -0, 1.5, -2e-7, 1e21, 123456789012345, Number.MAX_VALUE, NaN, Infinity, -Infinity])
      expect(jsonNumber(value)).toBe(JSON.stringify(value));
    fc.assert(fc.property(fc.double(), (value) => jsonNumber(value) === JSON.stringify(value)));
  });

  it('an event line written as it came is the line `line` writes, at any time', () => {
    fc.assert(
      fc.property(fc.double(), fc.nat(5), (offset, requests) => {
        let now = 0;
        const lines: string[] = [];
        const writer = traceWriter({
          write: (text) => lines.push(text),
          writeParts: (parts) => lines.push(parts.join('')),
          resources: ['pods'],
          scheduler: { now: () => now, schedule: () => ({ unsubscribe() {} }) } as never,
        });
        for (let i = 0; i < requests; i++) writer.nextId();
        const id = writer.nextId();
        now = offset;
        const event = { type: 'ADDED', object: { metadata: { name: 'a' } } };
        writer.eventLine(id, JSON.stringify(event));
        expect(lines[1]).toBe(traceLineText({ type: 'event', at: offset, id, event } as never));
      }),
    );
  });
});

describe('traceWriter: the request cap', () => {
  it('stops (maxBytes) rather than write more requests than a reader reads (MAX_TRACE_REQUESTS): the file reads', () => {
    const lines: string[] = [];
    const writer = traceWriter({ write: (text) => lines.push(text), resources: ['pods'] });
    let written = 0;
    for (let i = 0; i <= MAX_TRACE_REQUESTS; i++) {
      if (!writer.line({ type: 'watch', id: writer.nextId(), options: {} })) break;
      written++;
    }
    expect(written).toBe(MAX_TRACE_REQUESTS);
    expect(writer.stopped).toBe('maxBytes');
    expect(writer.refusedRequests).toBe(MAX_TRACE_REQUESTS);
    // The lines of the requests written still go in: an event of the last one.
    expect(writer.eventLine(MAX_TRACE_REQUESTS - 1, '{"type":"ADDED","object":{"metadata":{"name":"a"}}}')).toBe(false);
    const trace = readTrace(lines.join(''));
    expect(trace.lines.filter((l) => l.type === 'watch')).toHaveLength(MAX_TRACE_REQUESTS);
    expect(trace.lines.at(-1)).toMatchObject({ type: 'stop', why: 'maxBytes' });
  }, 60_000);

  it('maxRequests: a lower cap; events of the requests written go on until it is reached', () => {
    const lines: string[] = [];
    const writer = traceWriter({ write: (text) => lines.push(text), resources: ['pods'], maxRequests: 2 });
    const a = writer.nextId();
    expect(writer.line({ type: 'watch', id: a, options: {} })).toBe(true);
    expect(writer.line({ type: 'watch', id: writer.nextId(), options: {} })).toBe(true);
    expect(writer.eventLine(a, '{"type":"ADDED","object":{"metadata":{"name":"a"}}}')).toBe(true);
    expect(writer.refusedRequests).toBeUndefined();
    expect(writer.line({ type: 'watch', id: writer.nextId(), options: {} })).toBe(false);
    expect(writer.stopped).toBe('maxBytes');
    expect(writer.refusedRequests).toBe(2);
    expect(readTrace(lines.join('')).lines.at(-1)).toMatchObject({ type: 'stop', why: 'maxBytes' });
  });
});
