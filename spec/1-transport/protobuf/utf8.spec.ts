import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { parseWatchFrame } from '../../../src/1-transport/http/decode.ts';
import { begin, release, stringValue, uniqueStringValue } from '../../../src/1-transport/protobuf/wire.ts';
import { encodeWatchFrame } from '../../../packages/emulator/src/protobuf/encode.ts';

/**
 * Strings over protobuf read as a real kube-apiserver's JSON has them. Go's encoding/json (encode.go, appendString)
 * writes `\ufffd` for each rune utf8.DecodeRuneInString returns as (RuneError, 1): every byte that does not begin
 * a valid sequence is one U+FFFD. Node's decoder (WHATWG) writes one per maximal subpart, so a truncated sequence
 * read by it alone would differ from the same object read over JSON.
 */

/** Go's utf8.DecodeRune, written from its definition: a well-formed sequence is its rune, anything else (RuneError, 1). */
function decodeRune(bytes: Uint8Array, i: number): [rune: number, size: number] {
  const error: [number, number] = [0xfffd, 1];
  const b0 = bytes[i]!;
  if (b0 < 0x80) return [b0, 1];
  const size = b0 >= 0xc0 && b0 < 0xe0 ? 2 : b0 >= 0xe0 && b0 < 0xf0 ? 3 : b0 >= 0xf0 && b0 < 0xf8 ? 4 : 0;
  if (size === 0 || i + size > bytes.length) return error;
  let rune = b0 & (0x7f >> size);
  for (let k = 1; k < size; k++) {
    const b = bytes[i + k]!;
    if ((b & 0xc0) !== 0x80) return error;
    rune = (rune << 6) | (b & 0x3f);
  }
  const min = [0, 0, 0x80, 0x800, 0x10000][size]!;
  if (rune < min || rune > 0x10ffff || (rune >= 0xd800 && rune <= 0xdfff)) return error;
  return [rune, size];
}

/** The string Go's encoding/json writes for these bytes, as JSON.parse reads it back. */
function goString(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const [rune, size] = decodeRune(bytes, i);
    out += String.fromCodePoint(rune);
    i += size;
  }
  return out;
}

/** A length-delimited field's value (a 2-byte varint length at most) read by the decoder's two string readers. */
function readBoth(bytes: Uint8Array): [cached: string, unique: string] {
  const field = Buffer.concat([Buffer.from([0x0a]), lengthPrefix(bytes.length), bytes]);
  begin(field, 1);
  const cached = stringValue(field.length);
  begin(field, 1);
  const unique = release(uniqueStringValue(field.length));
  return [cached, unique];
}

function lengthPrefix(n: number): Buffer {
  return n < 0x80 ? Buffer.from([n]) : Buffer.from([(n & 0x7f) | 0x80, n >> 7]);
}

const F = '\uFFFD';
const CASES: readonly (readonly [string, readonly number[], string])[] = [
  ['ASCII', [0x61, 0x62], 'ab'],
  ['a valid 2-, 3- and 4-byte character', [0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], 'é€😀'],
  ['U+FFFD itself', [0xef, 0xbf, 0xbd], F],
  ['a lone continuation byte', [0x61, 0x80, 0x62], `a${F}b`],
  ['a truncated 3-byte sequence before ASCII', [0xe2, 0x82, 0x61], `${F}${F}a`],
  ['a truncated 3-byte sequence at the end', [0x61, 0xe2, 0x82], `a${F}${F}`],
  ['a truncated 4-byte sequence at the end', [0xf0, 0x9f, 0x98], `${F}${F}${F}`],
  ['a truncated 2-byte sequence at the end', [0x61, 0xc3], `a${F}`],
  ['a surrogate (ED A0 80)', [0xed, 0xa0, 0x80], `${F}${F}${F}`],
  ['the last character before the surrogates (ED 9F BF)', [0xed, 0x9f, 0xbf], '\uD7FF'],
  ['an overlong NUL (C0 80)', [0xc0, 0x80], `${F}${F}`],
  ['an overlong 3-byte NUL (E0 80 80)', [0xe0, 0x80, 0x80], `${F}${F}${F}`],
  ['an overlong 4-byte form (F0 80 80 80)', [0xf0, 0x80, 0x80, 0x80], `${F}${F}${F}${F}`],
  ['a 5-byte lead (F8 88 80 80 80)', [0xf8, 0x88, 0x80, 0x80, 0x80], F.repeat(5)],
  ['a 6-byte lead (FC 84 80 80 80 80)', [0xfc, 0x84, 0x80, 0x80, 0x80, 0x80], F.repeat(6)],
  ['past U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80], F.repeat(4)],
  ['U+10FFFF (F4 8F BF BF)', [0xf4, 0x8f, 0xbf, 0xbf], '\u{10FFFF}'],
  ['FE and FF', [0xfe, 0xff], `${F}${F}`],
];

describe('protobuf strings: invalid UTF-8 read as Go writes it in JSON (one U+FFFD per bad byte)', () => {
  it.each(CASES)('%s', (_, bytes, expected) => {
    const b = Uint8Array.from(bytes);
    expect(goString(b)).toBe(expected); // the reference agrees with the table
    expect(readBoth(b)).toEqual([expected, expected]);
    // long strings (past the short-string cache's 32 bytes) too
    const padded = Uint8Array.from([...Buffer.from('x'.repeat(40)), ...bytes]);
    expect(readBoth(padded)).toEqual(['x'.repeat(40) + expected, 'x'.repeat(40) + expected]);
  });

  // Bytes drawn mostly from around the boundaries where UTF-8 decoders differ.
  const interesting = fc.oneof(
    fc.integer({ min: 0, max: 0xff }),
    fc.constantFrom(0x61, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef),
    fc.constantFrom(0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf8, 0xfc, 0xfe, 0xff),
  );
  const byteStrings = fc.array(interesting, { maxLength: 80 }).map((a) => Uint8Array.from(a));

  it('property: for any bytes, both string readers give what Go writes (and what Node gives for valid UTF-8)', () => {
    fc.assert(
      fc.property(byteStrings, (bytes) => {
        const expected = goString(bytes);
        expect(readBoth(bytes)).toEqual([expected, expected]);
        if (isUtf8(bytes)) expect(expected).toBe(Buffer.from(bytes).toString('utf8'));
      }),
      { numRuns: 2000 },
    );
  });

  it('the short-string cache never returns another string of the same slot: same length and ends, other middle bytes', () => {
    // The cache's slot hashes the length and the first and last four bytes only: these share a slot, and must not
    // share a string; nor may a non-ASCII string read as a cached ASCII one of its slot.
    const strings = ['team-0051-prod', 'team-0052-prod', 'team-0\u00e9-prod', 'team-0051-prod', 'team-0\u00e8-prod'];
    for (const text of strings) expect(readBoth(Buffer.from(text, 'utf8'))).toEqual([text, text]);
    const invalid = Buffer.from('team-0051-prod');
    invalid[6] = 0xff;
    expect(readBoth(invalid)[0]).toBe('team-0\uFFFD51-prod');
    expect(readBoth(Buffer.from('team-0051-prod'))[0]).toBe('team-0051-prod');
  });

  it('property: valid UTF-8 reads as Node decodes it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 0xd7ff }), fc.integer({ min: 0xe000, max: 0x10ffff })), { maxLength: 60 }),
        (runes) => {
          const bytes = Buffer.from(String.fromCodePoint(...runes), 'utf8');
          expect(readBoth(bytes)).toEqual([bytes.toString('utf8'), bytes.toString('utf8')]);
        },
      ),
    );
  });

  it('a watch event: the name, a label and a data value with invalid bytes read as the same object over JSON', () => {
    // The emulator encodes JS strings; the placeholders (one byte per character) are overwritten with the raw bytes.
    const bad = [0xe2, 0x82, 0x61, 0xed, 0xa0, 0x80, 0xc3];
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'NNNNNNN', namespace: 'ns', resourceVersion: '7', labels: { l: 'LLLLLLL' } },
      data: { d: `${'D'.repeat(40)}DDDDDDD` },
    };
    const frame = encodeWatchFrame('ADDED', object).subarray(4);
    for (const marker of ['NNNNNNN', 'LLLLLLL', 'DDDDDDD']) {
      const at = frame.indexOf(Buffer.from(marker), marker === 'DDDDDDD' ? frame.indexOf('D'.repeat(47)) + 40 : 0);
      expect(at).toBeGreaterThan(0);
      frame.set(bad, at);
    }
    const expected = goString(Uint8Array.from(bad));
    const json = JSON.parse(JSON.stringify({ name: expected, l: expected, d: 'D'.repeat(40) + expected })) as Record<string, string>;
    const parsed = parseWatchFrame(frame) as {
      object: { metadata: { name: string; labels: Record<string, string> }; data: Record<string, string> };
    };
    expect(parsed.object.metadata.name).toBe(json.name);
    expect(parsed.object.metadata.labels.l).toBe(json.l);
    expect(parsed.object.data.d).toBe(json.d);
    expect(expected).not.toBe(Buffer.from(bad).toString('utf8')); // where Node alone differs
  });
});
