import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LineSplitter } from '../../src/pipeline.ts';

type Out = string; // `line:<text>` or `oversize` (the bytes seen when it passed the limit depend on the chunks)

/** An oversize report: the bytes it gives are past the limit. */
const oversizeOf = (max: number | undefined) => (bytes: number) => {
  expect(bytes).toBeGreaterThan(max ?? 16 * 1024 * 1024);
  return 'oversize';
};

/** Feeds chunks to a splitter; returns what it reported, in order. */
function feed(chunks: readonly Buffer[], max?: number, splitter = new LineSplitter(max)): Out[] {
  const out: Out[] = [];
  const report = oversizeOf(max);
  const sink = { line: (text: string) => out.push(`line:${text}`), oversize: (bytes: number) => out.push(report(bytes)) };
  for (const chunk of chunks) splitter.push(chunk, sink);
  return out;
}

/** The same through a bytes sink: each line decoded by the test, not the splitter. */
function feedBytes(chunks: readonly Buffer[], max?: number): Out[] {
  const out: Out[] = [];
  const splitter = new LineSplitter(max);
  const report = oversizeOf(max);
  const sink = {
    lineBytes: (line: Buffer) => out.push(`line:${line.toString('utf8')}`),
    oversize: (bytes: number) => out.push(report(bytes)),
  };
  for (const chunk of chunks) splitter.push(chunk, sink);
  return out;
}

/** Cuts a buffer at the given (sorted, deduplicated) offsets. */
function cut(bytes: Buffer, at: readonly number[]): Buffer[] {
  const points = [...new Set(at.map((p) => Math.max(0, Math.min(bytes.length, p))))].sort((x, y) => x - y);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const p of points) {
    chunks.push(bytes.subarray(start, p));
    start = p;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

/** What a correct splitter reports for these lines (each followed by '\n'): empty lines are skipped. */
function expected(lines: readonly string[], max = Infinity): Out[] {
  return lines.flatMap((line) => {
    const bytes = Buffer.byteLength(line, 'utf8');
    if (bytes > max) return ['oversize'];
    return line === '' ? [] : [`line:${line}`];
  });
}

const text = (lines: readonly string[]) => Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');

const lineArb = fc.string({ unit: fc.constantFrom('a', 'b', '{', '"', ' ', 'é', '日', '本', '😀', '\u0000', '\r'), maxLength: 12 });

describe('LineSplitter', () => {
  it('splits lines, skipping empty ones', () => {
    expect(feed([Buffer.from('{"a":1}\n\n{"b":2}\n')])).toEqual(['line:{"a":1}', 'line:{"b":2}']);
  });

  it('keeps an unterminated line until its newline arrives (leftoverBytes counts it)', () => {
    const splitter = new LineSplitter();
    expect(feed([Buffer.from('abc')], undefined, splitter)).toEqual([]);
    expect(splitter.leftoverBytes).toBe(3);
    expect(feed([Buffer.from('def\ngh')], undefined, splitter)).toEqual(['line:abcdef']);
    expect(splitter.leftoverBytes).toBe(2);
    splitter.reset();
    expect(splitter.leftoverBytes).toBe(0);
    expect(feed([Buffer.from('x\n')], undefined, splitter)).toEqual(['line:x']);
  });

  it('a line split at every possible byte boundary comes out whole (multi-byte UTF-8 included)', () => {
    const lines = ['{"name":"é"}', '日本', 'emoji 😀 ok', 'plain'];
    const bytes = text(lines);
    for (let i = 0; i <= bytes.length; i++) {
      expect(feed(cut(bytes, [i]))).toEqual(expected(lines));
      for (let j = i; j <= Math.min(bytes.length, i + 5); j++) expect(feed(cut(bytes, [i, j]))).toEqual(expected(lines));
    }
  });

  it('a multi-byte character fed one byte at a time comes out whole', () => {
    for (const ch of ['é', '日本', '😀', '👩‍👩‍👧']) {
      const bytes = Buffer.from(`${ch}\n`, 'utf8');
      const oneByOne = Array.from(bytes, (b) => Buffer.from([b]));
      expect(feed(oneByOne)).toEqual([`line:${ch}`]);
    }
  });

  it('property: any lines, cut anywhere, come out as the lines', () => {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 8 }), fc.array(fc.nat(200), { maxLength: 12 }), (lines, cuts) => {
        expect(feed(cut(text(lines), cuts))).toEqual(expected(lines));
        expect(feedBytes(cut(text(lines), cuts))).toEqual(expected(lines));
      }),
      { numRuns: 400 },
    );
  });

  it('does not keep a reference to the caller’s chunk memory (it may be reused)', () => {
    const splitter = new LineSplitter();
    const chunk = Buffer.from('abc');
    feed([chunk], undefined, splitter);
    chunk.fill(0x7a); // the stream reuses the buffer
    expect(feed([Buffer.from('\n')], undefined, splitter)).toEqual(['line:abc']);
  });

  it('reports an oversize line once (with the bytes seen), skips it, and goes on with the next lines', () => {
    const max = 8;
    // in one chunk, split inside, and the limit exactly
    expect(feed([Buffer.from('short\n0123456789AB\nnext\n')], max)).toEqual(['line:short', 'oversize', 'line:next']);
    expect(feed([Buffer.from('0123'), Buffer.from('456789'), Buffer.from('AB\nok\n')], max)).toEqual(['oversize', 'line:ok']);
    expect(feed([Buffer.from('01234567\n012345678\n')], max)).toEqual(['line:01234567', 'oversize']);
    expect(feed([Buffer.from('0123'), Buffer.from('4567\n')], max)).toEqual(['line:01234567']);
  });

  it('property: lines around the limit, cut anywhere: the short ones come out, each long one is reported once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        fc.array(fc.string({ unit: fc.constantFrom('x', 'é', '😀'), maxLength: 12 }), { maxLength: 8 }),
        fc.array(fc.nat(150), { maxLength: 12 }),
        (max, lines, cuts) => {
          expect(feed(cut(text(lines), cuts), max)).toEqual(expected(lines, max));
          expect(feedBytes(cut(text(lines), cuts), max)).toEqual(expected(lines, max));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('memory stays bounded while an oversize line streams in', () => {
    const max = 1024;
    const splitter = new LineSplitter(max);
    const out: Out[] = [];
    const sink = { line: (t: string) => out.push(`line:${t}`), oversize: (n: number) => out.push(`oversize:${n}`) };
    // White-box: the bytes held for the partial line (a private field) never exceed the limit.
    const held = () => (splitter as unknown as { pending: { length: number } }).pending.length;
    const chunk = Buffer.alloc(300, 0x61);
    let peak = 0;
    for (let i = 0; i < 10_000; i++) {
      splitter.push(chunk, sink);
      peak = Math.max(peak, held());
    }
    splitter.push(Buffer.from('\n{"ok":true}\n'), sink);
    expect(peak).toBeLessThanOrEqual(max);
    expect(held()).toBe(0);
    expect(out).toEqual([`oversize:${1200}`, 'line:{"ok":true}']);
  });

  it('once a line passes the limit, what it held is let go, and the bytes it goes on with are counted, not kept', () => {
    const splitter = new LineSplitter(1024);
    const out: Out[] = [];
    const sink = { line: (t: string) => out.push(`line:${t}`), oversize: (n: number) => out.push(`oversize:${n}`) };
    // White-box, as above: the bytes held for the partial line.
    const held = () => (splitter as unknown as { pending: { length: number } }).pending.length;
    const chunk = Buffer.alloc(300, 0x61);
    for (let i = 0; i < 3; i++) splitter.push(chunk, sink);
    expect([held(), splitter.leftoverBytes, out]).toEqual([900, 900, []]);
    splitter.push(chunk, sink); // 1200 bytes: past the limit
    expect([held(), splitter.leftoverBytes, out]).toEqual([0, 1200, ['oversize:1200']]);
    splitter.push(chunk, sink); // dropped as it arrives, counted for a stream that ends mid-line
    expect([held(), splitter.leftoverBytes, out]).toEqual([0, 1500, ['oversize:1200']]);
    splitter.push(Buffer.from('\nok\n'), sink);
    expect([held(), splitter.leftoverBytes, out]).toEqual([0, 0, ['oversize:1200', 'line:ok']]);
  });

  it('reports a line as soon as it passes the limit, before (and without) its newline: a line that never ends is reported once', () => {
    const splitter = new LineSplitter(8);
    const out: Out[] = [];
    const sink = { line: (t: string) => out.push(`line:${t}`), oversize: (n: number) => out.push(`oversize:${n}`) };
    splitter.push(Buffer.from('{"a":1}\n0123'), sink);
    expect(out).toEqual(['line:{"a":1}']);
    splitter.push(Buffer.from('45678'), sink);
    expect(out).toEqual(['line:{"a":1}', 'oversize:9']);
    for (let i = 0; i < 1000; i++) splitter.push(Buffer.from('0123456789'), sink);
    expect(out).toEqual(['line:{"a":1}', 'oversize:9']);
    splitter.push(Buffer.from('end\nok\n'), sink);
    expect(out).toEqual(['line:{"a":1}', 'oversize:9', 'line:ok']);
  });
});
