import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../../src/0-model/errors.ts';
import { parseWatchFrame } from '../../../src/1-transport/http/decode.ts';
import { listBodyDecoder } from '../../../src/1-transport/http/listBody.ts';
import { decodeListBody, ProtobufError } from '../../../src/1-transport/protobuf/decode.ts';
import { FrameSplitter } from '../../../src/1-transport/protobuf/frames.ts';
import { encodeEnvelope, encodeWatchFrame } from '../../../packages/emulator/src/protobuf/encode.ts';

/**
 * Hostile protobuf (issue #36 step 2): every byte from the network may be hostile. A frame over the limit is refused
 * from its length, before any of it is buffered; truncated frames, garbage envelopes, wrong wire types, lengths past
 * their message, times out of range and FieldsV1 that is not JSON are each a clear `MalformedLine`, and an object
 * that is accepted never fails, nor differs, when its lazy members are read later.
 */
const fixtures = join(import.meta.dirname, '../../fixtures/protobuf');
const watchBody = readFileSync(join(fixtures, '11a-watch-configmaps-protobuf.bin'));

function split(body: Buffer, limit: number, chunk: number): { frames: Buffer[]; oversize: number[]; leftover: number } {
  const splitter = new FrameSplitter(limit);
  const frames: Buffer[] = [];
  const oversize: number[] = [];
  const sink = { frame: (f: Buffer) => frames.push(Buffer.from(f)), oversize: (n: number) => oversize.push(n) };
  for (let at = 0; at < body.length; at += chunk) splitter.push(body.subarray(at, at + chunk), sink);
  return { frames, oversize, leftover: splitter.leftoverBytes };
}

const recordedFrames = split(watchBody, 1 << 20, watchBody.length).frames;
const configMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', namespace: 'ns', resourceVersion: '7', creationTimestamp: '2026-11-27T05:00:00Z' },
  data: { a: '1' },
};
/** A frame without its 4-byte length. */
const frameOf = (type: string, object: Record<string, unknown>) => encodeWatchFrame(type, object).subarray(4);

function malformed(frame: Buffer): string {
  const parsed = parseWatchFrame(frame);
  expect(parsed).toBeInstanceOf(InformerError);
  expect((parsed as InformerError).reason).toBe('MalformedLine');
  return (parsed as InformerError).message;
}

describe('the frame splitter', () => {
  it.each([1, 3, 4, 5, 64, 1000])('gives the same frames whatever the chunks (%i bytes at a time)', (chunk) => {
    const { frames, oversize, leftover } = split(watchBody, 1 << 20, chunk);
    expect(frames).toEqual(recordedFrames);
    expect([oversize, leftover]).toEqual([[], 0]);
  });

  it('refuses a frame over the limit from its length alone, before buffering any of it, and reads nothing more', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(2_000_000, 0);
    const splitter = new FrameSplitter(1_000_000);
    const seen: string[] = [];
    const sink = { frame: () => seen.push('frame'), oversize: (n: number) => seen.push(`oversize ${n}`) };
    splitter.push(header, sink);
    expect(seen).toEqual(['oversize 2000000']);
    splitter.push(Buffer.concat([Buffer.alloc(1000), watchBody]), sink);
    expect([seen, splitter.leftoverBytes]).toEqual([['oversize 2000000'], 0]);
  });

  it('at its edge: a frame of exactly the limit is a frame, one byte more is oversize, whatever the chunks', () => {
    const framed = (n: number) => {
      const bytes = Buffer.alloc(4 + n, 0x61);
      bytes.writeUInt32BE(n, 0);
      return bytes;
    };
    for (const chunk of [1, 4, 5, 1000]) {
      const exact = split(framed(1000), 1000, chunk);
      expect([exact.frames.map((f) => f.length), exact.oversize, exact.leftover]).toEqual([[1000], [], 0]);
      const over = split(framed(1001), 1000, chunk);
      expect([over.frames, over.oversize, over.leftover]).toEqual([[], [1001], 0]);
    }
  });

  it('counts a frame cut short, its length included, so the end of the stream reports it', () => {
    expect(split(watchBody.subarray(0, watchBody.length - 1), 1 << 20, 100).leftover).toBe(recordedFrames.at(-1)!.length + 3);
    expect(split(watchBody.subarray(0, recordedFrames[0]!.length + 4 + 4), 1 << 20, 2).leftover).toBe(4);
    expect(split(watchBody.subarray(0, 2), 1 << 20, 1).leftover).toBe(2);
  });
});

describe('hostile frames, each a clear MalformedLine and no object', () => {
  it('a frame cut short', () => {
    const frame = frameOf('ADDED', configMap);
    for (const cut of [1, 5, 20, frame.length - 1])
      expect(malformed(frame.subarray(0, cut))).toMatch(/truncated|past the end|without an object|magic/);
  });

  it('a garbage envelope (no k8s\\0), an unknown kind, no object', () => {
    const frame = Buffer.from(frameOf('ADDED', configMap));
    const magic = frame.indexOf(Buffer.from('k8s\0', 'latin1'));
    const bad = Buffer.from(frame);
    bad[magic + 1] = 0x39;
    expect(malformed(bad)).toMatch(/no k8s\\0 magic/);
    const gadget = Buffer.from(frame);
    gadget.write('Gadget\0\0\0', gadget.indexOf(Buffer.from('ConfigMap')), 'latin1');
    expect(malformed(gadget)).toMatch(/kind the schema does not know/);
    expect(malformed(Buffer.from([0x0a, 0x05, ...Buffer.from('ADDED')]))).toMatch(/without an object/);
  });

  /** A watch frame built by hand (short fields: one-byte lengths): a ConfigMap whose raw is `raw`, its Unknown's other fields `after`. */
  const field = (tag: number, body: number[] | string) => {
    const bytes = typeof body === 'string' ? [...Buffer.from(body)] : body;
    return [tag, bytes.length, ...bytes];
  };
  const handFrame = (raw: number[], after: number[] = []) => {
    const envelope = [
      ...Buffer.from('k8s\0', 'latin1'),
      ...field(0x0a, [...field(0x0a, 'v1'), ...field(0x12, 'ConfigMap')]),
      ...field(0x12, raw),
      ...after,
    ];
    return Buffer.from([...field(0x0a, 'ADDED'), ...field(0x12, field(0x0a, envelope))]);
  };

  it('a varint past 64 bits (a 10th byte over 1, as Go refuses it); 64 bits are read', () => {
    // ObjectMeta.generation (field 7, a varint) in ten bytes.
    const generation = (last: number) => handFrame(field(0x0a, [...field(0x0a, 'x'), 0x38, ...Array<number>(9).fill(0xff), last]));
    for (const last of [0x02, 0x7f]) expect(malformed(generation(last))).toMatch(/varint overflows 64 bits/);
    // 2^64 - 1: -1 as an int64.
    expect(parseWatchFrame(generation(0x01))).toMatchObject({ object: { metadata: { name: 'x', generation: -1 } } });
  });

  it("an Unknown whose contentType is not protobuf's (a JSON raw read as protobuf), said so", () => {
    const raw = field(0x0a, field(0x0a, 'x'));
    expect(malformed(handFrame(raw, field(0x22, 'application/json')))).toMatch(/content type "application\/json", not protobuf/);
    for (const after of [[], field(0x22, ''), field(0x22, 'application/vnd.kubernetes.protobuf'), [...field(0x1a, ''), ...field(0x22, '')]])
      expect(parseWatchFrame(handFrame(raw, after))).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'x' } } });
  });

  it('a wrong wire type for a known field, a length past its message, a varint over 10 bytes', () => {
    const frame = Buffer.from(frameOf('ADDED', configMap));
    // ConfigMap.data (field 2, a map): its tag 0x12 made a varint (0x10).
    const dataTag = frame.lastIndexOf(0x12, frame.indexOf(Buffer.from('a')));
    const wrong = Buffer.from(frame);
    wrong[dataTag] = 0x10;
    expect(malformed(wrong)).toMatch(/wire type|truncated|past the end/);
    const long = Buffer.from(frame);
    long[1] = 0x7f; // the type's length
    expect(malformed(long)).toMatch(/past the end/);
    expect(malformed(Buffer.from([0x08, ...Array<number>(11).fill(0xff)]))).toMatch(/varint overflows 64 bits|truncated/);
  });

  it('a time out of range and FieldsV1 that is not JSON are refused on arrival, not when read', () => {
    const year10000 = Buffer.from(
      frameOf('ADDED', { ...configMap, metadata: { ...configMap.metadata, creationTimestamp: '9999-12-31T23:59:59Z' } }),
    );
    expect(parseWatchFrame(year10000)).not.toBeInstanceOf(InformerError);
    // Seconds of 9999-12-31T23:59:59Z are 253402300799; one more is out of RFC 3339's range.
    const seconds = Buffer.alloc(10);
    const encoded = (n: number) => {
      let at = 0;
      while (n >= 0x80) {
        seconds[at++] = (n % 128) | 0x80;
        n = Math.floor(n / 128);
      }
      seconds[at++] = n;
      return Buffer.from(seconds.subarray(0, at));
    };
    const at = year10000.indexOf(encoded(253_402_300_799));
    const beyond = Buffer.concat([
      year10000.subarray(0, at),
      encoded(253_402_300_800),
      year10000.subarray(at + encoded(253_402_300_799).length),
    ]);
    expect(malformed(beyond)).toMatch(/time out of range/);
    const managed = {
      ...configMap.metadata,
      managedFields: [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }],
    };
    const frame = Buffer.from(frameOf('ADDED', { ...configMap, metadata: managed }));
    const json = frame.indexOf(Buffer.from('{"f:data":{}}'));
    frame[json + 12] = 0x5d; // `}` made `]`
    expect(malformed(frame)).toMatch(/not JSON|not one JSON value/);
  });

  it('a packed list whose varint never ends is refused on arrival, not when its member is read', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns', resourceVersion: '1' },
      spec: { containers: [{ name: 'c', image: 'i' }], securityContext: { supplementalGroups: [5, 6] } },
    };
    const frame = Buffer.from(frameOf('ADDED', pod));
    expect(parseWatchFrame(frame)).not.toBeInstanceOf(InformerError);
    const at = frame.indexOf(Buffer.from([0x20, 0x05, 0x20, 0x06])); // supplementalGroups (4), unpacked
    expect(at).toBeGreaterThan(0);
    Buffer.from([0x22, 0x02, 0x80, 0x80]).copy(frame, at); // packed, 2 bytes: a varint that never ends
    expect(malformed(frame)).toMatch(/truncated varint/);
    Buffer.from([0x22, 0x02, 0x05, 0x06]).copy(frame, at); // packed, two whole varints: read as the list it is
    const parsed = parseWatchFrame(frame) as { object: { spec: { securityContext: { supplementalGroups: number[] } } } };
    expect(parsed.object.spec.securityContext.supplementalGroups).toEqual([5, 6]);
  });

  it('property: any frame, mutated anywhere, is a MalformedLine or an object whose every lazy member reads without error', () => {
    const frames = [frameOf('ADDED', configMap), ...recordedFrames.slice(0, 3)];
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: frames.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (which, edits) => {
          const frame = Buffer.from(frames[which]!);
          for (const [at, byte] of edits) frame[at % frame.length] = byte;
          const parsed = parseWatchFrame(frame);
          if (parsed instanceof InformerError) return parsed.reason === 'MalformedLine';
          // Every member read (JSON.stringify reads them all): never a throw.
          JSON.stringify(parsed);
          return true;
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('hostile list bodies', () => {
  it('a truncated or garbage list body is a ProtobufError (the transport reports MalformedLine), never a partial list', () => {
    const body = encodeEnvelope({
      apiVersion: 'v1',
      kind: 'ConfigMapList',
      metadata: { resourceVersion: '9' },
      items: [configMap, configMap],
    });
    for (const cut of [3, 10, body.length - 1]) {
      const decoder = listBodyDecoder(true, undefined, true);
      decoder.chunk(body.subarray(0, cut));
      decoder.end();
      expect(() => decoder.value()).toThrow(ProtobufError);
    }
    expect(() => decodeListBody(Buffer.from('{"kind":"ConfigMapList","items":[]}'), undefined)).toThrow(/magic/);
  });

  it('an empty list has items [] (as JSON\'s "items": null reads), and its ListMeta', () => {
    const body = encodeEnvelope({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '9' }, items: [] });
    expect(decodeListBody(body, undefined)).toEqual({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '9' }, items: [] });
  });
});
