import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listBodyDecoder } from '../../../src/1-transport/http/listBody.ts';
import { isSkipped } from '../../../src/1-transport/lazyJson.ts';
import { decodeListBody, TooManyItems } from '../../../src/1-transport/protobuf/decode.ts';
import { encodeEnvelope } from '../../../packages/emulator/src/protobuf/encode.ts';

/**
 * A protobuf list page decoded as it arrives (issue #36, "Where a dropped object's time goes"): each item from the
 * chunk it arrived in, never the page joined into one buffer, and the same outcome as the whole body decoded at once,
 * value or error, however it is cut and whatever its bytes.
 */
type Keep = (s: { metadata: Record<string, unknown> }) => boolean;

type Detachable = ArrayBuffer & { transfer(length: number): ArrayBuffer };

/** Bytes in a memory of their own (never a slice of Node's pool), so that they can be freed as the transport frees reads. */
function ownMemory(bytes: Buffer): Buffer {
  const own = Buffer.from(new ArrayBuffer(bytes.length));
  bytes.copy(own);
  return own;
}

/**
 * The body fed to the decoder in pieces ending at `ends` (offsets), each in memory of its own, detached as soon as
 * the decoder says it is done with it (`chunksDone`), as the transport frees a socket read: a decoder that read a
 * chunk again afterwards would find it empty.
 */
function fed(bytes: Buffer, ends: readonly number[], keep: Keep | undefined, maxItems = Infinity): unknown {
  const decoder = listBodyDecoder(true, keep, true, maxItems);
  const chunks: Buffer[] = [];
  let freed = 0;
  let from = 0;
  for (const to of [...ends, bytes.length]) {
    const chunk = ownMemory(bytes.subarray(from, to));
    chunks.push(chunk);
    decoder.chunk(chunk);
    for (const done = decoder.chunksDone!(); freed < done; freed++) (chunks[freed]!.buffer as Detachable).transfer(0);
    from = to;
  }
  decoder.end();
  return decoder.value();
}

function inPieces(bytes: Buffer, cuts: readonly number[], keep: Keep | undefined, maxItems = Infinity): unknown {
  return fed(
    bytes,
    [...new Set(cuts.map((f) => Math.floor(f * bytes.length)))].sort((a, b) => a - b),
    keep,
    maxItems,
  );
}

/** The body in reads of `size` bytes. */
function inReads(bytes: Buffer, size: number, keep: Keep | undefined, maxItems = Infinity): unknown {
  return fed(
    bytes,
    Array.from({ length: Math.ceil(bytes.length / size) - 1 }, (_, i) => (i + 1) * size),
    keep,
    maxItems,
  );
}

function outcome(f: () => unknown): string {
  try {
    const value = f() as { items?: unknown[] };
    return `ok:${JSON.stringify(value)}:${(value.items ?? []).map((i) => (isSkipped(i) ? 'd' : 'k')).join('')}`;
  } catch (error) {
    return `error:${(error as Error).constructor.name}:${(error as Error).message}`;
  }
}

const configMaps = (count: number, pad: number) =>
  Array.from({ length: count }, (_, i) => ({
    metadata: { name: `cm-${i}`, namespace: i % 2 ? 'a' : 'b', resourceVersion: String(10 + i) },
    data: { text: `é${'ü'.repeat(pad + (i % 7))}${i}` },
  }));
const listOf = (items: readonly unknown[]) =>
  encodeEnvelope({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '99', continue: 'c' }, items });
const keepOdd: Keep = (s) => Number(String(s.metadata.name).slice(3)) % 2 === 1;

afterEach(() => vi.restoreAllMocks());

/** The transport's cap on a page's items (its byte limit at 64 bytes an item, listPage.ts): none, or a few. */
const maxItemsArbitrary = fc.option(fc.integer({ min: 0, max: 12 }), { nil: Infinity });

/** The bytes after raw in a list body written by the emulator (typeMeta ends at `typeMetaEnd`, raw's length under 2^21). */
function trailerBytes(bytes: Buffer, typeMetaEnd: number): number {
  let at = typeMetaEnd + 1;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const b = bytes[at++]!;
    length += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  return bytes.length - (at + length);
}

describe('a protobuf list page decoded as it arrives', () => {
  it('property: cut anywhere, with bytes overwritten or cut off anywhere, the outcome is the whole body decoded at once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 200 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), fc.integer({ min: 0, max: 255 })), {
          maxLength: 2,
        }),
        fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
        fc.constantFrom<Keep | undefined>(undefined, keepOdd, () => false),
        maxItemsArbitrary,
        (count, pad, cuts, mutations, truncate, keep, maxItems) => {
          const body = Buffer.from(listOf(configMaps(count, pad)));
          for (const [where, byte] of mutations) body[Math.floor(where * body.length)] = byte;
          const bytes = truncate === undefined ? body : body.subarray(0, Math.floor(truncate * body.length));
          expect(outcome(() => inPieces(bytes, cuts, keep, maxItems))).toBe(
            outcome(() => decodeListBody(Buffer.from(bytes), keep, maxItems)),
          );
        },
      ),
      { numRuns: 400 },
    );
  });

  it('property: in many small reads, each freed once decoded, the outcome is the whole body decoded at once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 300 }),
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), fc.integer({ min: 0, max: 255 })), {
          maxLength: 3,
        }),
        fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
        fc.constantFrom<Keep | undefined>(undefined, keepOdd, () => false),
        maxItemsArbitrary,
        (count, pad, size, mutations, truncate, keep, maxItems) => {
          const body = Buffer.from(listOf(configMaps(count, pad)));
          for (const [where, byte] of mutations) body[Math.floor(where * body.length)] = byte;
          const bytes = truncate === undefined ? body : body.subarray(0, Math.floor(truncate * body.length));
          expect(outcome(() => inReads(bytes, size, keep, maxItems))).toBe(
            outcome(() => decodeListBody(Buffer.from(bytes), keep, maxItems)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a fault at every position (a byte overwritten, the body cut off there), in small reads: the outcome of the whole body', () => {
    const body = Buffer.from(listOf(configMaps(4, 60)));
    const streamed = new Set<string>();
    for (let at = 0; at < body.length; at++) {
      const cases = [0x00, 0x80, 0xff, (body[at]! + 1) & 0xff].map((byte) => {
        const mutated = Buffer.from(body);
        mutated[at] = byte;
        return mutated;
      });
      for (const bytes of [...cases, body.subarray(0, at)])
        for (const size of [5, 64]) {
          const got = outcome(() => inReads(bytes, size, keepOdd));
          expect(got).toBe(outcome(() => decodeListBody(Buffer.from(bytes), keepOdd)));
          streamed.add(got.slice(0, 5));
        }
    }
    expect(streamed).toEqual(new Set(['ok:{"', 'error']));
  });

  // A page of tiny items is charged a fixed heap cost an item (listBudget.ts, CHARGE_PER_ITEM): the transport gives the
  // decoder the items its limit allows, and the item past them stops the page as it arrives, before it is decoded.
  it('stops at the item past maxItems as it arrives: nothing after it decoded, the whole body decoded at once agrees', () => {
    const bytes = listOf(configMaps(50, 20));
    let decoded = 0; // `keep` is asked of each item decoded
    const decoder = listBodyDecoder(true, () => (decoded++, true), true, 3);
    let at = 0;
    for (; at < bytes.length && !decoder.pastMaxItems!(); at += 64) decoder.chunk(Buffer.from(bytes.subarray(at, at + 64)));
    expect(at, 'read when the item past the cap was met').toBeLessThan(bytes.length / 4);
    for (; at < bytes.length; at += 64) decoder.chunk(Buffer.from(bytes.subarray(at, at + 64)));
    decoder.end();
    // 3 items, not one more, however much of the page came after.
    expect(decoded).toBe(3);
    expect(() => decoder.value()).toThrow(TooManyItems);
    expect(() => decodeListBody(Buffer.from(bytes), undefined, 3)).toThrow('more than 3 items');
    expect((decodeListBody(Buffer.from(bytes), undefined, 50) as { items: unknown[] }).items).toHaveLength(50);
  });

  it("decides a body in a server's order as it arrives: its first reads are done with before it ends", () => {
    const bytes = listOf(configMaps(50, 200));
    const decoder = listBodyDecoder(true, keepOdd, true);
    const reads = Math.ceil(bytes.length / 1000);
    for (let i = 0; i < reads; i++) decoder.chunk(Buffer.from(bytes.subarray(i * 1000, (i + 1) * 1000)));
    expect(decoder.chunksDone!()).toBeGreaterThan(reads - 3);
    // Another order (raw before typeMeta) is kept whole until it ends, and decoded by decodeListBody.
    const typeMetaEnd = 6 + bytes[5]!;
    const rawEnd = bytes.length - trailerBytes(bytes, typeMetaEnd);
    const reordered = Buffer.concat([
      bytes.subarray(0, 4),
      bytes.subarray(typeMetaEnd, rawEnd),
      bytes.subarray(4, typeMetaEnd),
      bytes.subarray(rawEnd),
    ]);
    const other = listBodyDecoder(true, keepOdd, true);
    for (let i = 0; i < reads; i++) other.chunk(Buffer.from(reordered.subarray(i * 1000, (i + 1) * 1000)));
    expect(other.chunksDone!()).toBe(0);
    other.end();
    expect(outcome(() => other.value())).toBe(outcome(() => decodeListBody(Buffer.from(bytes), keepOdd)));
  });

  it('decodes each item in place or from a copy of its own bytes: never the page joined (a 3 MB page in 16 KiB chunks)', () => {
    const items = configMaps(1000, 1500);
    const bytes = listOf(items);
    expect(bytes.length).toBeGreaterThan(3_000_000);
    const sizes: number[] = [];
    const concat = Buffer.concat;
    vi.spyOn(Buffer, 'concat').mockImplementation((list, length) => {
      const result = concat(list, length);
      sizes.push(result.length);
      return result;
    });
    const allocUnsafe = Buffer.allocUnsafe;
    vi.spyOn(Buffer, 'allocUnsafe').mockImplementation((size) => {
      sizes.push(size);
      return allocUnsafe(size);
    });
    const chunks = Math.ceil(bytes.length / 16384);
    const cuts = Array.from({ length: chunks }, (_, i) => i / chunks);
    for (const keep of [undefined, keepOdd, () => false]) {
      const page = inPieces(bytes, cuts, keep) as { metadata: unknown; items: { metadata: Record<string, unknown>; data?: unknown }[] };
      expect(page.metadata).toEqual({ resourceVersion: '99', continue: 'c' });
      expect(page.items.map((i) => i.metadata.name)).toEqual(items.map((i) => i.metadata.name));
      expect(page.items.map((i) => i.metadata.resourceVersion)).toEqual(items.map((i) => i.metadata.resourceVersion));
      if (keep === undefined) expect(page.items.map((i) => i.data)).toEqual(items.map((i) => i.data));
    }
    expect(Math.max(0, ...sizes)).toBeLessThanOrEqual(16384 + 20);
  });
});
