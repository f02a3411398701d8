/**
 * NestingGauge counts a JSON text's nesting read in pieces: a piece may end inside a string, and just after a
 * backslash there, so the next piece's first byte is escaped (a `"` there does not end the string). Its answer must
 * not depend on where the text is cut. (Today's decoder pushes a text whole; the class promises pieces.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, NestingGauge } from '../../src/1-transport/jsonScanner.ts';

function tooDeep(...pieces: (string | Buffer)[]): boolean {
  const gauge = new NestingGauge();
  for (const piece of pieces) gauge.push(Buffer.from(piece));
  return gauge.tooDeep;
}

const deep = '['.repeat(MAX_DEPTH + 1);

describe('NestingGauge read in pieces', () => {
  it('a piece ending after an odd number of backslashes in a string: the next quote is escaped', () => {
    expect(tooDeep(`{"a":"x\\`, `"${deep}"}`)).toBe(false);
    expect(tooDeep(`{"a":"x\\\\\\`, `"${deep}"}`)).toBe(false);
    expect(tooDeep(`{"a":"x\\`, `\\"${deep}`)).toBe(true); // `\\` then `"` ends the string
    expect(tooDeep(`{"a":"x\\\\`, `"${deep}`)).toBe(true); // an even run: the quote ends it
  });

  it('answers as for the whole text, wherever it is cut', () => {
    const texts = fc.oneof(
      fc.json({ depthSize: 'large' }),
      fc
        .tuple(fc.stringMatching(/^[\\"ab]{0,12}$/), fc.integer({ min: 0, max: 3 }))
        .map(([s, n]) => `{"k":"${s.replaceAll('"', '\\"')}\\\\${'\\'.repeat(n)}"${'['.repeat(MAX_DEPTH)}`),
    );
    fc.assert(
      fc.property(texts, fc.array(fc.nat(), { maxLength: 6 }), (text, cuts) => {
        const bytes = Buffer.from(text); // cut between bytes, as the network cuts
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const pieces = [0, ...at].map((from, i) => bytes.subarray(from, [...at, bytes.length][i]));
        expect(tooDeep(...pieces)).toBe(tooDeep(text));
      }),
    );
  });
});
