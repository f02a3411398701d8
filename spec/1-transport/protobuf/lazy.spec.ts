import fc from 'fast-check';
import { inspect, isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { checkMessage } from '../../../src/1-transport/protobuf/check.ts';
import { decodeWatchFrame } from '../../../src/1-transport/protobuf/decode.ts';
import { decodeLazyInto, protobufWithMetadata, unreadProtobufBytes } from '../../../src/1-transport/protobuf/lazy.ts';
import { KINDS as SCHEMA_KINDS } from '../../../src/1-transport/protobuf/schema.generated.ts';
import { K, message, type Field, type Message } from '../../../src/1-transport/protobuf/schema.ts';
import { decodeInto } from '../../../src/1-transport/protobuf/values.ts';
import { begin, release, seek } from '../../../src/1-transport/protobuf/wire.ts';
import { encodeMessage, encodeWatchFrame } from '../../../packages/emulator/src/protobuf/encode.ts';
import { message as emulatorMessage } from '../../../packages/emulator/src/protobuf/schema.ts';
import { makePod } from '../../../bench/workload/pods.ts';
import { Generator, type Json } from './generated.ts';

/**
 * Issue #36: the lazy decode planned per message (lazy.ts: a table by tag, metadata's strings, times and maps of
 * strings read directly, each lazy object's source in a private field) gives, once every member is read, exactly what
 * the eager decode (values.ts's `decodeInto`) gives for the same bytes: over generated and mutated messages of every
 * kind and of ObjectMeta, and by example for every path of the plan (fields out of order or repeated, unknown fields,
 * tags over 32 bits, map entries without a key or a value, times at the edges of RFC 3339).
 */
const encode = (name: string, value: Json) => encodeMessage(emulatorMessage(name), value).done();

/** `bytes` decoded lazily as `name` (at the top, or as metadata with `top` false), or undefined if the walk refuses them. */
function lazily(bytes: Buffer, name: string, top = true): Record<string, unknown> | undefined {
  begin(bytes, 0);
  try {
    checkMessage(bytes.length, message(name));
  } catch {
    return undefined;
  } finally {
    release(undefined);
  }
  begin(bytes, 0);
  try {
    return decodeLazyInto({}, bytes.length, message(name), top);
  } finally {
    release(undefined);
  }
}

function eagerly(bytes: Buffer, name: string): Record<string, unknown> {
  begin(bytes, 0);
  try {
    return decodeInto({}, bytes.length, message(name));
  } finally {
    release(undefined);
  }
}

/** Lazy and eager agree (or the walk refused the bytes); throws with both when they do not. */
function agrees(bytes: Buffer, name: string, top = true): boolean {
  const lazy = lazily(bytes, name, top);
  if (lazy === undefined) return true;
  const eager = eagerly(bytes, name);
  // Deep equality reads every member (the lazy ones through their accessors); the text, the order of keys too: both
  // in JSON order (Go struct order), whatever order the wire gave the fields in.
  if (isDeepStrictEqual(lazy, eager) && JSON.stringify(lazy) === JSON.stringify(eager)) return true;
  throw new Error(`${name}: lazy ${JSON.stringify(lazy)}\neager ${JSON.stringify(eager)}\n(bytes ${bytes.toString('hex')})`);
}

const mutations = fc.oneof(
  fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }).map((edits) => (bytes: Buffer) => {
    const out = Buffer.from(bytes);
    if (out.length > 0) for (const [at, byte] of edits) out[at % out.length] = byte;
    return out;
  }),
  fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 6 })).map(([at, inserted]) => (bytes: Buffer) => {
    const cut = bytes.length === 0 ? 0 : at % bytes.length;
    return Buffer.concat([bytes.subarray(0, cut), inserted, bytes.subarray(cut)]);
  }),
  // Two messages one after the other: every field repeated (a later scalar wins, lists and maps grow; a singular message
  // twice is refused by the walk since audit22, see duplicate.spec.ts).
  fc.constant((bytes: Buffer) => Buffer.concat([bytes, bytes])),
);
const seeds = fc.integer({ min: 1, max: 2 ** 30 });
const KINDS = Object.keys(SCHEMA_KINDS);

/** Protobuf by hand: a tag (any varint, over 32 bits too) and a length-delimited or varint payload. */
function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}
const bytesField = (tag: number | bigint, payload: number[] | string) => {
  const body = typeof payload === 'string' ? [...Buffer.from(payload)] : payload;
  return [...varint(tag), ...varint(body.length), ...body];
};
const varintField = (tag: number, value: number | bigint) => [...varint(tag), ...varint(value)];
const time = (seconds: number | bigint, nanos = 0) => [
  ...varintField(0x08, BigInt.asUintN(64, BigInt(seconds))),
  ...(nanos ? varintField(0x10, nanos) : []),
];
/** ObjectMeta's tags (field number × 8 + wire type). */
const T = { name: 0x0a, namespace: 0x1a, uid: 0x2a, resourceVersion: 0x32, generation: 0x38, creation: 0x42, deletion: 0x4a, grace: 0x50 };
const T2 = { labels: 0x5a, annotations: 0x62, ownerReferences: 0x6a, finalizers: 0x72, managedFields: 0x8a };

describe('the planned lazy decode gives what the eager decode gives', () => {
  it('property: a generated message of every kind, at the top, all members read', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KINDS), seeds, (kind, seed) =>
        agrees(encode(kind, new Generator(seed).message(message(kind), 0)), kind),
      ),
      { numRuns: 400 },
    );
  });

  it('property: the same mutated (bytes overwritten, inserted, or the message twice), whatever the walk accepts', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KINDS), seeds, mutations, (kind, seed, mutate) =>
        agrees(mutate(encode(kind, new Generator(seed).message(message(kind), 0))), kind),
      ),
      { numRuns: 400 },
    );
  });

  it('property: ObjectMeta, generated and mutated, as metadata (every field, its lists and maps lazy)', () => {
    fc.assert(
      fc.property(seeds, fc.option(mutations), (seed, mutate) => {
        const bytes = encode('ObjectMeta', new Generator(seed).message(message('ObjectMeta'), 0));
        return agrees(mutate ? mutate(bytes) : bytes, 'ObjectMeta', false);
      }),
      { numRuns: 1500 },
    );
  });

  it('property: the bench workload’s pods, mutated', () => {
    fc.assert(
      fc.property(fc.nat({ max: 999 }), fc.nat({ max: 3 }), mutations, (index, revision, mutate) =>
        agrees(mutate(encode('Pod', makePod({ index, resourceVersion: index + 1, revision }) as Json)), 'Pod'),
      ),
      { numRuns: 1000 },
    );
  });

  it('every path of ObjectMeta’s plan, by example', () => {
    const cases: [string, number[]][] = [
      ['fields out of order', [...bytesField(T.uid, 'u-1'), ...bytesField(T.name, 'b'), ...bytesField(T.namespace, 'ns')]],
      ['a name, then an empty one (omitempty: the first stays)', [...bytesField(T.name, 'first'), ...bytesField(T.name, '')]],
      ['an empty name and resourceVersion alone', [...bytesField(T.name, ''), ...bytesField(T.resourceVersion, '')]],
      ['a name of 40 bytes, and one not UTF-8', [...bytesField(T.name, 'n'.repeat(40)), ...bytesField(T.uid, [0x61, 0xff, 0xe2, 0x82])]],
      ['a name tag over 32 bits (its low 32 bits are the name’s)', bytesField(0x1_0000_000an, 'long')],
      [
        'generation 0 (omitted) and a deletion grace of 0 (a pointer: written)',
        [...varintField(T.generation, 0), ...varintField(T.grace, 0)],
      ],
      [
        'unknown fields (16, a varint; 99, bytes) around a name',
        [...varintField(16 << 3, 5), ...bytesField(T.name, 'a'), ...bytesField((99 << 3) | 2, 'x')],
      ],
      ['a fixed64 and a fixed32 unknown field', [0xa1, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 0xa5, 0x08, 1, 2, 3, 4, ...bytesField(T.name, 'a')]],
      ['no creationTimestamp (null), and an empty one (null)', bytesField(T.creation, [])],
      ['times at the edges', [...bytesField(T.creation, time(-62_135_596_800)), ...bytesField(T.deletion, time(253_402_300_799))]],
      ['the epoch and before it', [...bytesField(T.creation, time(0)), ...bytesField(T.deletion, time(-1, 999_999_999))]],
      ['a time with an unknown field', bytesField(T.creation, [...time(1_700_000_000), ...varintField(3 << 3, 7)])],
      [
        'labels: an empty entry, one without a value, one without a key',
        [...bytesField(T2.labels, []), ...bytesField(T2.labels, bytesField(0x0a, 'k')), ...bytesField(T2.labels, bytesField(0x12, 'v'))],
      ],
      [
        'labels: a key given twice, a __proto__ key',
        [
          ...bytesField(T2.labels, [...bytesField(0x0a, 'a'), ...bytesField(0x12, '1')]),
          ...bytesField(T2.labels, [...bytesField(0x0a, 'a'), ...bytesField(0x12, '2')]),
          ...bytesField(T2.annotations, [...bytesField(0x0a, '__proto__'), ...bytesField(0x12, 'p')]),
        ],
      ],
      [
        'an entry’s tags over 32 bits, and an unknown field in it',
        bytesField(T2.labels, [
          ...bytesField(0x1_0000_000an, 'notkey'),
          ...bytesField(0x1_0000_0012n, 'value'),
          ...varintField(3 << 3, 1),
          ...bytesField(0x0a, 'key'),
        ]),
      ],
      [
        'ownerReferences and finalizers, twice each',
        [
          ...bytesField(T2.ownerReferences, [...bytesField(0x0a, 'ReplicaSet'), ...varintField(0x30, 1)]),
          ...bytesField(T2.finalizers, 'f/1'),
          ...bytesField(T2.ownerReferences, bytesField(0x1a, 'rs')),
          ...bytesField(T2.finalizers, ''),
        ],
      ],
      [
        'managedFields split by a field of 19 bytes (two spans of lazy bytes), the second span then parted by 2 bytes',
        [
          ...bytesField(T2.managedFields, bytesField(0x0a, 'kubectl')),
          ...bytesField(T.name, 'x'.repeat(17)),
          ...bytesField(T2.managedFields, [...bytesField(0x12, 'Update'), ...bytesField(0x22, time(5))]),
          ...bytesField(0x7a, ''),
          ...bytesField(T2.annotations, [...bytesField(0x0a, 'a'), ...bytesField(0x12, '1')]),
        ],
      ],
      [
        // As a server writes metadata: clusterName (15) empty between finalizers and managedFields, kept with the lazy bytes.
        'lazy members parted by a few bytes of other fields (clusterName, a name, a label, an unknown field): one span',
        [
          ...bytesField(T2.annotations, [...bytesField(0x0a, 'a'), ...bytesField(0x12, '1')]),
          ...bytesField(T.name, 'y'),
          ...bytesField(T2.ownerReferences, bytesField(0x1a, 'rs')),
          ...bytesField(T2.labels, [...bytesField(0x0a, 'k'), ...bytesField(0x12, 'v')]),
          ...bytesField(T2.finalizers, 'f/1'),
          ...bytesField(0x7a, ''),
          ...bytesField(T2.managedFields, bytesField(0x0a, 'kubectl')),
          ...bytesField(0x7a, 'cluster-1'),
          ...varintField(16 << 3, 5),
          ...bytesField(T2.managedFields, bytesField(0x0a, 'kubelet')),
          ...bytesField(T.name, 'x'.repeat(14)),
          ...bytesField(T2.annotations, [...bytesField(0x0a, 'b'), ...bytesField(0x12, '2')]),
        ],
      ],
      [
        'an empty managedFields entry, and managedFields as a tag over 32 bits',
        [...bytesField(T2.managedFields, []), ...bytesField(0x1_0000_008an, bytesField(0x0a, 'm'))],
      ],
    ];
    for (const [what, bytes] of cases) expect(agrees(Buffer.from(bytes), 'ObjectMeta', false), what).toBe(true);
    const decoded = lazily(
      Buffer.from([...bytesField(T.creation, time(-62_135_596_800)), ...bytesField(T.deletion, time(-1, 999_999_999))]),
      'ObjectMeta',
      false,
    )!;
    expect(decoded).toEqual({ creationTimestamp: '0001-01-01T00:00:00Z', deletionTimestamp: '1969-12-31T23:59:59Z' });
  });

  it('a top-level message by example: members out of order, a tag over 32 bits, an unknown field between; twice: refused', () => {
    const meta = (name: string) => bytesField(0x0a, bytesField(T.name, name));
    const spec = (node: string) => bytesField(0x12, bytesField((10 << 3) | 2, node));
    const cases: [string, number[]][] = [
      ['status, spec, then metadata', [...bytesField(0x1a, bytesField(0x0a, 'Running')), ...spec('n1'), ...meta('p')]],
      ['no member at all', []],
      ['spec as a tag over 32 bits', bytesField(0x1_0000_0012n, bytesField((10 << 3) | 2, 'n3'))],
    ];
    for (const [what, bytes] of cases) expect(agrees(Buffer.from(bytes), 'Pod'), what).toBe(true);
    // A singular message twice is refused by the walk (Go would merge the two: audit22), a tag over 32 bits too.
    const twice: [string, number[]][] = [
      ['spec twice, apart', [...spec('n1'), ...meta('p'), ...varintField(99 << 3, 1), ...spec('n2')]],
      ['metadata twice', [...meta('a'), ...meta('b')]],
      ['spec, then spec as a tag over 32 bits', [...spec('n1'), ...bytesField(0x1_0000_0012n, bytesField((10 << 3) | 2, 'n3'))]],
    ];
    for (const [what, bytes] of twice) expect(lazily(Buffer.from(bytes), 'Pod'), what).toBeUndefined();
  });
});

describe("MicroTime and Time text, cached by the seconds' slot", () => {
  it('property: any seconds in range, with slots shared (s and s + 1,024 alternately), as the Date gives it', () => {
    const rfc = (s: number) => new Date(s * 1000).toISOString().slice(0, 19);
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800, max: 253_402_300_799 - 2048 }), fc.nat({ max: 999_999_999 }), (s, nanos) => {
        for (const seconds of [s, s + 1024, s, s + 2048]) {
          const meta = lazily(Buffer.from(bytesField(T.creation, time(seconds, nanos))), 'ObjectMeta', false)!;
          expect(meta.creationTimestamp).toBe(`${rfc(seconds)}Z`);
          // An Event's eventTime is a MicroTime (field 10), read through the same cache.
          const event = eagerly(Buffer.from(bytesField((10 << 3) | 2, time(seconds, nanos))), 'Event');
          expect(event.eventTime).toBe(`${rfc(seconds)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("the calendar's edges by example (leap days, centuries, 400 years, before 1970), each second either side", () => {
    const rfc = (s: number) => `${new Date(s * 1000).toISOString().slice(0, 19)}Z`;
    const edges = [
      '0001-01-01T00:00:00Z',
      '0001-12-31T23:59:59Z',
      '0004-02-29T12:00:00Z',
      '0100-02-28T23:59:59Z',
      '0100-03-01T00:00:00Z',
      '0400-02-29T00:00:00Z',
      '0400-12-31T23:59:59Z',
      '1600-02-29T23:59:59Z',
      '1700-03-01T00:00:00Z',
      '1899-12-31T23:59:59Z',
      '1900-02-28T23:59:59Z',
      '1900-03-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
      '1970-01-01T00:00:00Z',
      '1972-02-29T00:00:00Z',
      '1999-12-31T23:59:59Z',
      '2000-02-29T23:59:59Z',
      '2000-03-01T00:00:00Z',
      '2024-02-29T06:07:08Z',
      '2100-02-28T23:59:59Z',
      '2100-03-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
    ];
    const seconds = edges.flatMap((text) => [-1, 0, 1].map((d) => Date.parse(text) / 1000 + d));
    // Four days around 2000's leap day and 1900's (not a leap year) every 61 s: every minute and hour's text.
    for (const around of [Date.parse('2000-02-28T00:00:00Z') / 1000, Date.parse('1900-02-27T00:00:00Z') / 1000])
      for (let s = around; s < around + 4 * 86_400; s += 61) seconds.push(s);
    for (const s of seconds.filter((s) => s >= -62_135_596_800 && s <= 253_402_300_799)) {
      const meta = lazily(Buffer.from(bytesField(T.creation, time(s))), 'ObjectMeta', false)!;
      expect(meta.creationTimestamp, String(s)).toBe(rfc(s));
    }
  });
});

describe("a lazy object's source is its own, and out of sight", () => {
  const frame = () => encodeWatchFrame('MODIFIED', makePod({ index: 7, resourceVersion: 8, revision: 1 })).subarray(4);

  it('has no key or symbol of its own beyond its members, and copies by spreading, structuredClone or JSON', () => {
    const { object } = decodeWatchFrame(frame(), undefined);
    const metadata = object.metadata as Record<string, unknown>;
    expect(Reflect.ownKeys(object)).toEqual(['kind', 'apiVersion', 'metadata', 'spec', 'status']);
    expect(Reflect.ownKeys(metadata)).toEqual(Object.keys(metadata));
    expect(Object.getOwnPropertySymbols(object)).toEqual([]);
    const expected = JSON.parse(JSON.stringify(makePod({ index: 7, resourceVersion: 8, revision: 1 }))) as unknown;
    expect(structuredClone(decodeWatchFrame(frame(), undefined).object)).toEqual(expected);
    expect({ ...decodeWatchFrame(frame(), undefined).object }).toEqual(expected);
  });

  it('measures its unread members until read, then not; a copy of its descriptors says what it lacks', () => {
    const { object } = decodeWatchFrame(frame(), undefined);
    const metadata = object.metadata as Record<string, unknown>;
    expect(unreadProtobufBytes(object, 'spec')).toBeGreaterThan(100);
    expect(unreadProtobufBytes(metadata, 'managedFields')).toBeGreaterThan(100);
    expect(unreadProtobufBytes(object, 'metadata')).toBeUndefined();
    void object.spec;
    expect(unreadProtobufBytes(object, 'spec')).toBeUndefined();
    expect(unreadProtobufBytes(object, 'status')).toBeGreaterThan(100);
    const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(object)) as Record<string, unknown>;
    expect(() => copy.status).toThrow(/read on a copy of its property descriptors/);
    expect(unreadProtobufBytes(copy, 'status')).toBeUndefined();
  });

  it('reads its members when frozen (kept aside, the same value on every read)', () => {
    const { object } = decodeWatchFrame(frame(), undefined);
    Object.freeze(object);
    const status = object.status;
    expect(status).toMatchObject({ phase: 'Running' });
    expect(object.status).toBe(status);
  });
});

/**
 * Fewer objects an event (docs/performance.md, "Protobuf: fewer objects an event"): metadata, the top object and maps of
 * strings made by a constructor of their own (room for their properties, no property array grown 3 at a time), a
 * list's first element as a literal (room for one, not 17), the members' sizes counted when first measured, not kept
 * per object. None of it may show: each object is a plain object, read the same, copied the same.
 */
describe('fewer objects an event, nothing to see', () => {
  const pod = () => makePod({ index: 11, resourceVersion: 12, revision: 2 });
  const frame = (object: Record<string, unknown> = pod()) => encodeWatchFrame('MODIFIED', object).subarray(4);
  const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

  it('the top object, its metadata and its maps are plain objects: prototype, constructor, inspect, copies, keys in order', () => {
    const { object } = decodeWatchFrame(frame(), undefined);
    const metadata = object.metadata as Record<string, Record<string, unknown>>;
    const expected = json(pod()) as Record<string, Record<string, unknown>>;
    for (const [what, value, plain] of [
      ['the object', object, expected],
      ['metadata', metadata, expected.metadata],
      ['labels', metadata.labels, expected.metadata!.labels],
      ['annotations', metadata.annotations, expected.metadata!.annotations],
    ] as const) {
      expect(Object.getPrototypeOf(value), what).toBe(Object.prototype);
      expect(value!.constructor, what).toBe(Object);
      expect(Object.prototype.toString.call(value), what).toBe('[object Object]');
      expect(Object.keys(value!), what).toEqual(
        // The server's JSON order: `kind` first (TypeMeta's order), metadata's in ObjectMeta's, a map's by key (as Go writes them).
        what === 'the object'
          ? ['kind', 'apiVersion', 'metadata', 'spec', 'status']
          : what === 'metadata'
            ? Object.keys(plain!)
            : Object.keys(plain!).sort(),
      );
      expect(inspect(value, { depth: 0 }), what).toMatch(/^\{/);
      expect(value, what).toStrictEqual(plain);
      expect(structuredClone(value), what).toStrictEqual(plain);
      expect({ ...(value as object) }, what).toStrictEqual({ ...(plain as object) });
      expect(json(value), what).toStrictEqual(plain);
    }
    // Read twice: the same value, the same object.
    expect(metadata.labels).toBe(metadata.labels);
    // What Node prints: a plain object's braces, no constructor's name.
    expect(inspect(metadata.labels)).toBe(inspect({ ...metadata.labels }));
    expect(inspect(metadata.annotations)).toBe(inspect({ ...metadata.annotations }));
    expect(inspect(metadata.labels)).not.toMatch(/^\w/);
  });

  it('maps of strings with escapes, UTF-8 and a __proto__ key, an empty map, and many keys, as JSON gives them', () => {
    const labels = { 'a"b': 'line\nbreak\t"quoted"\\', 'é/日本': 'ünï €𝄞', '': 'empty key', e: '' };
    const annotations = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, `v${i}`]));
    for (const metadata of [
      { name: 'p', labels, annotations },
      { name: 'p', labels: {}, annotations: {} },
      { name: 'p', annotations: JSON.parse('{"__proto__":"x","b":"y"}') as Record<string, string> },
    ]) {
      const object = { apiVersion: 'v1', kind: 'Pod', metadata };
      const decoded = decodeWatchFrame(frame(object), undefined).object;
      // As a server writes it: creationTimestamp always (null), maps by key (Go sorts them), empty ones dropped (omitempty).
      const { name, ...rest } = metadata;
      const expected = json({ name, creationTimestamp: null, ...rest }) as Record<string, unknown>;
      for (const map of ['labels', 'annotations']) {
        const entries = Object.entries((expected[map] as Record<string, string> | undefined) ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
        if (entries.length === 0) delete expected[map];
        else expected[map] = json(Object.fromEntries(entries));
      }
      expect(JSON.stringify(decoded.metadata)).toBe(JSON.stringify(expected));
      expect(decoded.metadata).toStrictEqual(expected);
      const maps = decoded.metadata as Record<string, object | undefined>;
      expect(Object.keys(maps.annotations ?? {})).toEqual(Object.keys((expected.annotations as object | undefined) ?? {}));
      if (maps.annotations) expect(Object.getPrototypeOf(maps.annotations)).toBe(Object.prototype);
    }
  });

  it("metadata's small members are decoded together on the first read of one; one replaced meanwhile is left alone", () => {
    const object = () => decodeWatchFrame(frame(pod()), undefined).object as { metadata: Record<string, unknown> };
    const expected = json(pod()) as { metadata: Record<string, unknown> };
    const { metadata } = object();
    for (const member of ['annotations', 'ownerReferences', 'managedFields'])
      expect(unreadProtobufBytes(metadata, member), member).toBeGreaterThan(0);
    expect(metadata.annotations).toStrictEqual(expected.metadata.annotations);
    // Read with it: ownerReferences (a data property now, the same value on every read); not managedFields.
    expect(unreadProtobufBytes(metadata, 'ownerReferences')).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(metadata, 'ownerReferences')).toHaveProperty('value', expected.metadata.ownerReferences);
    expect(unreadProtobufBytes(metadata, 'managedFields')).toBeGreaterThan(0);
    // A member defined anew, written, or read first: never written over by a later read of another.
    for (const replace of [
      (m: Record<string, unknown>) => Object.defineProperty(m, 'ownerReferences', { value: 'mine', enumerable: true, configurable: true }),
      (m: Record<string, unknown>) => (m.ownerReferences = 'mine'),
    ]) {
      const { metadata: m } = object();
      replace(m);
      expect(m.annotations).toStrictEqual(expected.metadata.annotations);
      expect(m.ownerReferences).toBe('mine');
    }
    const frozen = Object.freeze(object().metadata);
    expect(frozen.ownerReferences).toStrictEqual(expected.metadata.ownerReferences);
    expect(frozen.annotations).toStrictEqual(expected.metadata.annotations);
    expect(frozen.ownerReferences).toBe(frozen.ownerReferences);
    expect(frozen).toStrictEqual(expected.metadata);
  });

  it('a list holds its elements, one or several, given apart or packed', () => {
    const refs = (n: number) => Array.from({ length: n }, (_, i) => ({ apiVersion: 'v1', kind: 'K', name: `o${i}`, uid: `u${i}` }));
    for (const n of [1, 2, 3, 20]) {
      const object = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', ownerReferences: refs(n), finalizers: refs(n).map((r) => r.name) },
      };
      const { metadata } = decodeWatchFrame(frame(object), undefined).object as { metadata: Record<string, unknown[]> };
      expect(metadata.ownerReferences, `${n}`).toStrictEqual(refs(n));
      expect(metadata.finalizers, `${n}`).toStrictEqual(refs(n).map((r) => r.name));
      metadata.finalizers!.push('more');
      expect(metadata.finalizers).toHaveLength(n + 1);
    }
    // Scalars one by one, then packed, then one more: one list.
    const f: Field = {
      n: 1,
      json: 'xs',
      kind: K.int64,
      presence: 'omit',
      rep: true,
      map: false,
      inline: false,
      msg: undefined,
      rank: 0,
      rankEnd: 0,
    };
    const ints: Message = {
      name: 'Ints',
      byNumber: [undefined, f],
      fields: [f],
      inJsonOrder: [f],
      order: ['xs'],
      rank: new Map([['xs', 0]]),
      always: [],
      lists: ['xs'],
    };
    for (const [given, xs] of [
      [[...varintField(0x08, 1)], [1]],
      [
        [...varintField(0x08, 1), ...bytesField(0x0a, [2, 3]), ...varintField(0x08, 4)],
        [1, 2, 3, 4],
      ],
      [
        [...bytesField(0x0a, [5, 6]), ...varintField(0x08, 7)],
        [5, 6, 7],
      ],
    ] as const) {
      const bytes = Buffer.from(given);
      begin(bytes, 0);
      let target: Record<string, unknown> = {};
      try {
        target = decodeInto(target, bytes.length, ints);
      } finally {
        release(undefined);
      }
      expect(target).toStrictEqual({ xs });
    }
  });

  it('measures each unread member by its bytes (every occurrence, tag included), until read, written or copied away', () => {
    const spec = (node: string) => bytesField(0x12, bytesField((10 << 3) | 2, node));
    const status = bytesField(0x1a, bytesField(0x0a, 'Running'));
    // Spec after the others (a singular message once: a second one is refused, see 'a singular message twice').
    const bytes = Buffer.from([...bytesField(0x0a, bytesField(T.name, 'p')), ...status, ...spec('node-2')]);
    const decoded = () => lazily(bytes, 'Pod')!;
    const object = decoded();
    expect(unreadProtobufBytes(object, 'spec')).toBe(spec('node-2').length);
    expect(unreadProtobufBytes(object, 'status')).toBe(status.length);
    expect(unreadProtobufBytes(object, 'metadata')).toBeUndefined();
    // A copy with other metadata: its unread members the same sizes.
    const copy = protobufWithMetadata(object, { name: 'q' })!;
    expect(unreadProtobufBytes(copy, 'spec')).toBe(spec('node-2').length);
    expect(copy.status).toEqual({ phase: 'Running' });
    expect(unreadProtobufBytes(copy, 'status')).toBeUndefined();
    expect(unreadProtobufBytes(object, 'status')).toBe(status.length);
    // Read: not measured again; written: likewise; frozen and read: likewise.
    expect(object.spec).toMatchObject({ nodeName: 'node-2' });
    expect(unreadProtobufBytes(object, 'spec')).toBeUndefined();
    object.status = { phase: 'Gone' };
    expect(unreadProtobufBytes(object, 'status')).toBeUndefined();
    expect(protobufWithMetadata(object, {})).toEqual({ spec: object.spec, status: { phase: 'Gone' }, metadata: {} });
    const frozen = Object.freeze(decoded());
    expect(frozen.status).toEqual({ phase: 'Running' });
    expect(unreadProtobufBytes(frozen, 'status')).toBeUndefined();
    expect(unreadProtobufBytes(frozen, 'spec')).toBe(spec('node-2').length);
    // Metadata's members parted by other fields (clusterName, a name: kept with their bytes): each its own bytes only.
    const annotations = bytesField(T2.annotations, [...bytesField(0x0a, 'a'), ...bytesField(0x12, '1')]);
    const finalizers = bytesField(T2.finalizers, 'f/1');
    const managed = bytesField(T2.managedFields, bytesField(0x0a, 'kubectl'));
    const meta = Buffer.from([...annotations, ...bytesField(T.name, 'n'), ...finalizers, ...bytesField(0x7a, ''), ...managed]);
    const metadata = lazily(meta, 'ObjectMeta', false)!;
    expect(unreadProtobufBytes(metadata, 'annotations')).toBe(annotations.length);
    expect(unreadProtobufBytes(metadata, 'finalizers')).toBe(finalizers.length);
    expect(unreadProtobufBytes(metadata, 'managedFields')).toBe(managed.length);
    expect({ ...metadata }).toEqual({
      name: 'n',
      annotations: { a: '1' },
      finalizers: ['f/1'],
      managedFields: [{ manager: 'kubectl' }],
      creationTimestamp: null,
    });
  });

  it('a message with more members than the bits kept: those past the 31st decoded at once, every one the same', () => {
    const fields: Field[] = Array.from({ length: 34 }, (_, i) => ({
      n: i + 1,
      json: `m${i + 1}`,
      kind: K.string,
      presence: 'omit',
      rep: true,
      map: false,
      inline: false,
      msg: undefined,
      rank: i,
      rankEnd: i,
    }));
    const byNumber: (Field | undefined)[] = [];
    for (const f of fields) byNumber[f.n] = f;
    const order = fields.map((f) => f.json);
    const rank = new Map(order.map((json, i) => [json, i]));
    const wide: Message = { name: 'Wide', byNumber, fields, inJsonOrder: fields, order, rank, always: [], lists: order };
    const bytes = Buffer.from(fields.flatMap((f) => [...bytesField((f.n << 3) | 2, `v${f.n}`), ...bytesField((f.n << 3) | 2, 'w')]));
    begin(bytes, 0);
    let object: Record<string, unknown> = {};
    try {
      object = decodeLazyInto(object, bytes.length, wide);
    } finally {
      release(undefined);
    }
    for (const f of fields) {
      const unread = unreadProtobufBytes(object, f.json);
      const size = bytesField((f.n << 3) | 2, `v${f.n}`).length + bytesField((f.n << 3) | 2, 'w').length;
      if (f.n <= 31) expect(unread, f.json).toBe(size);
      else expect(unread, f.json).toBeUndefined();
    }
    // Read one by one: each read marks its own member only.
    for (const f of fields) {
      expect(object[f.json], f.json).toEqual([`v${f.n}`, 'w']);
      for (const g of fields.filter((g) => g.n > f.n && g.n <= 31)) expect(unreadProtobufBytes(object, g.json), g.json).toBeDefined();
    }
    expect(Object.keys(object)).toHaveLength(34);
  });
});
