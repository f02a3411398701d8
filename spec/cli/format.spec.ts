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
