// A gzip list page read by a sink that keeps no bytes (the protobuf list decoder): the inflater's output buffers
// (64 KiB of their own, body.ts `Reads`, encoding.ts `INFLATE_CHUNK`) and the compressed pieces it was given are
// freed (detached) as the page is read, not left to the collector (issue #36, "Gzip bodies freed as they are read");
// the page decodes to the same value as the whole body inflated and decoded at once, however the server cuts it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gunzip, gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { readBody } from '../../src/1-transport/http/body.ts';
import { decodeResponse, INFLATE_CHUNK } from '../../src/1-transport/http/encoding.ts';
import { listBodyDecoder } from '../../src/1-transport/http/listBody.ts';
import type { HttpResponse } from '../../src/1-transport/http2/response.ts';
import { isSkipped } from '../../src/1-transport/lazyJson.ts';
import { decodeListBody } from '../../src/1-transport/protobuf/decode.ts';
import { encodeEnvelope } from '../../packages/emulator/src/protobuf/encode.ts';

type Keep = (s: { metadata: Record<string, unknown> }) => boolean;
const keepOdd: Keep = (s) => Number(String(s.metadata.name).slice(3)) % 2 === 1;

/** Config maps whose text gzip shrinks little (a page of several inflater buffers from few items). */
const configMaps = (count: number, pad: number, seed: number) => {
  let x = seed + 1;
  const noise = (n: number) =>
    Array.from({ length: n }, () => String.fromCharCode(33 + ((x = (x * 1103515245 + 12345) & 0x7fffffff) % 90))).join('');
  return Array.from({ length: count }, (_, i) => ({
    metadata: { name: `cm-${i}`, namespace: i % 2 ? 'a' : 'b', resourceVersion: String(10 + i) },
    data: { text: `é${noise(pad + (i % 7))}${i}` },
  }));
};
const listOf = (items: readonly unknown[]) =>
  Buffer.from(encodeEnvelope({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '99' }, items }));

function outcome(f: () => unknown): string {
  try {
    const value = f() as { items?: unknown[] };
    return `ok:${JSON.stringify(value)}:${(value.items ?? []).map((i) => (isSkipped(i) ? 'd' : 'k')).join('')}`;
  } catch (error) {
    return `error:${(error as Error).constructor.name}:${(error as Error).message}`;
  }
}

/**
 * What the server sends next: a gzip body written in pieces of `size` bytes (or more: at most {@link MAX_WRITES}
 * pieces, so that a large body in tiny pieces stays quick on a loaded machine), each after the client's turn.
 */
const MAX_WRITES = 150;
let next: { body: Buffer; size: number } = { body: Buffer.alloc(0), size: 1 };
let server: http.Server;
let port = 0;
beforeAll(async () => {
  server = http.createServer((_request, response) => {
    const { body } = next;
    const size = Math.max(next.size, Math.ceil(body.length / MAX_WRITES));
    response.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf', 'content-encoding': 'gzip' });
    void (async () => {
      for (let at = 0; at < body.length; at += size) {
        response.write(body.subarray(at, at + size));
        await new Promise((resolve) => setImmediate(resolve));
      }
      response.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** The page read as the transport reads a protobuf list page; `onItem` hears of each object as it is decoded. */
function read(gzipped: Buffer, size: number, keep: Keep | undefined, onItem?: () => void): Promise<string> {
  next = { body: gzipped, size };
  const agent = new http.Agent({ keepAlive: false });
  return new Promise<string>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/page', agent }, (response) => {
        const decoded = decodeResponse(response as unknown as HttpResponse, 'list /page', 'list');
        if (decoded instanceof InformerError) return reject(decoded);
        const decoder = listBodyDecoder(true, keep && ((s) => (onItem?.(), keep(s))), true);
        const sink = {
          keepsNoBytes: true,
          chunk: (chunk: Buffer) => decoder.chunk(chunk),
          chunksDone: () => decoder.chunksDone?.() ?? 0,
          end: () => {
            decoder.end();
            resolve(outcome(() => decoder.value()));
          },
        };
        readBody(decoded, { maxBytes: 64 << 20, what: 'list /page', option: 'maxListBytes' }, sink, reject, 'list');
      })
      .on('error', reject);
  });
}

/** The inflater's output chunks and the compressed pieces it was given, for the duration of `f`. */
async function watched<T>(f: () => Promise<T>): Promise<{ value: T; inflated: Buffer[]; compressed: Buffer[] }> {
  const push = vi.spyOn(Gunzip.prototype, 'push');
  const write = vi.spyOn(Gunzip.prototype, 'write');
  try {
    const value = await f();
    const inflated = push.mock.calls.flatMap(([chunk]) => (Buffer.isBuffer(chunk) ? [chunk] : []));
    const compressed = write.mock.calls.flatMap(([chunk]) => (Buffer.isBuffer(chunk) ? [chunk] : []));
    return { value, inflated, compressed };
  } finally {
    push.mockRestore();
    write.mockRestore();
  }
}

const detached = (bytes: Buffer) => (bytes.buffer as ArrayBuffer & { detached: boolean }).detached;

describe('a gzip protobuf list page read by a sink that keeps no bytes', () => {
  it('property: in writes of any size, every inflater buffer and compressed piece freed, the value the whole body decodes to', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 6000 }),
        fc.constantFrom(1, 7, 100, 1000, 4096, 20_000, 70_000),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom<Keep | undefined>(undefined, keepOdd, () => false),
        fc.nat(),
        async (count, pad, size, level, keep, seed) => {
          const body = listOf(configMaps(count, pad, seed));
          const gzipped = gzipSync(body, { level });
          const { value, inflated, compressed } = await watched(() => read(gzipped, size, keep));
          expect(value).toBe(outcome(() => decodeListBody(gunzipSync(gzipped), keep)));
          // Every chunk the inflater made is a slice of an output buffer of its own, each of them freed by the end.
          const buffers = new Set(inflated.map((chunk) => chunk.buffer));
          expect([...buffers].every((b) => b.byteLength === 0 && (b as ArrayBuffer & { detached: boolean }).detached)).toBe(true);
          expect(buffers.size).toBe(Math.ceil(body.length / INFLATE_CHUNK));
          // So is every compressed piece it was given (the HTTP parser's copies), once it had read it.
          expect(compressed.length).toBeGreaterThan(0);
          expect(compressed.every(detached)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('frees each inflater buffer as soon as its objects are decoded, before the page ends', async () => {
    const body = listOf(configMaps(200, 4000, 7)); // ≈ 830 KB inflated: 13 output buffers
    const gzipped = gzipSync(body, { level: 1 });
    const push = vi.spyOn(Gunzip.prototype, 'push');
    const buffers = () => new Set(push.mock.calls.flatMap(([chunk]) => (Buffer.isBuffer(chunk) ? [chunk.buffer] : [])));
    const freed = () => [...buffers()].filter((b) => b.byteLength === 0).length;
    try {
      // Inflater buffers freed so far, seen as each object is decoded (the last one: before the page ends).
      const seen: number[] = [];
      const value = await read(gzipped, 16_384, keepOdd, () => seen.push(freed()));
      expect(value).toBe(outcome(() => decodeListBody(body, keepOdd)));
      expect(seen).toHaveLength(200);
      expect(buffers().size).toBe(Math.ceil(body.length / INFLATE_CHUNK));
      expect(seen.at(-1)!).toBeGreaterThanOrEqual(buffers().size - 2);
      expect(freed()).toBe(buffers().size);
    } finally {
      push.mockRestore();
    }
  });
});
