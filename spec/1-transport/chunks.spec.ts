/**
 * A peer that cuts its bytes into one-byte chunks (a chunked HTTP/1.1 body `1\r\nA\r\n…`, one-byte HTTP/2 DATA
 * frames, a plugin writing a byte at a time) costs what it sends, not a Buffer object per chunk: an unfinished
 * watch line or frame, and a list page kept for its decoder, are held at about their bytes. Before, each chunk was
 * kept as its own Buffer (~100 bytes of bookkeeping a byte: 400,000 one-byte chunks held ~40 MB).
 */
import { EventEmitter } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkGatherer, PendingBytes } from '../../src/1-transport/chunks.ts';
import { readBody } from '../../src/1-transport/http/body.ts';
import { BoundedText } from '../../src/1-transport/http/execPlugin.ts';
import { listBodyDecoder } from '../../src/1-transport/http/listBody.ts';
import type { HttpResponse } from '../../src/1-transport/http2/response.ts';
import { LineSplitter } from '../../src/1-transport/lineSplitter.ts';
import { FrameSplitter } from '../../src/1-transport/protobuf/frames.ts';
import { MiB, retainedBytes } from '../resilience/hostile/memory.ts';

const CHUNKS = 400_000;
/** What 400,000 one-byte chunks may hold: their bytes, the buffer's doubling, and slack for the measurement. */
const BOUND = 4 * MiB;
const ONE = Buffer.from('a');

describe('one-byte chunks cost their bytes', () => {
  it('an unfinished watch line', () => {
    const splitter = new LineSplitter();
    const lines: string[] = [];
    const sink = { line: (text: string) => lines.push(text), oversize: () => lines.push('oversize') };
    const before = retainedBytes();
    for (let i = 0; i < CHUNKS; i++) splitter.push(ONE, sink);
    expect(splitter.leftoverBytes).toBe(CHUNKS);
    expect(retainedBytes() - before).toBeLessThan(BOUND);
    splitter.push(Buffer.from('b\n'), sink);
    expect(lines).toEqual(['a'.repeat(CHUNKS) + 'b']);
  });

  it('an unfinished protobuf frame, its length cut too', () => {
    const splitter = new FrameSplitter(16 * MiB);
    const frames: Buffer[] = [];
    const sink = { frame: (bytes: Buffer) => frames.push(Buffer.from(bytes)), oversize: () => frames.push(Buffer.alloc(0)) };
    const head = Buffer.alloc(4);
    head.writeUInt32BE(CHUNKS + 1);
    for (const byte of head) splitter.push(Buffer.of(byte), sink);
    const before = retainedBytes();
    for (let i = 0; i < CHUNKS; i++) splitter.push(ONE, sink);
    expect(splitter.leftoverBytes).toBe(CHUNKS + 4);
    expect(retainedBytes() - before).toBeLessThan(BOUND);
    splitter.push(Buffer.from('b'), sink);
    expect(frames.map((f) => f.toString())).toEqual(['a'.repeat(CHUNKS) + 'b']);
  });

  it('a list page kept for its lazy decoder until the end', () => {
    const response = Object.assign(new EventEmitter(), {
      statusCode: 200,
      headers: {},
      complete: false,
      setTimeout: () => response,
      destroy: () => response,
      pause: () => response,
      resume: () => response,
    });
    const decoder = listBodyDecoder(true);
    const errors: unknown[] = [];
    const limit = { maxBytes: 64 * MiB, what: 'list', option: 'maxListBytes' };
    readBody(response as unknown as HttpResponse, limit, decoder, (error) => errors.push(error), 'list');
    const head = '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"';
    for (const byte of Buffer.from(head)) response.emit('data', Buffer.of(byte));
    const before = retainedBytes();
    for (let i = 0; i < CHUNKS; i++) response.emit('data', Buffer.from(ONE)); // a Buffer a chunk, as from a socket
    expect(retainedBytes() - before).toBeLessThan(BOUND);
    response.emit('data', Buffer.from('"}}]}'));
    response.complete = true;
    response.emit('close');
    expect(errors).toEqual([]);
    const list = decoder.value() as { items: { metadata: { name: string } }[] };
    expect(list.items.map((item) => item.metadata.name)).toEqual(['a'.repeat(CHUNKS)]);
  });

  it("an exec plugin's output written a byte at a time, up to its limit", () => {
    const out = new BoundedText(1 << 20);
    const before = retainedBytes();
    let refused = 0; // counted, not an expect() a byte: vitest's expect in this loop was most of the test's time
    for (let i = 0; i < CHUNKS; i++) if (!out.add(Buffer.from(ONE))) refused++; // a Buffer a read, as from a pipe
    expect(refused).toBe(0);
    expect(retainedBytes() - before).toBeLessThan(BOUND);
    expect(out.add(Buffer.alloc((1 << 20) - CHUNKS + 1, 0x62))).toBe(false); // one byte past: what fits is kept
    expect(out.text()).toBe('a'.repeat(CHUNKS) + 'b'.repeat((1 << 20) - CHUNKS));
  });
});

// What an unfinished line or frame costs once it is done or while it grows: PendingBytes grows by doubling but never
// past its maxBytes (a 12 MiB line would otherwise take a 16 MiB buffer), and lets a buffer over 64 KiB go on clear
// (an 8 MiB watch line would otherwise stay held for the stream's life). Measured as the suite measures memory.
describe('PendingBytes holds no more than it must', () => {
  it('filled to its maxBytes, it holds a buffer of maxBytes, not the next doubling', () => {
    const max = 12 * MiB;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const before = retainedBytes();
    const pending = new PendingBytes(max);
    for (let i = 0; i < max / chunk.length; i++) pending.append(chunk);
    expect(pending.length).toBe(max);
    expect(retainedBytes() - before).toBeLessThan(max + MiB);
  });

  it('a LineSplitter done with an 8 MiB line holds no buffer of its size', () => {
    const splitter = new LineSplitter(16 * MiB);
    const lines: number[] = [];
    const sink = { line: (text: string) => lines.push(text.length), oversize: () => lines.push(-1) };
    const before = retainedBytes();
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < (8 * MiB) / chunk.length; i++) splitter.push(chunk, sink);
    splitter.push(Buffer.from('\n'), sink);
    expect(lines).toEqual([8 * MiB]);
    expect(splitter.leftoverBytes).toBe(0);
    expect(retainedBytes() - before).toBeLessThan(MiB);
  });
});

describe('PendingBytes and ChunkGatherer keep the bytes as they came', () => {
  const pieces = fc.array(fc.uint8Array({ maxLength: 9000 }), { maxLength: 40 });

  it('PendingBytes: the bytes appended since the last clear, in order', () => {
    fc.assert(
      fc.property(pieces, fc.integer({ min: 0, max: 40 }), (arrays, clearAt) => {
        const pending = new PendingBytes(1 << 20);
        let expected: Buffer[] = [];
        arrays.forEach((bytes, i) => {
          if (i === clearAt) {
            pending.clear();
            expected = [];
          }
          pending.append(Buffer.from(bytes));
          expected.push(Buffer.from(bytes));
        });
        expect(pending.view().equals(Buffer.concat(expected))).toBe(true);
        expect(pending.length).toBe(Buffer.concat(expected).length);
      }),
    );
  });

  it('ChunkGatherer: every byte handed on once, in order; nothing handed on is written again; few small pieces', () => {
    fc.assert(
      fc.property(pieces, (arrays) => {
        const out: { bytes: Buffer; copy: Buffer }[] = [];
        const gatherer = new ChunkGatherer((bytes) => out.push({ bytes, copy: Buffer.from(bytes) }));
        for (const bytes of arrays) gatherer.push(Buffer.from(bytes));
        gatherer.flush();
        const all = Buffer.concat(arrays.map((a) => Buffer.from(a)));
        expect(Buffer.concat(out.map((o) => o.bytes)).equals(all)).toBe(true);
        for (const { bytes, copy } of out) expect(bytes.equals(copy)).toBe(true);
        // A piece under 4 KiB is handed on only before a large chunk or at the end: never two in a row.
        out.forEach((o, i) => {
          if (i > 0 && o.bytes.length < 4096) expect(out[i - 1]!.bytes.length).toBeGreaterThanOrEqual(4096);
        });
      }),
    );
  });
});
