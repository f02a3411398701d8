import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { InformerError } from '../../src/index.ts';
import { parseRetryAfter, parseWatchLine } from '../../src/pipeline.ts';
import { toListPage } from '../../src/1-transport/http/decode.ts';
import { TracePage } from '../../src/1-transport/trace/format.ts';

describe('parseWatchLine', () => {
  it('reads an event {type, object}', () => {
    const line = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '3' } } });
    expect(parseWatchLine(line)).toEqual({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '3' } } });
    // unknown types are left for the source to judge; extra fields pass
    expect(parseWatchLine('{"type":"WHATEVER","object":{},"extra":1}')).toMatchObject({ type: 'WHATEVER', object: {} });
    // trailing CR (CRLF streams) is JSON whitespace
    expect(parseWatchLine('{"type":"BOOKMARK","object":{}}\r')).toEqual({ type: 'BOOKMARK', object: {} });
  });

  it.each([
    ['not JSON', '{"type":"ADDED",'],
    ['empty', ''],
    ['an array', '[1,2]'],
    ['a string', '"ADDED"'],
    ['null', 'null'],
    ['type missing', '{"object":{}}'],
    ['type not a string', '{"type":1,"object":{}}'],
    ['object missing', '{"type":"ADDED"}'],
    ['object null', '{"type":"ADDED","object":null}'],
    ['object an array', '{"type":"ADDED","object":[]}'],
    ['object a string', '{"type":"ADDED","object":"x"}'],
  ])('a line that is %s is a MalformedLine error (phase watch)', (_, line) => {
    const frame = parseWatchLine(line);
    expect(frame).toBeInstanceOf(InformerError);
    expect(frame).toMatchObject({ reason: 'MalformedLine', phase: 'watch' });
  });

  it("never quotes the line in its message (a Secret's line would put its data into errors$ and the logs)", () => {
    for (const line of [
      '{"type":"MODIFIED","object":{"data":{"password":"aHVudGVyMg=="} x}}',
      '{"type":"ADDED","object":{"data":{"token":tru}}}',
      'hunter2',
    ]) {
      const frame = parseWatchLine(line);
      expect(frame).toMatchObject({ reason: 'MalformedLine' });
      expect((frame as InformerError).message).not.toMatch(/aHVudGVyMg|token|hunter2|tru/);
    }
  });

  it('property: never throws; returns an event exactly when the line is {type: string, object: object}', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.record({ type: fc.oneof(fc.string(), fc.integer()), object: fc.jsonValue() }).map((v) => JSON.stringify(v)),
        ),
        (line) => {
          const frame = parseWatchLine(line);
          let value: unknown;
          try {
            value = JSON.parse(line);
          } catch {
            value = undefined;
          }
          const v = value as { type?: unknown; object?: unknown } | null;
          const isEvent =
            typeof v === 'object' &&
            v !== null &&
            !Array.isArray(v) &&
            typeof v.type === 'string' &&
            typeof v.object === 'object' &&
            v.object !== null &&
            !Array.isArray(v.object);
          expect(frame instanceof InformerError).toBe(!isEvent);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('toListPage', () => {
  it("passes on a remainingItemCount only when it is a count (a whole number from 0 to 2^53), so that record()'s page line is one the trace format takes", () => {
    const page = (n: string) =>
      toListPage(JSON.parse(`{"kind":"PodList","metadata":{"resourceVersion":"5","continue":"c","remainingItemCount":${n}},"items":[]}`));
    for (const [n, count] of [
      ['0', 0],
      ['42', 42],
      ['9007199254740991', 9007199254740991],
      ['1e400', undefined],
      ['1.5', undefined],
      ['-1', undefined],
      ['9007199254740993', undefined],
      ['"7"', undefined],
      ['null', undefined],
    ] as const) {
      const { remainingItemCount } = page(n)!;
      expect(remainingItemCount, n).toBe(count);
      const line = JSON.parse(
        JSON.stringify({ type: 'page', at: 0, id: 1, resourceVersion: '5', continue: 'c', remainingItemCount, items: [] }),
      ) as unknown;
      expect(TracePage.safeParse(line).success, n).toBe(true);
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('5', now)).toBe(5);
    expect(parseRetryAfter(' 12 ', now)).toBe(12);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('-3', now)).toBe(0);
  });

  it('reads an HTTP date, rounding up, never negative', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter(new Date(now + 1500).toUTCString(), now)).toBe(1); // toUTCString drops the ms
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
  });

  it('takes the first of several header values', () => {
    expect(parseRetryAfter(['7', '9'], now)).toBe(7);
    expect(parseRetryAfter([], now)).toBeUndefined();
  });

  it('gives undefined for a missing, empty or unreadable header', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('   ', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('Infinity', now)).toBeUndefined();
  });

  it('reads delta-seconds as whole digits only, as client-go (strconv.Atoi): not 1e3, 0x10, 1.5 or 5s', () => {
    for (const value of ['1e3', '0x10', '1.5', '5s', '+5', '0b1', '5 5']) expect(parseRetryAfter(value, now), value).toBeUndefined();
  });

  it('takes the clock and the cap as named options (the CLI sinks cap at 60 s); the default cap is 300 s', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', { now })).toBe(30);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:02:00 GMT', { now, maxSeconds: 60 })).toBe(60);
    expect(parseRetryAfter('90', { maxSeconds: 60 })).toBe(60);
    expect(parseRetryAfter('90')).toBe(90);
    expect(parseRetryAfter('9000')).toBe(300);
  });

  it('reads nothing from a hostile value: overlong, NaN, Infinity, a null header', () => {
    expect(parseRetryAfter(`${'9'.repeat(64)}`, now)).toBe(300);
    expect(parseRetryAfter(`${'9'.repeat(65)}`, now)).toBeUndefined();
    expect(parseRetryAfter(`Wed, 01 Jan 2025 00:00:30 GMT${' '.repeat(100)}`, now)).toBeUndefined();
    expect(parseRetryAfter('NaN', now)).toBeUndefined();
    expect(parseRetryAfter('-Infinity', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('defaults now to the clock', () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const seconds = parseRetryAfter(inTenSeconds);
    expect(seconds).toBeGreaterThanOrEqual(8);
    expect(seconds).toBeLessThanOrEqual(10);
  });
});
