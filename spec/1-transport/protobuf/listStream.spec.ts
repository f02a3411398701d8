import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listBodyDecoder } from '../../../src/1-transport/http/listBody.ts';
import { isSkipped } from '../../../src/1-transport/lazyJson.ts';
import { decodeListBody } from '../../../src/1-transport/protobuf/decode.ts';
import { encodeEnvelope } from '../../../packages/emulator/src/protobuf/encode.ts';

/**
 * A protobuf list page decoded as it arrives (issue #36, "Where a dropped object's time goes"): each item from the
 * chunk it arrived in, never the page joined into one buffer, and the same outcome as the whole body decoded at once,
 * value or error, however it is cut and whatever its bytes.
 */
type Keep = (s: { metadata: Record<string, unknown> }) => boolean;

function inPieces(bytes: Buffer, cuts: readonly number[], keep: Keep | undefined): unknown {
  const decoder = listBodyDecoder(true, keep, true);
  const at = [...new Set(cuts.map((f) => Math.floor(f * bytes.length)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...at, bytes.length]) {
    decoder.chunk(Buffer.from(bytes.subarray(from, to)));
    from = to;
  }
  decoder.end();
  return decoder.value();
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
        (count, pad, cuts, mutations, truncate, keep) => {
          const body = Buffer.from(listOf(configMaps(count, pad)));
          for (const [where, byte] of mutations) body[Math.floor(where * body.length)] = byte;
          const bytes = truncate === undefined ? body : body.subarray(0, Math.floor(truncate * body.length));
          expect(outcome(() => inPieces(bytes, cuts, keep))).toBe(outcome(() => decodeListBody(Buffer.from(bytes), keep)));
        },
      ),
      { numRuns: 400 },
    );
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
