import { afterEach, describe, expect, it } from 'vitest';
import { clock, count, jsonLine, printable, timestamp } from '../../src/cli/format.ts';

describe('format', () => {
  const tz = process.env['TZ'];
  afterEach(() => {
    if (tz === undefined) delete process.env['TZ'];
    else process.env['TZ'] = tz;
  });

  it('strips control characters, C1 included, and bidi overrides', () => {
    expect(printable('a\x1b]0;title\x07b\x1b[2J\u009b31mc\u202ed\ne\tf')).toBe('a]0;titleb[2J31mcdef');
  });

  it('strips every bidi control (Unicode Bidi_Control) and the line and paragraph separators (Zl, Zp), in pretty and JSON output alike', () => {
    // Listed by hand from the Unicode Character Database (PropList.txt Bidi_Control; Zl, Zp), not from the regex under test.
    const bidiControl = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
    const separators = [0x2028, 0x2029];
    for (const code of [...bidiControl, ...separators]) {
      const c = String.fromCodePoint(code);
      expect(printable(`a${c}b`), `U+${code.toString(16)}`).toBe('ab');
      expect(jsonLine({ s: c })).toBe(`{"s":"\\u${code.toString(16).padStart(4, '0')}"}`);
    }
    // Every C0 and C1 control and DEL; and ordinary text (accents, Arabic and Hebrew letters, emoji, zero-width joiner) is left alone.
    for (let code = 0; code <= 0x9f; code++)
      if (code < 0x20 || code >= 0x7f) expect(printable(`x${String.fromCharCode(code)}y`)).toBe('xy');
    const text = 'café مرحبا שלום 👩‍💻 naïve';
    expect(printable(text)).toBe(text);
  });

  it('escapes in JSON what JSON.stringify leaves raw, and the line still parses to the same value', () => {
    const value = { name: 'x\u009b31m\u202e\u2028\x7f', n: 1 };
    const line = jsonLine(value);
    expect(line).toBe('{"name":"x\\u009b31m\\u202e\\u2028\\u007f","n":1}');
    expect(JSON.parse(line)).toEqual(value);
  });

  it('says 1 object, 2 objects, 0 objects', () => {
    expect([0, 1, 2].map((n) => count(n, 'object'))).toEqual(['0 objects', '1 object', '2 objects']);
  });

  it('shows local time (TZ honoured) unless UTC is asked for', () => {
    process.env['TZ'] = 'Asia/Kolkata';
    const at = new Date('2024-05-01T23:59:58.007Z');
    expect(clock(at, false)).toBe('05:29:58');
    expect(clock(at, true)).toBe('23:59:58');
    expect(timestamp(at, false)).toBe('2024-05-02T05:29:58.007+05:30');
    expect(timestamp(at, true)).toBe('2024-05-01T23:59:58.007Z');
    process.env['TZ'] = 'America/St_Johns';
    expect(timestamp(at, false)).toBe('2024-05-01T21:29:58.007-02:30');
  });
});
