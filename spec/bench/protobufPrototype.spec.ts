import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  decodeBody,
  decodeBodyLazy,
  decodeWatchEvent,
  peekNameNamespace,
  ProtobufError,
  splitFrames,
} from '../../bench/protobuf/decode.ts';
import { encodeEnvelope, encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';
import { makePod } from '../../bench/workload/pods.ts';

/**
 * The protobuf prototype of issue #36 (bench/protobuf), whose figures are in docs/performance.md ("Protobuf, step 1"):
 * the figures are of a correct decoder. Over the recordings of a real kube-apiserver v1.20.2 (spec/fixtures/protobuf,
 * copied from the shared kube-apiserver-v1.20-protobuf transcripts), it decodes each protobuf body into exactly its
 * JSON twin, and its encoder writes the server's bytes; over the bench workload's pods, the three decodings agree.
 */
const fixtures = join(import.meta.dirname, '../fixtures/protobuf');
const bin = (name: string) => readFileSync(join(fixtures, `${name}.bin`));
const json = (name: string): Record<string, unknown> => JSON.parse(bin(name).toString('utf8')) as Record<string, unknown>;
const transcript = (name: string): unknown => JSON.parse(readFileSync(join(fixtures, `${name}.json`), 'utf8'));
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

const TWINS = [
  ['10a-list-pods-protobuf', '10b-list-pods-json-same-rv'],
  ['10a-list-configmaps-protobuf', '10b-list-configmaps-json-same-rv'],
] as const;
const watchFrames = () => splitFrames(bin('11a-watch-configmaps-protobuf'));
const workloadPods = [0, 1, 4_321, 49_999].flatMap((index) =>
  [0, 3].map((revision) => makePod({ index, resourceVersion: index + 7, revision })),
);

describe('the protobuf prototype over the recordings', () => {
  it.each(TWINS)('decodes %s into exactly its JSON twin %s', (protobuf, twin) => {
    expect(decodeBody(bin(protobuf))).toStrictEqual(json(twin));
  });

  it.each(TWINS)('encodes the JSON twin of %s into its bytes, byte for byte', (protobuf, twin) => {
    expect(encodeEnvelope(json(twin)).equals(bin(protobuf))).toBe(true);
  });

  it.each(['10c-list-configmaps-limit2-page1-protobuf', '10d-list-pods-partialobjectmetadata-protobuf', '10f-get-missing-protobuf'])(
    're-encodes what it decodes from %s into the same bytes',
    (name) => {
      expect(encodeEnvelope(decodeBody(bin(name))).equals(bin(name))).toBe(true);
    },
  );

  it("reads a page's ListMeta (continue, remainingItemCount) and a 404 Status", () => {
    expect(decodeBody(bin('10c-list-configmaps-limit2-page1-protobuf')).metadata).toMatchObject({
      continue: expect.any(String),
      remainingItemCount: 1,
    });
    expect(decodeBody(bin('10f-get-missing-protobuf'))).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound', status: 'Failure' });
  });

  it('splits the watch into the recorded frames (ADDED, MODIFIED, DELETED, BOOKMARK), each re-encoded into its own bytes', () => {
    const recorded = (transcript('11a-watch-configmaps-protobuf') as { frames: { offset: number; length: number }[] }).frames;
    const frames = watchFrames();
    expect(frames.map((f) => f.length)).toEqual(recorded.map((f) => f.length));
    const events = frames.map((f) => decodeWatchEvent(f));
    const m = (n: number) => Array<string>(n).fill('MODIFIED:cm-1');
    const bookmark = 'BOOKMARK:undefined';
    expect(events.map((e) => `${e.type}:${(e.object.metadata as { name?: string }).name}`)).toEqual([
      'ADDED:cm-w',
      'MODIFIED:cm-w',
      'DELETED:cm-w',
      ...m(11),
      bookmark,
      ...m(2),
      bookmark,
      bookmark,
    ]);
    expect(events.at(-1)!.object).toStrictEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { resourceVersion: expect.any(String), creationTimestamp: null },
    });
    for (const [i, e] of events.entries()) expect(encodeWatchFrame(e.type, e.object).subarray(4).equals(frames[i]!)).toBe(true);
  });

  it('reads the 410 ERROR frame as an Expired Status', () => {
    const [frame] = splitFrames(bin('11b-watch-rv1-too-old-410-protobuf'));
    expect(decodeWatchEvent(frame!)).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  it('decodes lazily into the same objects, and reads name and namespace alone', () => {
    for (const frame of watchFrames()) {
      const eager = decodeWatchEvent(frame);
      expect(plain(decodeWatchEvent(frame, 'lazy'))).toStrictEqual(plain(eager));
      expect(plain(decodeWatchEvent(frame, 'checked'))).toStrictEqual(plain(eager));
      const metadata = eager.object.metadata as { name?: string; namespace?: string };
      expect(peekNameNamespace(frame)).toEqual({ type: eager.type, name: metadata.name ?? '', namespace: metadata.namespace ?? '' });
    }
    expect(plain(decodeBodyLazy(bin('10f-get-missing-protobuf')))).toStrictEqual(decodeBody(bin('10f-get-missing-protobuf')));
  });
});

describe('the protobuf prototype over the bench workload', () => {
  it('decodes every pod eagerly into exactly the JSON object it was encoded from', () => {
    for (const pod of workloadPods) {
      const frame = encodeWatchFrame('MODIFIED', pod).subarray(4);
      expect(decodeWatchEvent(frame)).toStrictEqual({ type: 'MODIFIED', object: pod });
    }
  });

  it('decodes lazily: metadata now (managedFields, spec and status unread), the whole pod on reading', () => {
    for (const pod of workloadPods) {
      const { object } = decodeWatchEvent(encodeWatchFrame('ADDED', pod).subarray(4), 'lazy');
      const podMetadata = pod.metadata as Record<string, unknown>;
      const metadata = object.metadata as Record<string, unknown>;
      const unread = (o: object, key: string) => typeof Object.getOwnPropertyDescriptor(o, key)?.get === 'function';
      expect([unread(object, 'spec'), unread(object, 'status'), unread(metadata, 'managedFields'), unread(metadata, 'name')]).toEqual([
        true,
        true,
        true,
        false,
      ]);
      expect(metadata.name).toBe(podMetadata.name);
      expect(object.spec).toStrictEqual(pod.spec);
      expect(unread(object, 'spec')).toBe(false);
      expect(plain(object)).toStrictEqual(pod);
    }
  });

  it('reads name and namespace alone, as a sharded informer deciding to drop an object', () => {
    for (const pod of workloadPods) {
      const { name, namespace } = pod.metadata as { name: string; namespace: string };
      expect(peekNameNamespace(encodeWatchFrame('DELETED', pod).subarray(4))).toEqual({ type: 'DELETED', name, namespace });
    }
  });

  it('is 0.6 to 0.7 times the JSON line in bytes', () => {
    for (const pod of workloadPods) {
      const ratio = encodeWatchFrame('MODIFIED', pod).length / Buffer.byteLength(JSON.stringify({ type: 'MODIFIED', object: pod }) + '\n');
      expect(ratio).toBeGreaterThan(0.6);
      expect(ratio).toBeLessThan(0.7);
    }
  });
});

describe('the protobuf prototype over hostile bytes', () => {
  const frame = encodeWatchFrame('MODIFIED', workloadPods[0]!);

  it('skips fields it does not know, of every wire type', () => {
    const unknown = Buffer.from([
      ...[0x98, 0x3e, 0x05], // field 999, varint
      ...[0x99, 0x3e, 1, 2, 3, 4, 5, 6, 7, 8], // fixed64
      ...[0x9a, 0x3e, 0x02, 0x41, 0x42], // length-delimited
      ...[0x9d, 0x3e, 1, 2, 3, 4], // fixed32
    ]);
    const event = Buffer.concat([frame.subarray(4), unknown]);
    expect(decodeWatchEvent(event)).toStrictEqual(decodeWatchEvent(frame.subarray(4)));
  });

  it('throws a ProtobufError, never a wrong object, on every truncation of a frame', () => {
    const event = frame.subarray(4);
    for (let cut = 1; cut < event.length; cut += 7) {
      for (const decode of [(b: Buffer) => decodeWatchEvent(b), (b: Buffer) => decodeWatchEvent(b, 'checked'), peekNameNamespace]) {
        let result: unknown;
        try {
          result = plain(decode(event.subarray(0, cut)));
        } catch (error) {
          expect(error).toBeInstanceOf(ProtobufError);
          continue;
        }
        // A cut between whole fields of the WatchEvent leaves a shorter event: never one with a different object.
        expect(result).not.toEqual(expect.objectContaining({ object: expect.anything() }));
      }
    }
  });

  it('checks every length against its enclosing message before reading it', () => {
    // WatchEvent{type "ADDED", object: RawExtension of 1,000 bytes} with 3 bytes of it.
    const event = Buffer.from([0x0a, 0x05, ...Buffer.from('ADDED'), 0x12, 0xe8, 0x07, 0x0a, 0xe5, 0x07]);
    for (const decode of [(b: Buffer) => decodeWatchEvent(b), (b: Buffer) => decodeWatchEvent(b, 'lazy'), peekNameNamespace])
      expect(() => decode(event)).toThrow(/length 1000 past the end of its message \(3 bytes left\)/);
  });

  it('fills what encoding/json emits for absent fields: a zero Pod is the JSON of a zero Pod', () => {
    // k8s\0 + Unknown{typeMeta{v1, Pod}, raw: an empty Pod message}: the fields gogo-protobuf always writes are missing.
    const typeMeta = [0x0a, 0x02, ...Buffer.from('v1'), 0x12, 0x03, ...Buffer.from('Pod')];
    const body = Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, typeMeta.length, ...typeMeta, 0x12, 0x00]);
    const zero = { apiVersion: 'v1', kind: 'Pod', metadata: { creationTimestamp: null }, spec: { containers: null }, status: {} };
    expect(decodeBody(body)).toStrictEqual(zero);
  });

  /** An ADDED frame (without its length) of a Pod whose message holds `metadata` (ObjectMeta's bytes) and `spec`. */
  const podEvent = (metadata: number[], spec: number[]) => {
    const pod = [0x0a, metadata.length, ...metadata, 0x12, spec.length, ...spec];
    const typeMeta = [0x0a, 0x02, ...Buffer.from('v1'), 0x12, 0x03, ...Buffer.from('Pod')];
    const unknown = [0x0a, typeMeta.length, ...typeMeta, 0x12, pod.length, ...pod];
    const raw = [0x6b, 0x38, 0x73, 0x00, ...unknown];
    return Buffer.from([0x0a, 0x05, ...Buffer.from('ADDED'), 0x12, raw.length + 2, 0x0a, raw.length, ...raw]);
  };
  const nameX = [0x0a, 0x01, 0x78]; // name "x"

  it('lazily, finds a bad member when it is read; checked, on arrival (the never-a-wrong-object rule of step 2)', () => {
    const badSpecs = [
      [0x0a, 0x05, 0x01], // volumes: 5 bytes announced, 1 there
      [0x08, 0x01], // volumes as a varint
    ];
    for (const spec of badSpecs) {
      const event = podEvent(nameX, spec);
      const lazy = decodeWatchEvent(event, 'lazy').object;
      expect((lazy.metadata as { name: string }).name).toBe('x');
      expect(() => lazy.spec).toThrow(ProtobufError);
      expect(() => decodeWatchEvent(event, 'checked')).toThrow(ProtobufError);
      expect(() => decodeWatchEvent(event)).toThrow(ProtobufError);
    }
  });

  it("reads values by the transport's rules: a time RFC 3339 cannot write is a ProtobufError in every mode", () => {
    // metadata.creationTimestamp (field 8) of 2^40 seconds, past 9999-12-31.
    const event = podEvent([...nameX, 0x42, 0x07, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20], []);
    for (const mode of ['eager', 'lazy', 'checked'] as const)
      expect(() => decodeWatchEvent(event, mode)).toThrow(/a time out of range \(1099511627776 s\)/);
  });

  it('checks a frame length before allocating it, and a kind it has no schema for', () => {
    const huge = Buffer.from([0x7f, 0xff, 0xff, 0xff, 0x0a]);
    expect(() => splitFrames(huge)).toThrow(/over the limit/);
    expect(() => splitFrames(Buffer.concat([frame, frame.subarray(0, 10)]))).toThrow(/truncated frame/);
    expect(() => decodeBody(bin('10e-list-crds-protobuf'))).toThrow(ProtobufError);
    expect(() => decodeBody(Buffer.from('{"kind":"PodList"}'))).toThrow(/magic/);
  });
});
