import { StringDecoder } from 'node:string_decoder';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { listBodyDecoder } from '../../src/1-transport/http/listBody.ts';
import { isSkipped } from '../../src/1-transport/lazyJson.ts';
import { ConfigMap } from '../../src/index.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import { hostileServer, type Behaviour, type HostileServer } from '../resilience/hostile/server.ts';

/** `bytes` fed to a fresh decoder in pieces cut at `cuts` (fractions of its length), each piece overwritten once fed. */
function decodeInPieces(
  bytes: Buffer,
  cuts: readonly number[],
  lazy: boolean,
  keep?: (s: { metadata: Record<string, unknown> }) => boolean,
) {
  const decoder = listBodyDecoder(lazy, keep);
  const at = [...new Set(cuts.map((f) => Math.floor(f * bytes.length)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...at, bytes.length]) {
    decoder.chunk(Buffer.from(bytes.subarray(from, to)));
    from = to;
  }
  decoder.end();
  return decoder.value();
}

/** What a decoding gives: the value's JSON, or the error's message (JSON.parse's, for the position it reports). */
function outcome(f: () => unknown): string {
  try {
    return `ok:${JSON.stringify(f())}`;
  } catch (error) {
    return `error:${(error as Error).message}`;
  }
}

const item = fc.record({
  metadata: fc.record({ name: fc.string({ unit: 'binary', minLength: 1 }), namespace: fc.string() }),
  spec: fc.jsonValue(),
  data: fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' })),
});
/** List bodies, valid or damaged (cut short, one character changed), with non-ASCII text whose bytes a cut may split. */
const bodies = fc
  .tuple(fc.array(item, { maxLength: 4 }), fc.boolean(), fc.option(fc.nat(5000), { nil: undefined }))
  .map(([items, indent, damage]) => {
    const text = JSON.stringify(
      { kind: 'PodList', metadata: { resourceVersion: '7', continue: 'é' }, items },
      null,
      indent ? 1 : undefined,
    );
    if (damage === undefined) return text;
    const at = damage % text.length;
    return damage % 2 ? text.slice(0, at) : `${text.slice(0, at)}${'{}[],:"x\\\u00e9'[damage % 10]}${text.slice(at + 1)}`;
  });
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 10 });

describe('list bodies decoded as they arrive', () => {
  afterEach(() => vi.restoreAllMocks());

  it('property: eagerly, any body cut anywhere (a UTF-8 sequence included) gives what JSON.parse of the whole gives, errors included', () => {
    fc.assert(
      fc.property(bodies, cuts, (text, at) => {
        const bytes = Buffer.from(text);
        expect(outcome(() => decodeInPieces(bytes, at, false))).toBe(outcome(() => JSON.parse(bytes.toString('utf8'))));
      }),
      { numRuns: 1000 },
    );
  });

  it('property: lazily, the same value, and the same error as eagerly (a rejected body is parsed again to report it)', () => {
    fc.assert(
      fc.property(bodies, cuts, (text, at) => {
        const bytes = Buffer.from(text);
        expect(outcome(() => decodeInPieces(bytes, at, true))).toBe(outcome(() => JSON.parse(bytes.toString('utf8'))));
      }),
      { numRuns: 1000 },
    );
  });

  it('lazily with keep: rejected items come out as skeletons wherever the cuts fall', () => {
    const items = Array.from({ length: 40 }, (_, i) => ({
      metadata: { name: `pod-${i}`, namespace: 'ns' },
      spec: { i, pad: 'x'.repeat(i * 50) },
    }));
    const bytes = Buffer.from(JSON.stringify({ metadata: { resourceVersion: '3' }, items }));
    const keep = (s: { metadata: Record<string, unknown> }) => String(s.metadata.name).endsWith('7');
    fc.assert(
      fc.property(cuts, (at) => {
        const page = decodeInPieces(bytes, at, true, keep) as { items: Record<string, unknown>[] };
        expect(page.items.map((i) => isSkipped(i))).toEqual(items.map((i) => !i.metadata.name.endsWith('7')));
        expect(page.items.filter((i) => !isSkipped(i)).map((i) => JSON.stringify(i))).toEqual(
          items.filter((i) => i.metadata.name.endsWith('7')).map((i) => JSON.stringify(i)),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('lazily refuses an item nested past 10,000 containers in all (Go refuses the page), cut anywhere, kept or dropped; eagerly JSON.parse takes it (not counted)', () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    // The list, its items and the item: three levels; spec may nest 9,997 deep.
    const page = (depth: number) =>
      Buffer.from(`{"kind":"PodList","metadata":{},"items":[{"metadata":{"name":"a","namespace":"b"},"spec":${nested(depth)}}]}`);
    for (const cuts of [[], [0.3, 0.7]]) {
      for (const keep of [undefined, () => false]) {
        expect(isSkipped((decodeInPieces(page(9_997), cuts, true, keep) as { items: unknown[] }).items[0])).toBe(keep !== undefined);
        expect(() => decodeInPieces(page(9_998), cuts, true, keep)).toThrow(/deeper than 10000/);
      }
    }
    expect(decodeInPieces(page(9_998), [0.5], false)).toMatchObject({ kind: 'PodList' });
  });

  it('never decodes more than 64 KiB of a page to text at once, nor joins its bytes into one buffer (a 3 MB page in 16 KiB chunks)', () => {
    const items = Array.from({ length: 600 }, (_, i) => ({ metadata: { name: `pod-${i}` }, spec: { pad: 'é'.repeat(2500) } }));
    const bytes = Buffer.from(JSON.stringify({ metadata: { resourceVersion: '3' }, items }));
    expect(bytes.length).toBeGreaterThan(3_000_000);
    const decoded: number[] = [];
    const write = StringDecoder.prototype.write;
    vi.spyOn(StringDecoder.prototype, 'write').mockImplementation(function (this: StringDecoder, chunk: string | NodeJS.ArrayBufferView) {
      decoded.push((chunk as Buffer).length);
      return write.call(this, chunk as Buffer);
    });
    const concat = Buffer.concat;
    const joined: number[] = [];
    vi.spyOn(Buffer, 'concat').mockImplementation((list, length) => {
      const result = concat(list, length);
      joined.push(result.length);
      return result;
    });
    const chunks = Array.from({ length: Math.ceil(bytes.length / 16384) }, (_, i) => i / Math.ceil(bytes.length / 16384));
    for (const lazy of [false, true]) {
      const page = decodeInPieces(bytes, chunks, lazy) as { items: unknown[] };
      expect(JSON.parse(JSON.stringify(page))).toEqual({ metadata: { resourceVersion: '3' }, items });
    }
    expect(decoded.length).toBeGreaterThan(40);
    expect(Math.max(...decoded)).toBeLessThanOrEqual(64 * 1024 + 16384);
    expect(Math.max(...joined)).toBeLessThanOrEqual(64 * 1024 + 2 * 16384);
  });
});

describe('list pages read over HTTP in pieces', () => {
  /** ConfigMaps with non-ASCII text (2- and 4-byte UTF-8 sequences), `count` of them with `pad` characters each. */
  const configMaps = (count: number, pad: number) =>
    Array.from({ length: count }, (_, i) => ({
      metadata: { name: `cm-${i}`, namespace: 'default', resourceVersion: String(10 + i) },
      data: { text: `é🙂${'ü'.repeat(pad)}${i}` },
    }));
  /** A list answered in pieces of `piece` bytes, each written after the last has gone (so they arrive cut where they were cut). */
  const inPieces =
    (items: readonly unknown[], piece: number): Behaviour =>
    async (request, response) => {
      const body = Buffer.from(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '99' }, items }));
      response.writeHead(200, { 'Content-Type': 'application/json' });
      for (let at = 0; at < body.length; at += piece) {
        await request.write(body.subarray(at, at + piece));
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      response.end();
    };
  let server: HostileServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('decodes a page cut inside its characters, eagerly, lazily and with keepObject, as sent', async () => {
    const items = configMaps(20, 30);
    server = await hostileServer({ list: inPieces(items, 7) });
    const target = { resource: ConfigMap, namespace: 'default' } as const;
    for (const http of [{}, { lazyDecode: true }]) {
      const page = await firstValueFrom(httpListWatch(server.kc, target, http).list({}));
      expect(page.resourceVersion).toBe('99');
      expect(JSON.parse(JSON.stringify(page.items))).toEqual(items);
    }
    const keepObject = (s: { metadata: Readonly<Record<string, unknown>> }) => String(s.metadata.name).endsWith('3');
    const page = await firstValueFrom(httpListWatch(server.kc, target, { lazyDecode: true, keepObject }).list({}));
    expect(page.items.filter((item) => !isSkipped(item)).map((item) => JSON.stringify(item))).toEqual(
      items.filter((item) => item.metadata.name.endsWith('3')).map((item) => JSON.stringify(item)),
    );
  });

  it('decodes a page of more than 1 MB (what a page of 500 pods is) as sent, both ways', async () => {
    const items = configMaps(600, 1000);
    server = await hostileServer({ list: inPieces(items, 64 * 1024) });
    const target = { resource: ConfigMap, namespace: 'default' } as const;
    for (const http of [{}, { lazyDecode: true }]) {
      const page = await firstValueFrom(httpListWatch(server.kc, target, http).list({}));
      expect(server.written.list).toBeGreaterThan(1_200_000);
      expect(JSON.parse(JSON.stringify(page.items))).toEqual(items);
    }
  });
});
