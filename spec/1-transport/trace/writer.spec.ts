/**
 * An event line written as it came (`eventLine`) has the head `line` would write for the same event: its numbers
 * (`at`, `id`) spelled as `JSON.stringify` spells them, at any time a clock may give (fractions, large values, a
 * clock that is not a number's). The golden trace (traceBytes.spec.ts) covers whole virtual milliseconds only.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonNumber, traceWriter } from '../../../src/1-transport/trace/writer.ts';
import { traceLineText } from '../../../src/1-transport/trace/format.ts';

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
