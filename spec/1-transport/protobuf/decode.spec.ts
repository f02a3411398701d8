import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasUnparsedMembers, isSkipped } from '../../../src/1-transport/lazyJson.ts';
import { approximateBytes } from '../../../src/metrics/approximateBytes.ts';
import { stripManagedFields } from '../../../src/index.ts';
import { decodeListBody, decodeObjectBody, decodeWatchFrame, ProtobufError } from '../../../src/1-transport/protobuf/decode.ts';
import { FrameSplitter } from '../../../src/1-transport/protobuf/frames.ts';
import { begin, int64, release } from '../../../src/1-transport/protobuf/wire.ts';
import { encodeWatchFrame } from '../../../packages/emulator/src/protobuf/encode.ts';

/**
 * The transport's protobuf decoder (issue #36 step 2) over the recordings of a real kube-apiserver v1.20.2
 * (spec/fixtures/protobuf): each list decodes into exactly its JSON twin, lazily, and so does every watch frame;
 * a keep predicate drops objects to skeletons after reading their identity.
 */
const fixtures = join(import.meta.dirname, '../../fixtures/protobuf');
const bin = (name: string) => readFileSync(join(fixtures, `${name}.bin`));
const json = (name: string): Record<string, unknown> => JSON.parse(bin(name).toString('utf8')) as Record<string, unknown>;
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

function frames(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  new FrameSplitter(1 << 20).push(body, { frame: (f) => out.push(Buffer.from(f)), oversize: () => expect.fail('oversize') });
  return out;
}

describe('protobuf decoding over the recordings', () => {
  it.each([
    ['10a-list-pods-protobuf', '10b-list-pods-json-same-rv'],
    ['10a-list-configmaps-protobuf', '10b-list-configmaps-json-same-rv'],
  ])('decodes %s lazily into exactly its JSON twin %s', (protobuf, twin) => {
    const list = decodeListBody(bin(protobuf), undefined);
    // Lazy: data or spec is an accessor until read.
    const first = (list.items as Record<string, unknown>[])[0]!;
    expect(Object.getOwnPropertyDescriptor(first, 'data') ?? Object.getOwnPropertyDescriptor(first, 'spec')).toHaveProperty('get');
    expect(plain(list)).toStrictEqual(json(twin));
  });

  it("reads a page's ListMeta (continue, remainingItemCount)", () => {
    expect(decodeListBody(bin('10c-list-configmaps-limit2-page1-protobuf'), undefined).metadata).toMatchObject({
      continue: expect.any(String),
      remainingItemCount: 1,
    });
  });

  it('decodes a 404 Status body whole', () => {
    expect(decodeObjectBody(bin('10f-get-missing-protobuf'))).toMatchObject({
      kind: 'Status',
      code: 404,
      reason: 'NotFound',
      status: 'Failure',
    });
  });

  it('hands a Status read as a list body on whole (a 200 carrying a Status), for the transport to report as its error', () => {
    expect(decodeListBody(bin('10f-get-missing-protobuf'), undefined)).toMatchObject({ kind: 'Status', code: 404, status: 'Failure' });
  });

  it('drops the items a keep predicate rejects, to skeletons with their identity', () => {
    const list = decodeListBody(bin('10a-list-configmaps-protobuf'), (s) => s.metadata.name === 'cm-1');
    const items = list.items as Record<string, unknown>[];
    expect(items.map(isSkipped)).toEqual(items.map((i) => (i.metadata as { name: string }).name !== 'cm-1'));
    const dropped = items.find(isSkipped)!;
    expect(Object.keys(dropped)).toEqual(['metadata']);
    expect(Object.keys(dropped.metadata as object).sort()).toEqual(['name', 'namespace', 'resourceVersion']);
  });

  it('decodes every recorded watch frame into its JSON twin; an ERROR frame into its Status', () => {
    const recorded = frames(bin('11a-watch-configmaps-protobuf')).map((f) => decodeWatchFrame(f, undefined));
    expect(recorded.map((e) => e.type)).toContain('BOOKMARK');
    for (const event of recorded) expect(event.object).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    const [error] = frames(bin('11b-watch-rv1-too-old-410-protobuf')).map((f) => decodeWatchFrame(f, undefined));
    expect(error).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  it('keeps BOOKMARK and ERROR frames whatever the keep predicate says', () => {
    const events = frames(bin('11a-watch-configmaps-protobuf')).map((f) => decodeWatchFrame(f, () => false));
    for (const e of events) expect(isSkipped(e.object)).toBe(e.type !== 'BOOKMARK');
  });

  it('refuses a frame whose object has two metadata, for keep as for the object (Go would merge them: audit22)', () => {
    const field = (tag: number, body: number[] | string) => {
      const bytes = typeof body === 'string' ? [...Buffer.from(body)] : body;
      return [tag, bytes.length, ...bytes];
    };
    const meta = (name: string, namespace?: string) => [...field(0x0a, name), ...(namespace ? field(0x1a, namespace) : [])];
    const envelope = (raw: number[]) => [
      ...Buffer.from('k8s\0', 'latin1'),
      ...field(0x0a, [...field(0x0a, 'v1'), ...field(0x12, 'ConfigMap')]),
      ...field(0x12, raw),
    ];
    const frame = (raw: number[]) => Buffer.from([...field(0x0a, 'ADDED'), ...field(0x12, field(0x0a, envelope(raw)))]);
    const seen: unknown[] = [];
    const keep = (s: { metadata: Record<string, unknown> }) => (seen.push(s.metadata), s.metadata.namespace === 'a');
    for (const [first, second] of [
      [meta('x', 'a'), meta('y')],
      [meta('x', 'b'), meta('y', 'a')],
    ])
      for (const k of [keep, undefined])
        expect(() => decodeWatchFrame(frame([...field(0x0a, first!), ...field(0x0a, second!)]), k)).toThrow(
          /field metadata: a singular message twice at byte 43$/,
        );
    expect(seen).toEqual([]);
    // One metadata: read as ever.
    expect(decodeWatchFrame(frame(field(0x0a, meta('y', 'a'))), keep).object.metadata).toMatchObject({ name: 'y', namespace: 'a' });
  });

  it('reads an int32 field as Go does, its low 32 bits signed (int32(x)); an int64 whole', () => {
    const deployment = (replicas: number, generation: number) =>
      decodeWatchFrame(
        encodeWatchFrame('ADDED', {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'd', generation },
          spec: { replicas },
        }).subarray(4),
        undefined,
      ).object as { metadata: { generation: number }; spec: { replicas: number } };
    for (const [written, read] of [
      [3, 3],
      [-2, -2],
      [2 ** 31 - 1, 2 ** 31 - 1],
      [2 ** 31, -(2 ** 31)],
      [2 ** 32 + 5, 5],
      [2 ** 40 + 2 ** 31 + 7, -(2 ** 31) + 7],
    ]) {
      const object = deployment(written!, written!);
      expect(object.spec.replicas, `${written}`).toBe(read);
      expect(object.metadata.generation, `${written}`).toBe(written);
    }
    // An IntOrString's intVal is an int32 too.
    const surge = (maxSurge: number) =>
      (
        decodeWatchFrame(
          encodeWatchFrame('ADDED', {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'd' },
            spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge } } },
          }).subarray(4),
          undefined,
        ).object as { spec: { strategy: { rollingUpdate: { maxSurge: unknown } } } }
      ).spec.strategy.rollingUpdate.maxSurge;
    expect([surge(2), surge(-3), surge(2 ** 32 + 3), surge('25%' as unknown as number)]).toEqual([2, -3, 3, '25%']);
  });

  it('refuses a body without the k8s\\0 magic or of a kind the schema does not know', () => {
    expect(() => decodeListBody(Buffer.from('{"kind":"PodList"}'), undefined)).toThrow(ProtobufError);
    const crd = bin('10e-list-crds-protobuf');
    expect(() => decodeListBody(crd, undefined)).toThrow(/kind the schema does not know/);
  });

  it('says which members are unread, and measures them without decoding them (about their JSON size)', () => {
    const pods = decodeListBody(bin('10a-list-pods-protobuf'), undefined).items as Record<string, unknown>[];
    const twins = json('10b-list-pods-json-same-rv').items as Record<string, unknown>[];
    const pod = pods[0]!;
    expect(hasUnparsedMembers(pod)).toBe(true);
    const measured = approximateBytes(pod);
    expect(Object.getOwnPropertyDescriptor(pod, 'spec')).toHaveProperty('get'); // still unread
    expect(measured / approximateBytes(twins[0])).toBeGreaterThan(0.7);
    expect(measured / approximateBytes(twins[0])).toBeLessThan(1.3);
    JSON.stringify(pod);
    expect(hasUnparsedMembers(pod)).toBe(false);
  });

  it('stripManagedFields keeps unread members unread (the copy shares their bytes) and gives what JSON gives', () => {
    const pods = decodeListBody(bin('10a-list-pods-protobuf'), undefined).items as never[];
    const twins = json('10b-list-pods-json-same-rv').items as never[];
    const stripped = stripManagedFields(pods[0]!) as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(stripped, 'spec')).toHaveProperty('get');
    expect(Object.getOwnPropertyDescriptor(pods[0]!, 'spec')).toHaveProperty('get');
    expect(plain(stripped)).toStrictEqual(plain(stripManagedFields(twins[0]!)));
    expect(plain(pods[0])).toStrictEqual(twins[0]);
  });
});

describe('int64 values as JSON.parse reads them', () => {
  /** A varint of `n` as Go writes an int64 (two's complement in 10 bytes when negative). */
  function varintOf(n: bigint): Buffer {
    let u = n < 0n ? n + (1n << 64n) : n;
    const out: number[] = [];
    while (u >= 0x80n) {
      out.push(Number(u & 0x7fn) | 0x80);
      u >>= 7n;
    }
    out.push(Number(u));
    return Buffer.from(out);
  }

  it('property: any int64 (past 2^53 too) reads as the double JSON.parse gives for its decimal', () => {
    const int64s = fc.oneof(
      fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
      fc.bigInt({ min: 1n << 53n, max: 1n << 60n }),
      fc.bigInt({ min: -(1n << 53n), max: 1n << 53n }),
    );
    fc.assert(
      fc.property(int64s, (n) => {
        const bytes = varintOf(n);
        begin(bytes, 0);
        const value = release(int64(bytes.length));
        expect(value).toBe(JSON.parse(n.toString()));
      }),
      { numRuns: 5000 },
    );
    // One the running sum rounded otherwise (found by review): 3633440590173559042.
    const n = 3633440590173559042n;
    begin(varintOf(n), 0);
    expect(release(int64(varintOf(n).length))).toBe(JSON.parse(n.toString()));
  });
});
